"""The model's words in one request of a ``SkillAgent``: cleaned, policed, spoken as they come.

:class:`ModelSpeech` takes the model's text of one step (streamed sentence by sentence, or
whole) and speaks each sentence that passes: speakable (:func:`agentcade.core.speech.speakable`),
no repeat, no verdict or progress the game's code did not make (:mod:`agentcade.core.claims`),
within the turn's caps. :class:`Round` is what one request's ReAct loop has done so far
(the results code returned, the caps hit, what was said). The loop itself is
:class:`agentcade.game.skill_agent.SkillAgent`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcade.core.claims import may_claim, may_judge
from agentcade.core.speech import MODEL_WORDS_LIMIT, SentenceSplitter, sentence_key, speakable
from agentcade.core.trace import Trace
from agentcade.game.turn import Turn, split_sentences
from agentcade.llm import ChatModel, ModelReply, StreamingChatModel

__all__ = ["MAX_MODEL_REPLIES", "ModelSpeech", "Round", "starts_speech"]

MAX_MODEL_REPLIES = 4
"""Intermediate replies from the model per turn (``say`` and streamed sentences); past it,
streamed sentences wait for the final reply (clipped to 500 characters)."""


@dataclass
class Round:
    """What one request's ReAct loop has done so far."""

    messages: list[dict[str, Any]]
    results: list[Any] = field(default_factory=list)
    """Hook and tool results: what code said this turn (fallback speech, verdict sources)."""
    says: int = 0
    tool_calls: int = 0
    model_replies: int = 0
    capped: set[str] = field(default_factory=set)
    heard: set[str] = field(default_factory=set)
    """The model's sentences kept this turn (normal form): a repeat is dropped."""
    model_chars: int = 0
    """Characters of the model's own words kept this turn (``MODEL_WORDS_LIMIT``)."""
    acted: bool = False
    """A game tool ran without error this turn: the game may have moved on."""
    dropped: int = 0
    """The model's sentences dropped this turn as claims code did not make."""

    def cap(self, cap: str, limit: int, trace: Trace) -> None:
        """Record once per turn that ``cap`` was hit."""
        if cap not in self.capped:
            self.capped.add(cap)
            trace.record("cap", cap=cap, limit=limit)


def starts_speech(pending: str) -> bool:
    """Whether streamed text after a finished sentence is plainly more speech."""
    return any("\u4e00" <= ch <= "\u9fff" for ch in pending) and not any(
        ch in pending for ch in "{[<【`"
    )


class ModelSpeech:
    """The model's words in one step: cleaned, checked, and spoken sentence by sentence.

    With a ``StreamingChatModel`` each finished sentence goes out as an intermediate reply
    while the model generates (the last one is held back: it becomes the final reply, which
    must have text). Every sentence passes ``speakable`` (no markup, JSON, tool calls or
    speaker tags), loses repeats of required texts already spoken and of its own sentences,
    loses a verdict (猜对了, 得分) in a turn where nothing judged (``has_verdict``) and a
    claim of progress the game's code did not make this turn (``claims_progress``: "这是第
    三题" with no new question, "重新想一个数" with no new round), and stops at
    ``MODEL_WORDS_LIMIT`` characters. What code decided is spoken as code wrote it
    (``must_say``, ``turn.reply``); the model only adds to it.
    """

    def __init__(self, turn: Turn, round_: Round, *, trace: Trace) -> None:
        self._trace = trace
        self._turn = turn
        self._round = round_
        self._splitter = SentenceSplitter()
        self._held: str | None = None
        self._late: list[str] = []  # sentences past MAX_MODEL_REPLIES: for the final reply
        self.sent: list[str] = []

    async def ask(
        self, model: ChatModel, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> ModelReply:
        if isinstance(model, StreamingChatModel):
            return await model.complete_streaming(messages, tools, self._on_text)
        return await model.complete(messages, tools)

    def final_text(self, answer: ModelReply) -> str:
        """What the final reply says: the held and remaining sentences (or the whole text
        of an unstreamed answer), cleaned and checked."""
        if self._splitter_used:
            tail = [self._held or "", *self._late, self._clean(self._splitter.rest())]
        else:
            tail = [self._clean(s) for s in split_sentences(answer.text)] or [""]
        return "".join(t for t in tail if t).strip()

    async def flush(self) -> None:
        """Speak what is held and pending now (the text came with tool calls)."""
        for text in [self._held or "", *self._late, self._clean(self._splitter.rest())]:
            if text:
                await self._send(text, force=True)
        self._held, self._late = None, []

    _splitter_used = False

    async def _on_text(self, delta: str) -> None:
        self._splitter_used = True
        for sentence in self._splitter.feed(delta):
            clean = self._clean(sentence)
            if not clean:
                continue
            if self._held is not None:
                await self._send(self._held)
            self._held = clean
        # Speech follows the held sentence: it is not the last one, so it can go out now.
        if self._held is not None and starts_speech(self._splitter.pending):
            held, self._held = self._held, None
            await self._send(held)

    async def _send(self, text: str, *, force: bool = False) -> None:
        if self._round.model_replies >= MAX_MODEL_REPLIES:
            self._round.cap("model_replies", MAX_MODEL_REPLIES, self._trace)
            if not force:
                self._late.append(text)
            return
        self._round.model_replies += 1
        self.sent.append(text)
        await self._turn.say(text)

    def _clean(self, sentence: str) -> str:
        text = self._turn.without_repeats(speakable(sentence))
        if not text:
            return ""
        if not may_judge(text, self._round.results, kind=self._turn.kind, judged=self._turn.judged):
            self._trace.record("verdict_dropped", text=text)
            self._round.dropped += 1
            return ""
        if not may_claim(text, self._round.results, kind=self._turn.kind, acted=self._round.acted):
            self._trace.record("progress_dropped", text=text)
            self._round.dropped += 1
            return ""
        key = sentence_key(text)
        if key in self._round.heard:
            self._trace.record("repeat_dropped", text=text)
            return ""
        if self._round.model_chars + len(text) > MODEL_WORDS_LIMIT:
            self._round.cap("model_words", MODEL_WORDS_LIMIT, self._trace)
            return ""
        self._round.heard.add(key)
        self._round.model_chars += len(text)
        return text
