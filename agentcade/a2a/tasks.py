"""A2A tasks of one server: running ones, plus the last N finished ones for GetTask.

One request (SendMessage / SendStreamingMessage) is one task. Lifecycle:

    SUBMITTED -> WORKING* -> COMPLETED | FAILED | CANCELED

driven by its machine (``agentcade.core.lifecycle.a2a_task``): ``set_status`` feeds the
event that leads to the state asked for, so a finished task never changes again (an
illegal move raises ``LocalIllegalTransition``).

``TaskRecord`` holds the ProtoJSON pieces (dicts) the wire needs; the history follows the
SDK's ``TaskManager``: when a new status message arrives, the previous status message is
moved to the history, so a finished task has ``history = [user message, intermediate
replies...]`` and ``status.message = final reply``.

Every status change is also offered to the task's subscribers (SubscribeToTask): each has a
small buffered channel; one that falls behind by ``SUBSCRIBER_BUFFER`` events is dropped
(its stream ends) rather than slowing the game for the client that asked for it.

``TaskStore.page`` is ListTasks: newest update first; the page token is the opaque position
(update sequence number) of the last task returned, so it stays valid while tasks finish.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import itertools
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import trio

from agentcade.a2a import wire
from agentcade.core.errors import PeerError
from agentcade.core.lifecycle.a2a_task import TaskEvent, TaskLifecycle

__all__ = [
    "FINISHED_KEPT",
    "SUBSCRIBER_BUFFER",
    "BadPageToken",
    "TaskPage",
    "TaskRecord",
    "TaskStore",
]

SUBSCRIBER_BUFFER = 32
"""Events a SubscribeToTask stream may lag behind before it is dropped. A game turn emits a
handful of status updates; 32 is room for a slow reader, not for one that stopped."""

_updates = itertools.count(1)
"""Process-wide update sequence: orders ListTasks without ties (timestamps can tie)."""

_EVENT_TO = {
    wire.WORKING: TaskEvent.REPLY,
    wire.COMPLETED: TaskEvent.FINAL,
    wire.FAILED: TaskEvent.FAIL,
    wire.CANCELED: TaskEvent.CANCEL,
}
"""The task event that moves a task to each state ``set_status`` is asked for."""

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
    updated: int = field(default_factory=lambda: next(_updates))
    """Sequence number of the last status change (ListTasks order and page token)."""
    updated_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    subscribers: list[trio.MemorySendChannel[dict[str, Any]]] = field(default_factory=list)
    life: TaskLifecycle = field(default_factory=TaskLifecycle)

    @property
    def state(self) -> str:
        """The current TaskState name."""
        return str(self.status["state"])

    @property
    def finished(self) -> bool:
        """Whether the task reached a terminal state."""
        return self.life.finished

    def set_status(self, state: str, message: dict[str, Any] | None) -> dict[str, Any]:
        """Move to ``state``; return the StreamResponse announcing it.

        Raises:
            LocalIllegalTransition: the task is over (nothing changes).
        """
        self.life.handle(_EVENT_TO[state])
        previous = self.status.get("message")
        if previous is not None:
            self.history.append(previous)
        self.status = wire.status(state, message)
        self.updated = next(_updates)
        self.updated_at = dt.datetime.now(dt.UTC)
        event = wire.status_update(self.id, self.context_id, self.status)
        self._publish(event)
        return event

    def subscribe(self) -> trio.MemoryReceiveChannel[dict[str, Any]]:
        """A channel of the StreamResponses still to come; it closes when the task ends."""
        send, receive = trio.open_memory_channel[dict[str, Any]](SUBSCRIBER_BUFFER)
        if self.done.is_set():
            send.close()
        else:
            self.subscribers.append(send)
        return receive

    def _publish(self, event: dict[str, Any]) -> None:
        for send in list(self.subscribers):
            try:
                send.send_nowait(event)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                self.subscribers.remove(send)  # fell behind or went away
                send.close()

    def close_subscribers(self) -> None:
        """End every subscriber's stream (after the terminal event)."""
        for send in self.subscribers:
            send.close()
        self.subscribers.clear()

    def cancel(self) -> None:
        """Cancel the running handler (no-op once finished)."""
        self.cancel_requested = True
        if self.scope is not None:
            self.scope.cancel()

    def to_dict(
        self, history_length: int | None = None, *, artifacts: bool = False
    ) -> dict[str, Any]:
        """The Task as ProtoJSON; ``history_length`` keeps the last n messages (0: none).

        A game reply rides in status messages, so a task has no artifacts; ``artifacts``
        (ListTasks ``includeArtifacts``) emits the empty list it was asked for.
        """
        out: dict[str, Any] = {"id": self.id, "contextId": self.context_id, "status": self.status}
        if artifacts:
            out["artifacts"] = []
        history = self.history
        if history_length is not None:
            history = history[-history_length:] if history_length > 0 else []
        if history:
            out["history"] = list(history)
        return out


class BadPageToken(PeerError, ValueError):
    """A ListTasks ``pageToken`` this server did not hand out (the client's mistake)."""


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One ListTasks page: the tasks, the token of the next page ("" on the last one)."""

    tasks: list[TaskRecord]
    next_page_token: str
    total_size: int


def _encode_token(updated: int) -> str:
    return base64.urlsafe_b64encode(f"after:{updated}".encode()).decode()


def _decode_token(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
        prefix, _, number = text.partition(":")
        if prefix != "after" or not number.isdigit():
            raise ValueError(token)
        return int(number)
    except (binascii.Error, UnicodeError, ValueError):
        raise BadPageToken(f"Invalid page token: {token}") from None


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
        record.close_subscribers()

    def page(
        self,
        *,
        page_size: int,
        page_token: str = "",
        context_id: str = "",
        state: str = "",
        updated_after: dt.datetime | None = None,
    ) -> TaskPage:
        """ListTasks: running and kept finished tasks, newest update first, filtered.

        Raises:
            BadPageToken: ``page_token`` is not one this store handed out.
        """
        tasks = [*self._running.values(), *self._finished.values()]
        if context_id:
            tasks = [t for t in tasks if t.context_id == context_id]
        if state:
            tasks = [t for t in tasks if t.state == state]
        if updated_after is not None:
            tasks = [t for t in tasks if t.updated_at >= updated_after]
        tasks.sort(key=lambda t: t.updated, reverse=True)
        total = len(tasks)
        if page_token:
            after = _decode_token(page_token)
            tasks = [t for t in tasks if t.updated < after]
        page = tasks[:page_size]
        more = len(tasks) > page_size
        token = _encode_token(page[-1].updated) if more and page else ""
        return TaskPage(page, token, total)

    @property
    def running(self) -> int:
        """How many tasks are running."""
        return len(self._running)
