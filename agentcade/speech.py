"""Speakable text: one home for ending a sentence and clipping to the protocol's limit.

A game's ``Turn`` and the spoken fallback (``agentcade.llm.spoken``) both join parts into
one reply and clip it to ``MAX_TEXT``; they use these, so the two read alike. Pure.
"""

from __future__ import annotations

from agentcade.protocol import MAX_TEXT

__all__ = ["MAX_INPUT", "SENTENCE_ENDS", "as_sentence", "clip_input", "clip_text"]

MAX_INPUT = 300
"""Longest line a family's words may be, in characters; longer ones are cut.

ASR gives a sentence or two (rarely 60 characters); a pasted page is not speech. The
bound keeps the cost of routing and judging one line small: both compare pinyin in
windows of the line, about 0.4 ms of CPU per character (tests/bench/bench_input.py).
"""

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
