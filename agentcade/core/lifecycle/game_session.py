"""The lifecycle of one game session in ``GameHost`` (one context id, one game agent).

Theory of operation
-------------------
A session is IDLE when nothing runs in it. Requests take the session's lock one at a
time; a ``start``/``message``/``end`` round that holds it makes the session BUSY
(``BEGIN``) until it is over (``FINISH``).

An ``end`` request that arrives (``END``) makes it ENDING at once, before it waits for the
lock: every ``start``/``message`` round in flight or waiting is cancelled, and the end
round itself then runs (``BEGIN``/``FINISH`` keep it ENDING). A second ``end`` is
harmless.

``CLOSE`` closes the session (CLOSED: its game agent's ``close()`` runs): it ended (the
game said ``session: ended``, or its end round is over), it was replaced by a new
``start`` on the same context, it was idle too long, or the host shut down. Any live state
may close; a closed session only sees the ``FINISH`` of a round that unwinds after the
close. Requests that find it CLOSED are answered "这一局已经结束了" without a round.

    IDLE --BEGIN--> BUSY --FINISH--> IDLE
    IDLE | BUSY --END--> ENDING
    IDLE | BUSY | ENDING --CLOSE--> CLOSED
"""

from __future__ import annotations

import enum

from agentcade.core.lifecycle._machine import Lifecycle

__all__ = ["TRANSITIONS", "GameSession", "SessionEvent", "SessionState"]


class SessionState(enum.Enum):
    """Where a game session is."""

    IDLE = enum.auto()
    """Live; no round runs (it may be closed when idle too long)."""
    BUSY = enum.auto()
    """A round holds the session's lock."""
    ENDING = enum.auto()
    """An ``end`` arrived: other rounds are cancelled, the end round runs next."""
    CLOSED = enum.auto()
    """Closed: no more rounds."""


class SessionEvent(enum.Enum):
    """What happens to a session."""

    BEGIN = enum.auto()
    """A round took the session's lock."""
    FINISH = enum.auto()
    """That round is over (replied, failed or cancelled)."""
    END = enum.auto()
    """An ``end`` request arrived."""
    CLOSE = enum.auto()
    """The session is closed (ended, replaced, idle, shutdown)."""


TRANSITIONS: dict[SessionState, dict[SessionEvent, SessionState]] = {
    SessionState.IDLE: {
        SessionEvent.BEGIN: SessionState.BUSY,
        SessionEvent.END: SessionState.ENDING,
        SessionEvent.CLOSE: SessionState.CLOSED,
    },
    SessionState.BUSY: {
        SessionEvent.FINISH: SessionState.IDLE,
        SessionEvent.END: SessionState.ENDING,
        SessionEvent.CLOSE: SessionState.CLOSED,
    },
    SessionState.ENDING: {
        SessionEvent.BEGIN: SessionState.ENDING,
        SessionEvent.FINISH: SessionState.ENDING,
        SessionEvent.END: SessionState.ENDING,
        SessionEvent.CLOSE: SessionState.CLOSED,
    },
    SessionState.CLOSED: {
        SessionEvent.FINISH: SessionState.CLOSED,
    },
}


class GameSession(Lifecycle[SessionState, SessionEvent]):
    """A new session, IDLE."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("game session", TRANSITIONS, SessionState.IDLE)
