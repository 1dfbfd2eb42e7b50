"""The conversation with the current game: its requests, their reply streams and their end.

Theory of operation. ``GameConversation`` holds the current game (``Current``: a client, a
context id, the lifecycle of ``agentcade.core.lifecycle.current_game`` and the cancel
scopes of its requests in flight) and talks to it; the main agent decides *when* (which
game, what the line asks) and this module *how*.

* ``start`` ends the game that plays (its goodbye is heard in full, ``switch_grace``
  seconds at most), then opens a new context and sends ``start`` with the user's words;
  ``forward`` sends a line as ``message`` (while the game still works on the previous one
  it answers "我还在准备呢" at once; with no game it says so, ``NO_GAME``); ``end`` cancels any pending request and sends ``end``.
* Each request's replies are read by a background task (in the owner's nursery) and put on
  the output queue as they arrive. A request returns once its first reply was played; later
  ones play as they come. A final ``ended`` clears the current game, and the output queue
  resets the robot after the last sentence.
* Patience: when the game has not answered ``budgets.patience`` seconds after a line, "稍等"
  is said once (the owner's ``say_wait``) and the user's turn ends there: the next line is
  heard, so "结束游戏" said to a hanging game cancels its request and sends ``end`` at once.
* Game timeout: a game may stay ``budgets.game`` seconds (the guide's 210) without any
  reply, to a request or between its replies; then it is taken as not answering
  (``REMOTE_SLOW``). A2A's own reply timeout (``GameRemoteError`` kind ``timeout``) is the
  same setting and is told the same way.
* A remote game's text passes the speech hygiene (``speakable``) before it is played; a
  final reply left with nothing to say is replaced by ``REMOTE_SAID_NOTHING`` /
  ``REMOTE_CUT_SHORT`` (traced ``reply_fallback``), so every request ends with speech.
* At most ``MAX_INTERMEDIATE`` intermediate replies of one request are played; the rest are
  dropped (traced ``reply_cap`` once), the final reply always plays.
* Failures follow the design's table: a failed request is told (the owner's ``say``) and
  the conversation carries on; a failed ``start``/``end`` clears the game, a failed
  ``message`` keeps it.

* After a game: when it is cleared, ``finished`` keeps which game it was and the words of
  its last request (its goodbye, its summary) until another game is cleared: the main
  agent restarts it on "再来一局" and repeats them on "再说一遍" (issue 40).

What was asked of a game and what it answered are remembered by the owner (the main agent's
history): ``note(tool, arguments)`` when the family's line becomes a request (as the main
agent's tool call), and ``remember(text, game)`` gives what to run once a reply was played.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import trio

from agentcade.core.errors import GameRemoteError, RemoteErrorKind
from agentcade.core.host_settings import Budgets
from agentcade.core.lifecycle.current_game import CurrentEvent, CurrentGame, CurrentState
from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.speech import speakable
from agentcade.core.trace import NULL_TRACE, Trace, current_request_id, request_scope
from agentcade.game.client import GameClient, GameInfo, is_url
from agentcade.game.turn import clip_text
from agentcade.main.output import OutputQueue

__all__ = [
    "BUSY_TEXT",
    "MAX_INTERMEDIATE",
    "NO_GAME",
    "REMOTE_CUT_SHORT",
    "REMOTE_FAILED",
    "REMOTE_SAID_NOTHING",
    "REMOTE_SLOW",
    "SWITCH_GRACE",
    "Current",
    "Finished",
    "GameConversation",
]

log = logging.getLogger(__name__)

BUSY_TEXT = "我还在准备呢，稍等一下。"
NO_GAME = "现在没有在玩游戏。想玩的话，说“玩”加上游戏名就行。"
REMOTE_FAILED = "{name}那边出了点问题，没能回应。"
REMOTE_SLOW = "{name}太久没有回应，这一句先不等了。"
REMOTE_SAID_NOTHING = {
    "start": "{name}开始了。",
    "message": "{name}这一句没有回话，再说一遍试试吧。",
    "end": "{name}结束了。",
}
"""Said for a remote game's final reply with nothing speakable, when nothing else of the
request was (the communication design: every request ends with a speakable reply)."""
REMOTE_CUT_SHORT = "{name}的话没说完，你可以接着说。"
"""Said instead when the request's intermediate replies spoke but its final one did not."""
MAX_INTERMEDIATE = 30
"""Intermediate replies of one request that are played (a drawing is 12 strokes at most)."""
SWITCH_GRACE = 5.0
"""Seconds a game being replaced by another may take to answer its ``end``."""


