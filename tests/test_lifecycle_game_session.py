"""A game session of ``GameHost`` as a sans-IO machine: every transition, legal and illegal."""

from __future__ import annotations

import pytest

from agentcade.core.lifecycle.game_session import GameSession, SessionEvent, SessionState
from tests.lifecycle_grid import check_cell, every_pair, parse_grid

E = SessionEvent
GRID = parse_grid(
    """
              BEGIN    FINISH   END      CLOSE
    IDLE      BUSY     -        ENDING   CLOSED
    BUSY      -        IDLE     ENDING   CLOSED
    ENDING    ENDING   ENDING   ENDING   CLOSED
    CLOSED    -        CLOSED   -        -
    """,
    SessionState,
    SessionEvent,
)
PATHS = {
    SessionState.IDLE: [],
    SessionState.BUSY: [E.BEGIN],
    SessionState.ENDING: [E.END],
    SessionState.CLOSED: [E.CLOSE],
}


@pytest.mark.parametrize(("state", "event", "target"), every_pair(GRID))
def test_every_transition(state: SessionState, event: SessionEvent, target: SessionState | None) -> None:
    check_cell(GameSession, PATHS, state, event, target)


def test_an_end_arriving_during_a_round() -> None:
    session = GameSession()
    for event, state in [
        (E.BEGIN, SessionState.BUSY),  # start round
        (E.FINISH, SessionState.IDLE),
        (E.BEGIN, SessionState.BUSY),  # a message round
        (E.END, SessionState.ENDING),  # end arrives: the round is cancelled
        (E.FINISH, SessionState.ENDING),  # ... and unwinds
        (E.BEGIN, SessionState.ENDING),  # the end round
        (E.FINISH, SessionState.ENDING),
        (E.CLOSE, SessionState.CLOSED),  # retired
    ]:
        assert session.handle(event) is state


def test_a_round_unwinding_after_the_close() -> None:
    session = GameSession()
    session.handle(E.BEGIN)
    session.handle(E.CLOSE)  # shutdown closes it while the round still runs
    assert session.handle(E.FINISH) is SessionState.CLOSED
