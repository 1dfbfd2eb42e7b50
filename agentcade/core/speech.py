"""Speakable text: one home for ending a sentence, clipping, hygiene and sentence cutting.

A game's ``Turn`` and the spoken fallback (``agentcade.llm.spoken``) both join parts into
one reply and clip it to ``MAX_TEXT``; they use these, so the two read alike. ``speakable``
removes what must never be spoken (markup, JSON, tool calls, speaker tags) and
``SentenceSplitter`` cuts a streamed reply into sentences, and ``split_sentences`` a whole
text by the same rule (the one sentence rule: a game's turn, its unstreamed replies and
the voice's TTS all cut here). Pure.
"""

from __future__ import annotations

import re
from typing import ClassVar

from agentcade.core.protocol import MAX_TEXT

__all__ = [
    "MAX_INPUT",
    "MODEL_WORDS_LIMIT",
    "SENTENCE_ENDS",
    "SentenceSplitter",
    "as_sentence",
    "clip_input",
    "clip_text",
    "model_words",
    "sentence_key",
    "speakable",
    "split_sentences",
]

MAX_INPUT = 300
"""Longest line a family's words may be, in characters; longer ones are cut.

ASR gives a sentence or two (rarely 60 characters); a pasted page is not speech. The
bound keeps the cost of routing and judging one line small: both compare pinyin in
windows of the line, about 0.4 ms of CPU per character (tests/bench/bench_input.py).
"""

MODEL_WORDS_LIMIT = 200
"""Characters of a model's own words spoken for one line; sentences past it are dropped.

A weak model repeated a 汤面 ten times (535 characters) and a joke's two lines four times in
one reply. Words code wrote (a game's ``must_say`` and ``turn.reply``) are not counted."""

SENTENCE_ENDS = "。！？!?；;…"
"""Where a clipped text may be cut: after a full sentence."""

_NO_STOP_AFTER = SENTENCE_ENDS + "，,.”\"'）)~～」"
"""Endings after which no "。" is added (a stop, a pause, a closing quote or bracket)."""


def clip_text(text: str, limit: int = MAX_TEXT) -> str:
    """Shorten speech to ``limit`` characters, preferring to cut after a sentence."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(ch) for ch in SENTENCE_ENDS)
    return head[: cut + 1] if cut >= limit // 2 else head


def clip_input(text: str) -> str:
    """The family's line cut to :data:`MAX_INPUT` characters (kept verbatim otherwise)."""
    return text if len(text) <= MAX_INPUT else text[:MAX_INPUT]


def as_sentence(text: str) -> str:
    """Make ``text`` end like a spoken sentence, so appended parts do not run together."""
    text = text.strip()
    if text and text[-1] not in _NO_STOP_AFTER:
        return text + "。"
    return text


# -- speech hygiene -------------------------------------------------------------------
#
# A model's text is read aloud as it is, and what is kept in memory is copied by the model
# into later replies (measured with a 1.5B model: `<tool_response>{"ok": true}</tool_response>`
# read out, then repeated in every later reply). So anything that looks like markup, a tool
# call, JSON, an event envelope or a speaker tag is removed before it is spoken or kept.

_BLOCK_TAGS = r"tool_call|tool_response|tools|function|function_call|think|result|json"
_TAG_BLOCK_RE = re.compile(rf"<\s*({_BLOCK_TAGS})\b[^>]*>.*?<\s*/\s*\1\s*>", re.I | re.S)
_OPEN_BLOCK_RE = re.compile(rf"<\s*({_BLOCK_TAGS})\b[^>]*>.*\Z", re.I | re.S)
_TAG_RE = re.compile(r"<\s*/?\s*[A-Za-z_][\w:-]*[^<>]*>")
_FENCE_RE = re.compile(r"```.*?(```|\Z)", re.S)
_SPEAKER_RE = re.compile(r"【[^】]{0,20}】|\[[^\]]{0,40}\]")
_CALL_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\s*\([^()]*\)")
_IDENT_RE = re.compile(r"\b[A-Za-z]+(?:_[A-Za-z0-9]+)+\b")
_MARKDOWN_RE = re.compile(r"\*\*|__|`|^\s*#{1,6}\s*|^\s*[-*•]\s+|^\s*\d+\.\s+", re.M)
_SPACE_RE = re.compile(r"[ \t\r\f\v]+")


