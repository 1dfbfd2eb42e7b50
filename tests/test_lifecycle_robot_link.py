"""The robot link as a sans-IO machine: every transition, legal and illegal, and the reason."""

from __future__ import annotations

import pytest

from agentcade.core.lifecycle.robot_link import LinkEvent, LinkState, RobotLink
from tests.lifecycle_grid import check_cell, every_pair, parse_grid

E = LinkEvent
GRID = parse_grid(
    """
                  SOCKET_CLOSED  DEVICE_OFFLINE  NO_REPLY  ANSWERED  RECONNECT     OPENED  CLOSE
    ONLINE        AWAY           AWAY            AWAY      -         -             -       CLOSED
    AWAY          AWAY           AWAY            AWAY      ONLINE    RECONNECTING  -       CLOSED
    RECONNECTING  -              -               -         -         -             AWAY    CLOSED
    CLOSED        -              -               -         -         -             -       -
    """,
    LinkState,
    LinkEvent,
)
PATHS = {
    LinkState.ONLINE: [],
    LinkState.AWAY: [E.NO_REPLY],
    LinkState.RECONNECTING: [E.SOCKET_CLOSED, E.RECONNECT],
    LinkState.CLOSED: [E.CLOSE],
}


@pytest.mark.parametrize(("state", "event", "target"), every_pair(GRID))
def test_every_transition(state: LinkState, event: LinkEvent, target: LinkState | None) -> None:
    check_cell(RobotLink, PATHS, state, event, target)


def test_the_reason_is_the_last_loss_and_is_kept_while_reconnecting() -> None:
    link = RobotLink()
    assert link.reason is None
    link.handle(E.DEVICE_OFFLINE)
    assert link.reason is E.DEVICE_OFFLINE
    link.handle(E.SOCKET_CLOSED)
    assert link.reason is E.SOCKET_CLOSED
    assert link.reason.value == "socket_closed"
    link.handle(E.RECONNECT)
    link.handle(E.OPENED)
    assert link.state is LinkState.AWAY
    assert link.reason is E.SOCKET_CLOSED
    link.handle(E.NO_REPLY)  # the new session does not answer either
    assert link.reason is E.NO_REPLY
    link.handle(E.ANSWERED)
    assert link.state is LinkState.ONLINE
    assert link.reason is None


def test_an_illegal_event_keeps_the_reason() -> None:
    link = RobotLink()
    link.handle(E.SOCKET_CLOSED)
    link.handle(E.RECONNECT)
    with pytest.raises(Exception, match="robot link"):
        link.handle(E.ANSWERED)
    assert link.state is LinkState.RECONNECTING
    assert link.reason is E.SOCKET_CLOSED
