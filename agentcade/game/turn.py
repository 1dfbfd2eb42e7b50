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
* ``end_session`` lets a game end itself (all questions answered).

The turn owns no I/O: replies go out through the ``emit`` callable it was given.
"""

from __future__ import annotations

from typing import Literal

from agentcade.protocol import CURRENT, MAX_TEXT, Directive, GameReply, ReplySink
from agentcade.speech import as_sentence, clip_text

__all__ = ["ReplySink", "Turn", "clip_text"]

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
        self.judged = False
        """Set by a judging tool once it has judged this input, so it is judged only once."""
        self._emit = emit
        self._protocol = protocol
        self._said: list[str] = []
        self._must: list[tuple[str, str]] = []
        self._directives: list[Directive] = []
        self._ended = kind == "end"
        self._finished = False

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

    @property
    def must_count(self) -> int:
        """How many ``must_say`` texts have been registered so far."""
        return len(self._must)

    def final_reply(self, text: str) -> GameReply:
        """The final reply: ``text`` plus every missing ``must_say`` fallback, and directives."""
        said = "".join(self._said)
        body = clip_text(text)
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
        )

    async def _send(self, reply: GameReply) -> None:
        if self._finished:
            raise RuntimeError("the turn has already sent its final reply")
        await self._emit(reply, False)

    def _take(self) -> list[Directive]:
        taken, self._directives = self._directives, []
        return taken
