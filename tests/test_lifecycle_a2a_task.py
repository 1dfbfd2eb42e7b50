"""The A2A task as a sans-IO machine: every transition, legal and illegal."""

from __future__ import annotations

import pytest

from agentcade.a2a import wire
from agentcade.a2a.tasks import TaskRecord
from agentcade.core.errors import LocalIllegalTransition, RemoteIllegalTransition
from agentcade.core.lifecycle.a2a_task import TaskEvent, TaskLifecycle, TaskState
from tests.lifecycle_grid import check_cell, every_pair, parse_grid

E = TaskEvent
GRID = parse_grid(
    """
               REPLY     FINAL      FAIL    CANCEL
    SUBMITTED  WORKING   COMPLETED  FAILED  CANCELED
    WORKING    WORKING   COMPLETED  FAILED  CANCELED
    COMPLETED  -         -          -       -
    FAILED     -         -          -       -
    CANCELED   -         -          -       -
    """,
    TaskState,
    TaskEvent,
)
PATHS = {
    TaskState.SUBMITTED: [],
    TaskState.WORKING: [E.REPLY],
    TaskState.COMPLETED: [E.REPLY, E.FINAL],
    TaskState.FAILED: [E.FAIL],
    TaskState.CANCELED: [E.REPLY, E.CANCEL],
}


@pytest.mark.parametrize(("state", "event", "target"), every_pair(GRID))
def test_every_transition(state: TaskState, event: TaskEvent, target: TaskState | None) -> None:
    check_cell(TaskLifecycle, PATHS, state, event, target)


@pytest.mark.parametrize("state", list(TaskState))
def test_finished_means_terminal_on_the_wire(state: TaskState) -> None:
    task = TaskLifecycle()
    for step in PATHS[state]:
        task.handle(step)
    assert task.finished == (state.value in wire.TERMINAL)


def test_the_states_are_the_wire_names() -> None:
    assert TaskState.SUBMITTED.value == wire.SUBMITTED
    assert TaskState.WORKING.value == wire.WORKING
    assert TaskState.COMPLETED.value == wire.COMPLETED
    assert TaskState.FAILED.value == wire.FAILED
    assert TaskState.CANCELED.value == wire.CANCELED


def test_cancelling_a_finished_task_is_the_peers_mistake() -> None:
    task = TaskLifecycle()
    task.handle(E.FINAL)
    with pytest.raises(RemoteIllegalTransition) as caught:
        task.check_remote(E.CANCEL)
    assert caught.value.state is TaskState.COMPLETED
    assert caught.value.machine == "a2a task"


def test_a_finished_task_record_refuses_another_status() -> None:
    record = TaskRecord(id="t1", context_id="c1", history=[])
    record.set_status(wire.WORKING, wire.agent_message("c1", "t1", [{"text": "稍等"}]))
    record.set_status(wire.COMPLETED, wire.agent_message("c1", "t1", [{"text": "好了"}]))
    with pytest.raises(LocalIllegalTransition):
        record.set_status(wire.CANCELED, None)
    assert record.state == wire.COMPLETED
    assert record.life.state is TaskState.COMPLETED