@dataclass(frozen=True)
class Finished:
    """The game cleared last: its client, the words of its last request, and a serial that
    tells one clearing from the next."""

    client: GameClient
    words: tuple[str, ...]
    serial: int


@dataclass(eq=False)
class Current:
    """The current game: its lifecycle (``agentcade.core.lifecycle.current_game``) and the
    cancel scopes of its requests in flight."""

    client: GameClient
    context_id: str
    inflight: dict[str, trio.CancelScope] = field(default_factory=dict)
    life: CurrentGame = field(default_factory=CurrentGame)
    ended: trio.Event = field(default_factory=trio.Event)
    """The ``end`` request is over (all its replies queued, or it failed)."""
    words: list[str] = field(default_factory=list)
    """What the game said to its last request (``Finished.words``)."""

    @property
    def info(self) -> GameInfo:
        return self.client.info

    @property
    def state(self) -> CurrentState:
        return self.life.state

    @property
    def busy(self) -> bool:
        """Some request is in flight (an ``end``'s too): the agent is not idle."""
        return bool(self.inflight)

    @property
    def remote(self) -> bool:
        return is_url(self.info.location)

    def cancel(self) -> None:
        """Cancel every request in flight (their readers tell nothing more)."""
        for scope in list(self.inflight.values()):
            scope.cancel()


