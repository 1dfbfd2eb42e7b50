"""A2A tasks of one server: running ones, plus the last N finished ones for GetTask.

One request (SendMessage / SendStreamingMessage) is one task. Lifecycle:

    SUBMITTED -> WORKING* -> COMPLETED | FAILED | CANCELED

``TaskRecord`` holds the ProtoJSON pieces (dicts) the wire needs; the history follows the
SDK's ``TaskManager``: when a new status message arrives, the previous status message is
moved to the history, so a finished task has ``history = [user message, intermediate
replies...]`` and ``status.message = final reply``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import trio

from agentcade.a2a import wire

__all__ = ["FINISHED_KEPT", "TaskRecord", "TaskStore"]

FINISHED_KEPT = 64
"""Finished tasks kept for GetTask. A game request is answered while the client waits,
so GetTask is only for debugging and late CancelTask races: a small window suffices."""


@dataclass(eq=False, slots=True)
class TaskRecord:
    """One task; mutated only by the request that runs it (and ``cancel``)."""

    id: str
    context_id: str
    history: list[dict[str, Any]]
    status: dict[str, Any] = field(default_factory=lambda: {"state": wire.SUBMITTED})
    scope: trio.CancelScope | None = None
    done: trio.Event = field(default_factory=trio.Event)
    cancel_requested: bool = False

    @property
    def state(self) -> str:
        """The current TaskState name."""
        return str(self.status["state"])

    @property
    def finished(self) -> bool:
        """Whether the task reached a terminal state."""
        return self.state in wire.TERMINAL

    def set_status(self, state: str, message: dict[str, Any] | None) -> dict[str, Any]:
        """Move to ``state``; return the StreamResponse announcing it."""
        previous = self.status.get("message")
        if previous is not None:
            self.history.append(previous)
        self.status = wire.status(state, message)
        return wire.status_update(self.id, self.context_id, self.status)

    def cancel(self) -> None:
        """Cancel the running handler (no-op once finished)."""
        self.cancel_requested = True
        if self.scope is not None:
            self.scope.cancel()

    def to_dict(self, history_length: int | None = None) -> dict[str, Any]:
        """The Task as ProtoJSON; ``history_length`` keeps the last n messages (0: none)."""
        out: dict[str, Any] = {"id": self.id, "contextId": self.context_id, "status": self.status}
        history = self.history
        if history_length is not None:
            history = history[-history_length:] if history_length > 0 else []
        if history:
            out["history"] = list(history)
        return out


class TaskStore:
    """Running tasks by id, and the last ``keep`` finished ones."""

    def __init__(self, keep: int = FINISHED_KEPT) -> None:
        self._running: dict[str, TaskRecord] = {}
        self._finished: OrderedDict[str, TaskRecord] = OrderedDict()
        self._keep = keep

    def add(self, record: TaskRecord) -> None:
        """Register a new running task."""
        self._running[record.id] = record

    def get(self, task_id: str) -> TaskRecord | None:
        """A running or recently finished task."""
        return self._running.get(task_id) or self._finished.get(task_id)

    def finish(self, record: TaskRecord) -> None:
        """Move a task to the finished window and wake whoever waits for it."""
        self._running.pop(record.id, None)
        self._finished[record.id] = record
        record.scope = None
        while len(self._finished) > self._keep:
            self._finished.popitem(last=False)
        record.done.set()

    @property
    def running(self) -> int:
        """How many tasks are running."""
        return len(self._running)
