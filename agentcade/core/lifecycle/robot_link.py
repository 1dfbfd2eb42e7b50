"""The lifecycle of the link to a real robot (``SdkRobot`` and its ``watch``).

Theory of operation
-------------------
The robot is ONLINE while directives can reach it. It goes AWAY on any of three losses:
the Daemon socket closed (``SOCKET_CLOSED``), the Daemon says the device is offline
(``DEVICE_OFFLINE``), or a command got no reply (``NO_REPLY``). While AWAY, directives
fail at once instead of waiting out a command timeout. A further loss while AWAY only
changes the reason (the latest one is kept and told).

From AWAY the robot comes back when the device answers again (``ANSWERED``: a probe got a
reply, or the Daemon says the device is online and a probe confirms). When the session
itself is lost (the socket closed, or it stalled: the device is there, nothing answers
us) a new session is opened (``RECONNECT``: RECONNECTING, with backoff, until one opens);
once it is open (``OPENED``) the robot is AWAY until that session proves it can reach
the device, then ONLINE — or it stays AWAY with the reason found (offline, no reply).

``CLOSE`` (``aclose``) ends the link from any state; a CLOSED link takes no event (the
driver drops what a worker thread still reports after the close).

    ONLINE --SOCKET_CLOSED | DEVICE_OFFLINE | NO_REPLY--> AWAY --ANSWERED--> ONLINE
    AWAY --RECONNECT--> RECONNECTING --OPENED--> AWAY
    any --CLOSE--> CLOSED
"""

from __future__ import annotations

import enum

from agentcade.core.lifecycle._machine import Lifecycle

__all__ = ["LOSSES", "TRANSITIONS", "LinkEvent", "LinkState", "RobotLink"]


class LinkState(enum.Enum):
    """Where the robot link is."""

    ONLINE = enum.auto()
    """Directives can reach the robot."""
    AWAY = enum.auto()
    """Lost (``reason`` says why): directives are skipped at once."""
    RECONNECTING = enum.auto()
    """A new Daemon session is being opened (with backoff)."""
    CLOSED = enum.auto()
    """``aclose`` ran: no more directives, no more events."""


class LinkEvent(enum.Enum):
    """What the link notices, or what its driver does. A loss's value is its reason."""

    SOCKET_CLOSED = "socket_closed"
    """The Daemon socket closed."""
    DEVICE_OFFLINE = "device_offline"
    """The Daemon says the device is offline (``daemon.device.state``)."""
    NO_REPLY = "no_reply"
    """A command got no reply in time."""
    ANSWERED = "answered"
    """The device answered a probe (or came with capabilities on a new session)."""
    RECONNECT = "reconnect"
    """The driver starts opening a new session."""
    OPENED = "opened"
    """The new session is open."""
    CLOSE = "close"
    """``aclose``."""


LOSSES = frozenset({LinkEvent.SOCKET_CLOSED, LinkEvent.DEVICE_OFFLINE, LinkEvent.NO_REPLY})

TRANSITIONS: dict[LinkState, dict[LinkEvent, LinkState]] = {
    LinkState.ONLINE: {
        LinkEvent.SOCKET_CLOSED: LinkState.AWAY,
        LinkEvent.DEVICE_OFFLINE: LinkState.AWAY,
        LinkEvent.NO_REPLY: LinkState.AWAY,
        LinkEvent.CLOSE: LinkState.CLOSED,
    },
    LinkState.AWAY: {
        LinkEvent.SOCKET_CLOSED: LinkState.AWAY,
        LinkEvent.DEVICE_OFFLINE: LinkState.AWAY,
        LinkEvent.NO_REPLY: LinkState.AWAY,
        LinkEvent.ANSWERED: LinkState.ONLINE,
        LinkEvent.RECONNECT: LinkState.RECONNECTING,
        LinkEvent.CLOSE: LinkState.CLOSED,
    },
    LinkState.RECONNECTING: {
        LinkEvent.OPENED: LinkState.AWAY,
        LinkEvent.CLOSE: LinkState.CLOSED,
    },
    LinkState.CLOSED: {},
}


class RobotLink(Lifecycle[LinkState, LinkEvent]):
    """A link that starts ONLINE (the first session is open and answered).

    ``reason`` is the last loss while not ONLINE (``None`` when ONLINE).
    """

    __slots__ = ("reason",)

    def __init__(self) -> None:
        super().__init__("robot link", TRANSITIONS, LinkState.ONLINE)
        self.reason: LinkEvent | None = None
        """The loss that made the link AWAY (kept while RECONNECTING), or None."""

    def handle(self, event: LinkEvent) -> LinkState:
        """Move on ``event`` (see the table); a loss also sets ``reason``."""
        state = super().handle(event)
        if event in LOSSES:
            self.reason = event
        elif state is LinkState.ONLINE:
            self.reason = None
        return state