class GameConversation:
    """See the module docstring. Its reader tasks live in ``nursery``.

    Args:
        output: where the game's replies are queued to be played.
        nursery: the owner's nursery, for one reader task per request.
        say: say the host's own words (a failure, "not answering", "busy"); returns once
            they were played.
        say_wait: say "稍等" once per line, without waiting.
        remember: what to run once a game's reply was played (or None): the owner's history.
        note: remember a request the family's line asked for, as the main agent's tool call.
        switch_grace: how long ``start`` waits for the goodbye of the game it replaces.
    """

    def __init__(
        self,
        output: OutputQueue,
        nursery: trio.Nursery,
        *,
        say: Callable[[str], Awaitable[None]],
        say_wait: Callable[[], None],
        remember: Callable[[str, str], Callable[[], None] | None],
        note: Callable[[str, dict[str, Any]], None],
        trace: Trace = NULL_TRACE,
        budgets: Budgets | None = None,
        switch_grace: float = SWITCH_GRACE,
    ) -> None:
        self.output = output
        self.trace = trace
        self.budgets = budgets or Budgets()
        self.current: Current | None = None
        self.finished: Finished | None = None
        """The game cleared last (see the module docstring)."""
        self._nursery = nursery
        self._say = say
        self._say_wait = say_wait
        self._remember = remember
        self._note = note
        self.switch_grace = switch_grace
        self._idle = trio.Event()
        self._idle.set()

    @property
    def playing(self) -> str | None:
        """The id of the game the next line is for: none while it ends."""
        current = self.current
        return None if current is None or current.state is CurrentState.ENDING else current.info.id

    async def start(self, client: GameClient, text: str) -> None:
        """Start ``client``'s game with the user's words: a new context, then ``start``.

        A running game is ended first and its goodbye is heard in full (it reveals the
        answer nobody guessed), up to ``switch_grace`` seconds; then its reset is queued
        before the new game's first words.
        """
        self._note("start_game", {"game_id": client.info.id})
        old = self.current
        if old is not None:
            with trio.move_on_after(self.switch_grace):  # a hung game must not hold up the new one
                await self.end("", reason="user")
                await old.ended.wait()
            old.cancel()
            await old.ended.wait()
        self.current = Current(client, uuid.uuid4().hex)
        self.trace.record("game_start", game=client.info.id, context_id=self.current.context_id)
        await self._request(self.current, GameInput(kind="start", text=text))

    async def end(
        self,
        text: str,
        *,
        reason: Literal["user", "shutdown"] = "user",
        quiet: bool = False,
        asked: bool = False,
    ) -> None:
        """Cancel what the game is working on and send ``end``.

        Returns once the first reply to ``end`` was played. The game is forgotten (and the
        robot reset) only when the ``end`` request is over, after its last reply.
        ``quiet`` drops the game's replies, not its failure: that is always told.
        ``asked``: the family's line asked for it (noted as the main agent's ``end_game``).
        """
        if asked:
            self._note("end_game", {})
        current = self.current
        if current is None or not current.life.can(CurrentEvent.END):
            return
        current.life.handle(CurrentEvent.END)
        if current.inflight:
            self.trace.record("turn_cancelled", game=current.info.id, by="end")
        current.cancel()
        await self._request(current, GameInput(kind="end", text=text, reason=reason), quiet=quiet)

    async def forward(self, text: str) -> bool:
        """Send the user's line to the game, or say "我还在准备呢" while it is not idle.

        Returns False when no game plays: nothing was sent, ``NO_GAME`` was said.
        """
        current = self.current
        if current is None:
            await self._say(NO_GAME)
            return False
        self._note("send_message", {"text": text})
        if current.state is not CurrentState.IDLE:  # working on the last line, or ending
            self.trace.record("busy", game=current.info.id)
            await self._say(BUSY_TEXT)
            return True
        await self._request(current, GameInput(kind="message", text=text))
        return True

    async def wait_idle(self) -> None:
        """Wait until no request is in flight."""
        await self._idle.wait()

    def abandon(self) -> None:
        """Forget a game that did not say goodbye in time (shutdown): its requests are
        cancelled and the robot's reset is queued."""
        current = self.current
        if current is not None:
            self.trace.record("game_abandoned", game=current.info.id)
            current.cancel()
            self._clear(current)

    # -- one request ------------------------------------------------------------------

    async def _request(self, current: Current, game_input: GameInput, *, quiet: bool = False) -> None:
        """Send one request; returns once its first reply was played (or it failed).

        The request counts as in flight (the game is busy) until its final reply arrives.
        Its records, the game's own included, carry the id of the user's turn that caused it.
        """
        key = uuid.uuid4().hex
        rid = current_request_id() or key
        arrived = trio.Event()  # the game's first reply is in the output queue
        first = trio.Event()  # ... and has been played
        scope = trio.CancelScope()
        if game_input.kind != "end":  # end fed END
            current.life.handle(CurrentEvent.SEND)
        current.words = []
        current.inflight[key] = scope
        self._idle = trio.Event()
        self.trace.record(
            "a2a_request", game=current.info.id, context_id=current.context_id, kind=game_input.kind, text=game_input.text
        )

        def settled() -> None:
            if current.inflight.pop(key, None) is not None:
                current.life.handle(CurrentEvent.SETTLE)
            if not any(c.busy for c in (current, self.current) if c is not None):
                self._idle.set()

        async def reader() -> None:
            try:
                with request_scope(rid), scope:
                    await self._read_replies(current, game_input, arrived, first, settled, quiet)
            finally:
                settled()
                if game_input.kind == "end":  # over, whether or not it said "ended"
                    self._clear(current)
                    current.ended.set()
                arrived.set()
                first.set()

        self._nursery.start_soon(reader)
        # Patience is about the game's answer, not about how long saying it takes: a
        # reply that arrived in time and is still being spoken (seconds of real speech on
        # the robot) must not be followed by "稍等".
        with trio.move_on_after(self.budgets.patience):
            await arrived.wait()
        if not arrived.is_set():  # the next line must be heard meanwhile ("结束游戏")
            self._say_wait()
            await self.output.drain()
            return
        await first.wait()

    async def _read_replies(
        self,
        current: Current,
        game_input: GameInput,
        arrived: trio.Event,
        first: trio.Event,
        settled: Callable[[], None],
        quiet: bool,
    ) -> None:
        budget = self.budgets.game
        patience = trio.CancelScope(deadline=trio.current_time() + budget)
        intermediate = 0
        spoke = False  # some text of this request is (to be) spoken
        try:
            with patience:
                async with current.client.stream(current.context_id, game_input) as replies:
                    async for reply, is_final in replies:
                        self.trace.record(
                            "game_reply", game=current.info.id, text=reply.text, final=is_final,
                            session=reply.session, directives=[d.describe() for d in reply.directives],
                            directive_data=[d.to_wire() for d in reply.directives],
                        )
                        intermediate += not is_final
                        if intermediate > MAX_INTERMEDIATE and not is_final:
                            if intermediate == MAX_INTERMEDIATE + 1:
                                self.trace.record("reply_cap", game=current.info.id, limit=MAX_INTERMEDIATE)
                            patience.deadline = trio.current_time() + budget
                            continue
                        if current.remote:
                            reply = self._speakable_reply(current, game_input, reply, is_final, spoke)
                        spoke = spoke or bool(reply.text.strip())
                        # No checkpoint from here to the clear: nobody may see a settled
                        # request of a session that is already over.
                        if is_final:
                            settled()
                        if not quiet:
                            if reply.text.strip():
                                current.words.append(reply.text.strip())
                            self.output.put_nowait(
                                reply,
                                game=current.info,
                                remote=current.remote,
                                after=self._remember(reply.text, current.info.name),
                            )
                        if is_final and reply.session == "ended":
                            self._clear(current)  # the reset is queued after this last reply
                        if not first.is_set():
                            arrived.set()
                            await self.output.drain()
                            first.set()
                        patience.deadline = trio.current_time() + budget
            if patience.cancelled_caught:
                await self._timed_out(current, game_input, budget)
        except GameRemoteError as exc:
            if exc.kind is not RemoteErrorKind.TIMEOUT:
                await self._failed(current, game_input, exc)
            else:  # the A2A client's reply timeout
                await self._timed_out(current, game_input, None, str(exc))
        except Exception as exc:  # noqa: BLE001 - the one boundary: any game failure is told, then we carry on
            await self._failed(current, game_input, exc)

    def _speakable_reply(
        self, current: Current, game_input: GameInput, reply: GameReply, is_final: bool, spoke: bool
    ) -> GameReply:
        """A remote game's reply as it may be heard: its text through the speech hygiene
        (a remote game's model is trusted no more than ours), and a final reply with nothing
        speakable left gets a fallback line (traced ``reply_fallback``): every request ends
        with something the family hears, and the last thing heard is never "稍等"."""
        text = clip_text(speakable(reply.text)) if reply.text.strip() else ""
        if is_final and not text:
            kind = game_input.kind
            fallback = REMOTE_CUT_SHORT if spoke and kind != "end" else REMOTE_SAID_NOTHING[kind]
            text = fallback.format(name=current.info.name)
            self.trace.record(
                "reply_fallback", game=current.info.id, kind=game_input.kind,
                reason="unspeakable" if reply.text.strip() else "empty", text=text,
            )
        if text == reply.text:
            return reply
        return reply.model_copy(update={"text": text})

    async def _timed_out(
        self, current: Current, game_input: GameInput, after: float | None, error: str = ""
    ) -> None:
        """The game stayed silent too long: told as not answering; a start clears it."""
        if after is None:
            self.trace.record("game_timeout", game=current.info.id, kind=game_input.kind, error=error)
            log.warning("game %s did not answer its %s: %s", current.info.id, game_input.kind, error)
        else:
            self.trace.record("game_timeout", game=current.info.id, kind=game_input.kind, after=after)
            log.warning("game %s did not answer its %s within %g s", current.info.id, game_input.kind, after)
        if game_input.kind == "start":
            self._clear(current)
        await self._say(REMOTE_SLOW.format(name=current.info.name))

    async def _failed(self, current: Current, game_input: GameInput, exc: Exception) -> None:
        """The game failed this request: told; a start clears it, a message keeps it."""
        log.warning("game %s failed on %s: %s", current.info.id, game_input.kind, exc)
        self.trace.record("game_error", game=current.info.id, kind=game_input.kind, error=str(exc))
        if game_input.kind == "start":
            self._clear(current)
        await self._say(REMOTE_FAILED.format(name=current.info.name))

    def _clear(self, current: Current) -> None:
        """Forget the game; the robot is reset after everything queued so far is played."""
        if current.state is CurrentState.OVER:
            return
        current.life.handle(CurrentEvent.CLEAR)
        serial = self.finished.serial + 1 if self.finished is not None else 1
        self.finished = Finished(current.client, tuple(current.words), serial)
        if self.current is current:
            self.current = None
            self.trace.record("game_cleared", game=current.info.id)
            with contextlib.suppress(RuntimeError):  # the queue stopped: no robot to reset
                self.output.reset_after_session(current.info)
