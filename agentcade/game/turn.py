"""``Turn``: the context of one request (one user utterance) inside a game session.

A turn collects what the game says and does while it handles one ``GameInput``:

* ``say`` sends a sentence at once as an intermediate reply, so a slow step (drawing a
  picture, asking a second model) never leaves the family waiting in silence;
* directives recorded by ``self.robot`` wait in the turn until the next reply carries
  them, so they always run before the speech they came with (``flush`` sends them alone,
  which ``effects.draw`` uses between strokes);
* ``must_say`` guarantees that text which has to be heard verbatim (a riddle, an
  answer) is in what the turn says, whatever the model did: the runtime appends the
  fallback to the final reply when it is missing;
* ``reply`` makes a text the whole answer to the line: a hook or tool that has said it
  all (a judged guess: "比十还大一些，你还有四次机会。") ends the turn without asking the
  model again (``return_direct`` in other agent frameworks);
* ``end_session`` lets a game end itself (all questions answered);
* ``may_say_next`` names lines a coming turn may say (a verdict per expected guess): the
  host's voice synthesises their first words ahead, and says none of them unless a reply
  does;
* ``offer`` says this turn asked "要不要再来一个？": a bare "要" / "好" is then that round
  request (``judge.round_request``), answered by the game's ``on_round``, until the game
  moves or offers anew.

Required texts are spoken at once: after a hook or a tool, the runtime sends every new
``must_say`` text as an intermediate reply (``speak_required``) unless the turn already has
its whole answer, and the model's later words add to it: a sentence of the final text that
repeats a text spoken that way is dropped (``final_reply``).

The turn owns no I/O: replies go out through the ``emit`` callable it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from agentcade.core.judge import RoundRequest
from agentcade.core.protocol import CURRENT, MAX_TEXT, Directive, GameReply, ReplySink
from agentcade.core.speech import as_sentence, clip_text, split_sentences

__all__ = ["ReplySink", "Turn", "clip_text", "split_sentences"]


LONG_REQUIRED = 8
"""Required texts this long are cut out of a repeating sentence; shorter ones drop it."""


class Turn:
    """One request of a game session; see the module docstring."""

    def __init__(
        self,
        kind: Literal["start", "message", "end"],
        text: str,
        emit: ReplySink,
        *,
        protocol: str = CURRENT.name,
    ) -> None:
        self.kind = kind
        self.text = text
        self.judged = kind != "message"
        """Set by a hook or judging tool once it has judged this input, so it is judged only
        once. True from the start on ``start`` and ``end``: the player said nothing to judge."""
        self._emit = emit
        self._protocol = protocol
        self._said: list[str] = []
        self._must: list[tuple[str, str]] = []
        self._spoken_must: list[str] = []  # required texts already sent by speak_required
        self._must_spoken_upto = 0
        self._reply: str | None = None
        self._directives: list[Directive] = []
        self._ended = kind == "end"
        self._finished = False
        self._offered: RoundRequest | None = None
        self._offer_made = False
        self._ahead: list[str] = []

    # -- what the game author uses -------------------------------------------------

    @property
    def spoken(self) -> bool:
        """Whether this turn has already said something (through ``say``)."""
        return bool(self._said)

    @property
    def ended(self) -> bool:
        """Whether the session ends with this turn (``end`` request or ``end_session``)."""
        return self._ended

    async def say(self, text: str) -> None:
        """Say ``text`` now, as an intermediate reply, without waiting for the turn to end."""
        text = clip_text(str(text))
        if not text:
            return
        self._said.append(text)
        await self._send(GameReply(protocol=self._protocol, text=text, directives=self._take()))

    def must_say(self, text: str, fallback: str | None = None) -> None:
        """Require ``text`` verbatim in what this turn says; else append ``fallback`` (or text)."""
        text = str(text).strip()
        if text:
            self._must.append((text, (fallback or text).strip()))

    def may_say_next(self, texts: Sequence[str]) -> None:
        """Lines this game may say in a coming turn (the verdict of each guess it expects,
        "猜对了"): the host's voice synthesises their first words while the family thinks,
        so the verdict said sounds at once. Never said unless a later reply says them; the
        host neither shows them to a model nor logs them. A later call adds to them."""
        self._ahead += [text.strip() for text in map(str, texts) if text.strip()]

    def reply(self, text: str) -> None:
        """Make ``text`` the whole answer to this line: the model is not asked (again).

        From a hook (``on_start``/``on_message``/``on_end``) the model is not called at all;
        from a tool, the ReAct loop stops after that tool. Required texts (``must_say``) are
        still added when ``text`` lacks them. A later call replaces the text.
        """
        text = str(text).strip()
        if text:
            self._reply = text

    @property
    def replied(self) -> str | None:
        """The whole answer set with ``reply``, or None."""
        return self._reply

    def offer(self, request: RoundRequest | None = "next") -> None:
        """This turn offers another question ("next") or round ("again"): "要不要再来一个？".

        A bare yes ("要", "好的", "来吧") as a next line is then that request, and reaches
        ``on_round`` like "下一个" would. The offer stands over lines answered in words, and
        is forgotten once the game moves (a round request, a game tool that acted) or a
        turn offers anew; ``offer(None)`` withdraws it.
        """
        self._offered = request
        self._offer_made = True

    @property
    def offer_made(self) -> bool:
        """Whether this turn called ``offer`` (with a request, or None to withdraw one)."""
        return self._offer_made

    @property
    def offered(self) -> RoundRequest | None:
        """What this turn offered with ``offer``, or None."""
        return self._offered

    def end_session(self) -> None:
        """End the game session with this turn's final reply."""
        self._ended = True

    # -- DirectiveSink (used by the robot proxy) -------------------------------------

    def record(self, directive: Directive) -> None:
        """Queue a directive for the next reply of this turn."""
        self._directives.append(directive)

    async def flush(self) -> None:
        """Send queued directives now, in a directives-only intermediate reply."""
        if self._directives:
            await self._send(GameReply(protocol=self._protocol, directives=self._take()))

    # -- used by the runtime ---------------------------------------------------------

    def must_say_since(self, mark: int) -> list[str]:
        """What the model must say for ``must_say`` calls made after ``mark``.

        The fallback when it holds the text (a whole sentence reads better), else the text.
        """
        return [fb if text in fb else text for text, fb in self._must[mark:]]

    async def speak_required(self) -> list[str]:
        """Send every ``must_say`` registered since the last call, not yet heard, now.

        Each goes out as its own intermediate reply (the fallback sentence when it holds
        the text), so a required line (a riddle, a verdict, an answer) is heard without
        waiting for the model. Returns what was spoken.
        """
        new = self._must[self._must_spoken_upto :]
        self._must_spoken_upto = len(self._must)
        spoken: list[str] = []
        for text, fallback in new:
            if text in "".join(self._said) or text in (self._reply or ""):
                continue  # already heard, or in the whole answer (``reply``) to come
            line = fallback if text in fallback else text
            await self.say(line)
            self._spoken_must.append(text)
            spoken.append(line)
        return spoken

    @property
    def said(self) -> list[str]:
        """Every text this turn has sent as an intermediate reply, in order."""
        return list(self._said)

    def without_repeats(self, text: str) -> str:
        """``text`` without repeats of required texts already spoken at once.

        A long required text (a riddle, the rules) is cut out of the sentence that repeats
        it, keeping the model's own words around it; a sentence that repeats a short one
        (an answer word: "十五", "西瓜") is dropped whole, since what is left around a
        missing word does not read.
        """
        if not self._spoken_must:
            return text
        for must in self._spoken_must:  # long ones may span sentences: cut them first
            if len(must) >= LONG_REQUIRED:
                text = text.replace(must, "")
        kept: list[str] = []
        for sentence in split_sentences(text):
            if any(m in sentence for m in self._spoken_must if len(m) < LONG_REQUIRED):
                continue
            rest = sentence.strip().lstrip("，,、。！？!?；;：: ")
            if sum(1 for ch in rest if "\u4e00" <= ch <= "\u9fff" or ch.isalnum()) >= 2:
                kept.append(rest)
        return "".join(kept).strip()

    @property
    def must_count(self) -> int:
        """How many ``must_say`` texts have been registered so far."""
        return len(self._must)

    def final_reply(self, text: str) -> GameReply:
        """The final reply: ``text`` plus every missing ``must_say`` fallback, and directives."""
        said = "".join(self._said)
        body = clip_text(self.without_repeats(text))
        while True:  # clipping the body may cut a required text out of it: check again
            missing = [fb for must, fb in self._must if must not in said + body]
            addition = "".join(as_sentence(fb) for fb in dict.fromkeys(missing))
            joined = (as_sentence(body) if body and addition else body) + addition
            if len(joined) <= MAX_TEXT or not body:
                break
            body = clip_text(body, max(MAX_TEXT - len(addition) - 1, 0))
        final = clip_text(joined)
        self._finished = True
        return GameReply(
            protocol=self._protocol,
            text=final,
            directives=self._take(),
            session="ended" if self._ended else "active",
            ahead=[] if self._ended else self._ahead,
        )

    async def _send(self, reply: GameReply) -> None:
        if self._finished:
            raise RuntimeError("the turn has already sent its final reply")
        await self._emit(reply, final=False)

    def _take(self) -> list[Directive]:
        taken, self._directives = self._directives, []
        return taken
