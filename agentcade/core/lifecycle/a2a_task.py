"""The lifecycle of one A2A task (one SendMessage / SendStreamingMessage request).

Theory of operation
-------------------
A task is created SUBMITTED when the request is accepted. Every intermediate reply of
the game is a status update to WORKING; the final reply ends it COMPLETED. A handler
that fails (a bug, or it returned without a final reply) ends it FAILED; a CancelTask, a
client that went away or a server shutting down ends it CANCELED. The three terminal
states take no event at all: a finished task never changes again, which is what lets
GetTask, ListTasks and SubscribeToTask hand out its snapshot without copying.

What the peer may ask for is checked against the same table (``check_remote``):
CancelTask is ``CANCEL`` (A2A ``TaskNotCancelableError`` when the task is over).

The A2A wire also has REJECTED, INPUT_REQUIRED and AUTH_REQUIRED; a game request uses none
of them (a game that refuses answers with speakable text, COMPLETED).
"""

from __future__ import annotations

import enum

from agentcade.core.lifecycle._machine import Lifecycle

__all__ = ["TRANSITIONS", "TaskEvent", "TaskLifecycle", "TaskState"]


class TaskState(enum.Enum):
    """A2A task states (the values are the wire's ProtoJSON names)."""

    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"


class TaskEvent(enum.Enum):
    """What happens to a task."""

    REPLY = enum.auto()
    """The game sent an intermediate reply."""
    FINAL = enum.auto()
    """The game sent its final reply."""
    FAIL = enum.auto()
    """The handler raised, or returned without a final reply."""
    CANCEL = enum.auto()
    """CancelTask, the client went away, or the server shut down."""


_RUNNING = {
    TaskEvent.REPLY: TaskState.WORKING,
    TaskEvent.FINAL: TaskState.COMPLETED,
    TaskEvent.FAIL: TaskState.FAILED,
    TaskEvent.CANCEL: TaskState.CANCELED,
}

TRANSITIONS: dict[TaskState, dict[TaskEvent, TaskState]] = {
    TaskState.SUBMITTED: dict(_RUNNING),
    TaskState.WORKING: dict(_RUNNING),
    TaskState.COMPLETED: {},
    TaskState.FAILED: {},
    TaskState.CANCELED: {},
}

TERMINAL = frozenset(state for state, row in TRANSITIONS.items() if not row)


class TaskLifecycle(Lifecycle[TaskState, TaskEvent]):
    """One task's state, starting SUBMITTED."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("a2a task", TRANSITIONS, TaskState.SUBMITTED)

    @property
    def finished(self) -> bool:
        """Whether the task is in a terminal state."""
        return self.state in TERMINAL
