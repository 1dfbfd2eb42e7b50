"""The lifecycle of the main agent's current game (``MainAgent.current``).

Theory of operation
-------------------
The main agent plays one game at a time. Once ``start`` is sent the game is WORKING:
a request is in flight and a line said meanwhile is answered "我还在准备呢" instead of
being forwarded. When that request is over (its final reply arrived, or it failed or was
cancelled: ``SETTLE``) the game is IDLE and takes the next line (``SEND``: WORKING again).

``END`` (``end`` sent: the user said 结束游戏, another game was chosen, shutdown) makes it
ENDING from IDLE or WORKING: the game is saying goodbye and takes no more input; the
requests it still had in flight are cancelled and settle while it is ENDING.

``CLEAR`` forgets the game (OVER): its final reply said ``session: ended``, ``start``
failed or timed out, the ``end`` request is over, or shutdown abandoned it. It can come
from any live state; an OVER game only sees the late ``SETTLE`` of a request whose reader
unwinds after the clear, and nothing else.

    IDLE --SEND--> WORKING --SETTLE--> IDLE
    IDLE | WORKING --END--> ENDING
    IDLE | WORKING | ENDING --CLEAR--> OVER

The machine counts no requests: in IDLE and WORKING at most one is in flight (the driver
sends only from IDLE), and in ENDING every settle keeps it ENDING.
"""

from __future__ import annotations

import enum

from agentcade.core.lifecycle._machine import Lifecycle

__all__ = ["TRANSITIONS", "CurrentEvent", "CurrentGame", "CurrentState"]


class CurrentState(enum.Enum):
    """Where the current game is."""

    IDLE = enum.auto()
    """Playing; no request in flight: the next line is forwarded."""
    WORKING = enum.auto()
    """A ``start``/``message`` request is in flight: the next line hears "稍等"."""
    ENDING = enum.auto()
    """``end`` was sent: saying goodbye, no more input."""
    OVER = enum.auto()
    """Forgotten: no longer the current game."""


class CurrentEvent(enum.Enum):
    """What the main agent does with, or hears from, its current game."""

    SEND = enum.auto()
    """A ``start`` or ``message`` request was sent."""
    SETTLE = enum.auto()
    """A request is over: its final reply arrived, or it failed or was cancelled."""
    END = enum.auto()
    """``end`` was sent."""
    CLEAR = enum.auto()
    """The game is forgotten (session ended, start failed, end over, abandoned)."""


TRANSITIONS: dict[CurrentState, dict[CurrentEvent, CurrentState]] = {
    CurrentState.IDLE: {
        CurrentEvent.SEND: CurrentState.WORKING,
        CurrentEvent.END: CurrentState.ENDING,
        CurrentEvent.CLEAR: CurrentState.OVER,
    },
    CurrentState.WORKING: {
        CurrentEvent.SETTLE: CurrentState.IDLE,
        CurrentEvent.END: CurrentState.ENDING,
        CurrentEvent.CLEAR: CurrentState.OVER,
    },
    CurrentState.ENDING: {
        CurrentEvent.SETTLE: CurrentState.ENDING,
        CurrentEvent.CLEAR: CurrentState.OVER,
    },
    CurrentState.OVER: {
        CurrentEvent.SETTLE: CurrentState.OVER,
    },
}


class CurrentGame(Lifecycle[CurrentState, CurrentEvent]):
    """A newly chosen game, IDLE until its ``start`` is sent."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("current game", TRANSITIONS, CurrentState.IDLE)
