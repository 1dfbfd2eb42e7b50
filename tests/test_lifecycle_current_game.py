"""The main agent's current game as a sans-IO machine: every transition, legal and illegal."""

from __future__ import annotations

import pickle

import pytest

from agentcade.core.errors import AgentcadeError, IllegalTransition, LocalIllegalTransition
from agentcade.core.lifecycle.current_game import CurrentEvent, CurrentGame, CurrentState
from tests.lifecycle_grid import check_cell, every_pair, parse_grid

E = CurrentEvent
GRID = parse_grid(
    """
              SEND      SETTLE    END      CLEAR
    IDLE      WORKING   -         ENDING   OVER
    WORKING   -         IDLE      ENDING   OVER
    ENDING    -         ENDING    -        OVER
    OVER      -         OVER      -        -
    """,
    CurrentState,
    CurrentEvent,
)
PATHS = {
    CurrentState.IDLE: [],
    CurrentState.WORKING: [E.SEND],
    CurrentState.ENDING: [E.SEND, E.END],
    CurrentState.OVER: [E.CLEAR],
}


@pytest.mark.parametrize(("state", "event", "target"), every_pair(GRID))
def test_every_transition(state: CurrentState, event: CurrentEvent, target: CurrentState | None) -> None:
    check_cell(CurrentGame, PATHS, state, event, target)


def test_a_new_game_is_idle() -> None:
    assert CurrentGame().state is CurrentState.IDLE


def test_a_game_played_to_its_end() -> None:
    game = CurrentGame()
    for event, state in [
        (E.SEND, CurrentState.WORKING),  # start
        (E.SETTLE, CurrentState.IDLE),  # its final reply
        (E.SEND, CurrentState.WORKING),  # a message
        (E.END, CurrentState.ENDING),  # 结束游戏 while the message is in flight
        (E.SETTLE, CurrentState.ENDING),  # the cancelled message settles
        (E.SETTLE, CurrentState.ENDING),  # the end request's final reply
        (E.CLEAR, CurrentState.OVER),  # session ended
        (E.SETTLE, CurrentState.OVER),  # a reader unwinding late
    ]:
        assert game.handle(event) is state


def test_a_second_line_while_working_is_refused_and_the_state_kept() -> None:
    game = CurrentGame()
    game.handle(E.SEND)
    with pytest.raises(LocalIllegalTransition) as caught:
        game.handle(E.SEND)
    assert isinstance(caught.value, AgentcadeError)
    assert "current game" in str(caught.value)
    assert "SEND" in str(caught.value)
    assert game.state is CurrentState.WORKING
    again = pickle.loads(pickle.dumps(caught.value))
    assert again.state is CurrentState.WORKING
    assert again.event is E.SEND


def test_the_abstract_error_cannot_be_raised_itself() -> None:
    """Like h11's ProtocolError: the subclass says whose fault it is."""
    with pytest.raises(TypeError):
        IllegalTransition("current game", CurrentState.IDLE, E.SEND)
    assert issubclass(LocalIllegalTransition, IllegalTransition)
