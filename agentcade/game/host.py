"""``GameHost``: game sessions behind one ``GameHandler`` (in-process and ``agentcade serve``).

Theory of operation:

* A ``context_id`` is one game session is one ``GameAgent`` instance.
* Requests of one session run one at a time, in arrival order: each takes the session's
  ``trio.Lock``, which is fair (FIFO), so arrival order is service order.
* Every ``start``/``message`` request runs inside its own ``trio.CancelScope``. ``end``
  cancels them all — the one in flight and any waiting — and then takes the lock and
  runs the end round. A cancelled request still gets a final reply (``INTERRUPTED``),
  so every request ends with speakable text, as the protocol demands.
* ``start`` on a live context closes the old session first. ``message``/``end`` for a
  context with no session get a final reply with ``session: ended``.
* At most ``max_sessions`` live sessions; beyond that a new ``start`` gets a speakable
  refusal. Sessions idle longer than ``idle_timeout`` are closed by ``run``.
* A client that goes away cancels the caller of ``handle``; trio's cancellation unwinds
  the turn (no model call keeps running). Closing an agent is shielded and bounded, so
  cleanup happens even while the host is being cancelled.

Error handling: an exception escaping a game (a bug) is logged and answered with a
fallback line; other sessions never notice. ``SystemExit``/``KeyboardInterrupt`` from a
game's code (``GameCodeError`` once a tool raised it) would end the whole process: they
fail that one session instead (a final ``ended`` reply).

Input: a line longer than ``MAX_INPUT`` characters is cut to it before the game sees it
(nobody says 20,000 characters in one breath; judging them would cost seconds of CPU).

Lifecycle: each session is driven by its machine
(``agentcade.core.lifecycle.game_session``): a round that holds the lock is ``BEGIN`` ..
``FINISH``, an arriving ``end`` is ``END``, and ``_close`` is ``CLOSE``. The machine's state
is the only record of whether a session is busy, ending or closed.

Shutdown (``shut_down``): every request in flight gets its final reply (``SHUTTING_DOWN``,
session ``ended``) before the server closes its connections; new requests get the same.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import trio

from agentcade.core.errors import GameCodeError
from agentcade.core.lifecycle.game_session import GameSession, SessionEvent, SessionState
from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.speech import MAX_INPUT, clip_input
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.game.skill_agent import FALLBACK_LINES, SkillAgent
from agentcade.game.turn import ReplySink

__all__ = ["INTERRUPTED", "NO_SESSION", "SHUTTING_DOWN", "TOO_MANY", "GameHost"]

log = logging.getLogger(__name__)

NO_SESSION = "这一局已经结束了，想玩的话可以重新开始。"
TOO_MANY = "现在一起玩的人太多了，请过一会儿再来吧。"
INTERRUPTED = "好的，这一句先不管了。"
SHUTTING_DOWN = "游戏要暂停一下了，这一局先到这里，待会儿再来玩吧。"
GAME_BROKE = "这个游戏出了点问题，这一局先到这里。"
CLOSE_GRACE = 5.0
"""Seconds a game's ``close()`` may take before the host gives up on it."""


@dataclass(eq=False)
class _Session:
    context_id: str
    agent: SkillAgent
    last_used: float
    lock: trio.Lock = field(default_factory=trio.Lock)
    scopes: set[trio.CancelScope] = field(default_factory=set)
    life: GameSession = field(default_factory=GameSession)

    @property
    def closed(self) -> bool:
        return self.life.state is SessionState.CLOSED