def _drop_balanced(text: str, open_: str, close: str) -> str:
    """Remove every ``open_ … close`` group (nested too; an unclosed one to the end)."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == open_:
            depth += 1
        elif ch == close and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def speakable(text: str) -> str:
    """``text`` without what must never be spoken or remembered.

    Removed: tool-protocol blocks (``<tool_call>…</tool_call>``, ``<tools></tools>`` …) and
    any other tag, code fences, JSON objects and arrays (``{"event": …}``), speaker tags
    (``【猜数字】``), function-call text (``submit_guess(13)``), snake_case identifiers (tool
    and field names) and Markdown marks. What is left is joined with single spaces; it may
    be empty, and then the caller speaks what the tools produced instead.
    """
    text = _TAG_BLOCK_RE.sub("", text)
    text = _OPEN_BLOCK_RE.sub("", text)
    text = _FENCE_RE.sub("", text)
    text = _drop_balanced(text, "{", "}")
    text = _SPEAKER_RE.sub("", text)
    text = _TAG_RE.sub("", text)
    text = _CALL_RE.sub("", text)
    text = _IDENT_RE.sub("", text)
    text = _MARKDOWN_RE.sub("", text)
    lines = [_SPACE_RE.sub(" ", line).strip() for line in text.splitlines()]
    text = " ".join(line for line in lines if line)
    return text.strip(" ，,、：:")


def sentence_key(sentence: str) -> str:
    """What makes a sentence the same sentence again: its letters and digits, lowercased."""
    return "".join(ch for ch in sentence.lower() if ch.isalnum())


def model_words(text: str, limit: int = MODEL_WORDS_LIMIT) -> str:
    """A model's reply as it may be heard: each sentence once, up to ``limit`` characters.

    The streamed path of a game (``SkillAgent``) applies the same two rules sentence by
    sentence; this is the whole-text form, for the main agent's chat.
    """
    splitter = SentenceSplitter()
    kept: list[str] = []
    seen: set[str] = set()
    size = 0
    for sentence in [*splitter.feed(text), splitter.rest()]:
        key = sentence_key(sentence)
        if not key or key in seen:
            continue
        if size + len(sentence) > limit:
            break
        seen.add(key)
        kept.append(sentence)
        size += len(sentence)
    return "".join(kept).strip()


class SentenceSplitter:
    """Cut streamed text into finished sentences, so speech can start with the first.

    ``feed`` takes each delta and returns the sentences it finished; ``rest`` gives what
    is left at the end. A sentence ends at a ``SENTENCE_ENDS`` character (a run of them,
    and a closing quote or bracket right after, stay with it), but never inside an open
    ``{ [ < 【`` or a code fence: markup is held back whole, so ``speakable`` can remove it.
    Pure: text in, text out.
    """

    _OPENERS: ClassVar[dict[str, str]] = {"{": "}", "[": "]", "<": ">", "【": "】"}
    _CLOSE_AFTER = "”\"'）)」』"

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, delta: str) -> list[str]:
        """Add ``delta``; return the sentences it finished (raw: apply ``speakable``)."""
        self._buffer += delta
        done: list[str] = []
        while (cut := self._cut()) is not None:
            done.append(self._buffer[:cut])
            self._buffer = self._buffer[cut:]
        return done

    @property
    def pending(self) -> str:
        """The text after the last finished sentence, not taken yet."""
        return self._buffer

    def rest(self) -> str:
        """What is left after the last finished sentence; the splitter is empty after."""
        rest, self._buffer = self._buffer, ""
        return rest

    def _cut(self) -> int | None:
        text = self._buffer
        stack: list[str] = []
        fence = False
        i = 0
        while i < len(text):
            if text.startswith("```", i):
                fence = not fence
                i += 3
                continue
            ch = text[i]
            if fence:
                pass
            elif ch in self._OPENERS:
                stack.append(self._OPENERS[ch])
            elif stack and ch == stack[-1]:
                stack.pop()
            elif not stack and ch in SENTENCE_ENDS:
                end = i + 1
                while end < len(text) and text[end] in SENTENCE_ENDS + self._CLOSE_AFTER:
                    end += 1
                if end == len(text):  # the stop may continue ("！？", "…"): wait for more
                    return None
                return end
            i += 1
        return None


def split_sentences(text: str) -> list[str]:
    """The sentences of a whole ``text``, by :class:`SentenceSplitter`'s rule, unstripped.

    A sentence ends after a run of ``SENTENCE_ENDS`` (with a closing quote or bracket right
    after it), never inside markup; pieces with only whitespace are left out, so
    ``"".join`` of the result is ``text`` less blank pieces.
    """
    splitter = SentenceSplitter()
    parts = [*splitter.feed(text), splitter.rest()]
    return [part for part in parts if part.strip()]