class GameHost:
    """Sessions of one game; implements the ``GameHandler`` protocol (``handle``)."""

    def __init__(
        self,
        new_agent: Callable[[], SkillAgent],
        *,
        max_sessions: int = 32,
        idle_timeout: float = 30 * 60,
        trace: Trace = NULL_TRACE,
    ) -> None:
        self._new_agent = new_agent
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.trace = trace
        self._sessions: dict[str, _Session] = {}
        self._closing = False
        self._running = 0
        self._quiet = trio.Event()
        self._quiet.set()

    @property
    def session_count(self) -> int:
        """Live sessions now."""
        return len(self._sessions)

    @property
    def closing(self) -> bool:
        """``shut_down`` was called: every request now ends with ``SHUTTING_DOWN``."""
        return self._closing

    def unrevealed(self, context_id: str) -> list[str] | None:
        """What the game of a live session reports as still unrevealed
        (``SkillAgent.unrevealed``), for the scenario tests that say its answer
        (``{answer}``) or check it is not said too early; None when there is no such session."""
        session = self._sessions.get(context_id)
        return [str(s) for s in session.agent.unrevealed()] if session is not None else None

    def has_session(self, context_id: str) -> bool:
        """Whether ``context_id`` is a live session (the A2A plain-text door asks)."""
        return context_id in self._sessions

    async def handle(self, context_id: str, game_input: GameInput, emit: ReplySink) -> None:
        """Run one request; every reply goes to ``emit``, exactly one with ``final=True``."""
        self._running += 1
        self._quiet = trio.Event() if self._running == 1 else self._quiet
        try:
            await self._handle(context_id, game_input, emit)
        finally:
            self._running -= 1
            if not self._running:
                self._quiet.set()

    async def _handle(self, context_id: str, game_input: GameInput, emit: ReplySink) -> None:
        protocol = game_input.protocol

        async def final(text: str, session: Literal["active", "ended"]) -> None:
            await emit(GameReply(protocol=protocol, text=text, session=session), final=True)

        if self._closing:
            await final(SHUTTING_DOWN, "ended")
            return
        if len(game_input.text) > MAX_INPUT:
            self.trace.record("input_clipped", context_id=context_id, chars=len(game_input.text))
            game_input = game_input.model_copy(update={"text": clip_input(game_input.text)})
        if game_input.kind == "start":
            old = self._sessions.pop(context_id, None)
            if old is None and len(self._sessions) >= self.max_sessions:
                self.trace.record("session_refused", context_id=context_id, live=len(self._sessions))
                await final(TOO_MANY, "ended")
                return
            # The new session takes the slot before the old one is closed (which yields):
            # a second `start` arriving meanwhile replaces this one instead of leaking one.
            session = _Session(context_id, self._make_agent(), trio.current_time())
            self._sessions[context_id] = session
            self.trace.record("session_open", context_id=context_id)
            if old is not None:
                await self._close(old)
        else:
            found = self._sessions.get(context_id)
            if found is None:
                await final(NO_SESSION, "ended")
                return
            session = found
            if game_input.kind == "end":
                session.life.handle(SessionEvent.END)
                for scope in list(session.scopes):
                    scope.cancel()

        sent_final = False
        ended = False

        async def guarded(reply: GameReply, *, final: bool) -> None:
            nonlocal sent_final, ended
            if final:
                sent_final, ended = True, reply.session == "ended"
            session.last_used = trio.current_time()
            await emit(reply, final=final)

        scope = trio.CancelScope()
        if game_input.kind != "end":
            session.scopes.add(scope)
        try:
            with scope:
                async with session.lock:
                    if session.closed:
                        await final(NO_SESSION, "ended")
                        return
                    session.last_used = trio.current_time()
                    session.life.handle(SessionEvent.BEGIN)
                    try:
                        await session.agent.handle(game_input, guarded)
                    except (GameCodeError, SystemExit, KeyboardInterrupt) as exc:
                        # The game's own code tried to end the process: the session fails.
                        log.error("game session %s ended: %s", context_id, _what(exc))
                        self.trace.record("game_error", context_id=context_id, error=_what(exc))
                        ended = True
                        if not sent_final:
                            await final(GAME_BROKE, "ended")
                            sent_final = True
                    except Exception:
                        log.exception("game %s failed on %s", context_id, game_input.kind)
                        if not sent_final:
                            ended = game_input.kind != "message"
                            await final(FALLBACK_LINES[game_input.kind], "ended" if ended else "active")
                            sent_final = True
                    finally:
                        session.life.handle(SessionEvent.FINISH)
        finally:
            session.scopes.discard(scope)
            if ended or game_input.kind == "end":
                await self._retire(session)
        if scope.cancelled_caught and not sent_final:
            if self.closing:
                await final(SHUTTING_DOWN, "ended")
            else:
                await final(INTERRUPTED, "ended" if session.closed else "active")

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Close idle sessions until cancelled; then close every session (shutdown)."""
        task_status.started()
        try:
            while True:
                await trio.sleep(max(1.0, min(60.0, self.idle_timeout / 10)))
                await self.close_idle()
        finally:
            with trio.CancelScope(shield=True):
                await self.aclose()

    async def close_idle(self) -> int:
        """Close sessions idle for ``idle_timeout``; returns how many were closed."""
        now = trio.current_time()
        idle = [
            s
            for s in self._sessions.values()
            if s.life.state is SessionState.IDLE
            and not s.scopes
            and now - s.last_used >= self.idle_timeout
        ]
        for session in idle:
            self.trace.record("session_idle", context_id=session.context_id)
            await self._retire(session)
        return len(idle)

    async def shut_down(self, grace: float = CLOSE_GRACE) -> None:
        """Refuse new requests, end every session, and wait (``grace`` at most) until each
        request in flight has sent its final reply (``SHUTTING_DOWN``, session ``ended``).

        Call it before closing the server, so the replies still reach their clients.
        """
        self._closing = True
        with trio.move_on_after(grace):
            await self.aclose()
            await self._quiet.wait()

    async def aclose(self) -> None:
        """Close every session: cancel what runs, then each game's ``close()``."""
        for session in list(self._sessions.values()):
            await self._retire(session)

    def _make_agent(self) -> SkillAgent:
        agent = self._new_agent()
        agent.trace = self.trace
        return agent

    async def _retire(self, session: _Session) -> None:
        if self._sessions.get(session.context_id) is session:
            del self._sessions[session.context_id]
        await self._close(session)

    async def _close(self, session: _Session) -> None:
        if session.closed:
            return
        session.life.handle(SessionEvent.CLOSE)
        for scope in list(session.scopes):
            scope.cancel()
        self.trace.record("session_close", context_id=session.context_id)
        with trio.move_on_after(CLOSE_GRACE, shield=True):
            try:
                await session.agent.close()
            except Exception:
                log.exception("closing game session %s failed", session.context_id)


def _what(exc: BaseException) -> str:
    if isinstance(exc, GameCodeError):
        return str(exc)
    return f"the game's code raised {type(exc).__name__}"
