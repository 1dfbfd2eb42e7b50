"""One A2A task being played: the game handler's call, its replies as task events, its end.

:class:`TaskRun` runs the handler in a cancel scope the task record owns, turns each reply
into a WORKING or COMPLETED status event and always finishes the task: CANCELED when it was
cancelled, FAILED (with :data:`FAILED_TEXT`, the exception logged) when the handler raised
or returned without a final reply. :class:`agentcade.a2a.server.A2AServer` sends the events.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import trio

from agentcade.a2a import wire
from agentcade.a2a.handler import GameHandler
from agentcade.a2a.tasks import TaskRecord, TaskStore
from agentcade.core.protocol import GameInput, GameReply, ProtocolError
from agentcade.core.trace import request_scope

__all__ = ["FAILED_TEXT", "TaskRun"]

log = logging.getLogger("agentcade.a2a.server")

FAILED_TEXT = "游戏出了点问题，这一句没能处理好。"
"""Speakable text of a FAILED task (the exception itself is logged, never sent)."""


class TaskRun:
    """One task being played: the handler call, its replies and its terminal event."""

    def __init__(
        self,
        handler: GameHandler,
        store: TaskStore,
        record: TaskRecord,
        game_input: GameInput,
        request_id: str | None = None,
    ) -> None:
        self.handler = handler
        self.store = store
        self.record = record
        self.game_input = game_input
        self.request_id = request_id
        """The sender's ``messageId``: the game's trace records carry it (our client puts
        the main agent's request id in it, ``agentcade.a2a.client.message_id``)."""
        self.saw_final = False
        self.final_event: dict[str, Any] | None = None
        """The terminal event once the handler gave its final reply; None once sent."""

    def _message(self, reply: GameReply) -> dict[str, Any]:
        if reply.protocol != self.game_input.protocol:
            reply = reply.model_copy(update={"protocol": self.game_input.protocol})
        return wire.agent_message(self.record.context_id, self.record.id, wire.reply_parts(reply))

    async def execute(self, out: trio.MemorySendChannel[dict[str, Any]]) -> None:
        """Run the handler; send every StreamResponse to ``out``; always finish the task."""
        record = self.record

        async def emit(reply: GameReply, *, final: bool) -> None:
            if self.saw_final:
                raise ProtocolError("a reply after the final reply of the request")
            message = self._message(reply)
            if final:
                self.saw_final = True
                event = record.set_status(wire.COMPLETED, message)
                self.store.finish(record)
                self.final_event = event
            else:
                event = record.set_status(wire.WORKING, message)
            # A gone writer is fine: the record still has the reply.
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await out.send(event)
            if final:
                self.final_event = None  # delivered

        async with out:
            terminal: dict[str, Any] | None = None
            try:
                with request_scope(self.request_id), trio.CancelScope() as scope:
                    record.scope = scope
                    if record.cancel_requested:
                        scope.cancel()
                    await self.handler.handle(record.context_id, self.game_input, emit)
                if not self.saw_final:
                    if scope.cancelled_caught:
                        terminal = record.set_status(wire.CANCELED, None)
                    else:
                        log.warning("task %s: handler returned without a final reply", record.id)
                        terminal = record.set_status(wire.FAILED, self._failed_message())
            except Exception:  # the request boundary: a game bug fails this task only
                if not self.saw_final:
                    log.exception("task %s: the game handler raised", record.id)
                    terminal = record.set_status(wire.FAILED, self._failed_message())
                else:
                    log.exception(
                        "task %s: the game handler raised after its final reply", record.id
                    )
            finally:
                if not record.finished:  # cancelled from outside (shutdown)
                    record.set_status(wire.CANCELED, None)
                if not record.done.is_set():
                    self.store.finish(record)
            # A cancel landing while the final reply was being sent must not lose it: the
            # stream still ends with its terminal event.
            terminal = terminal or self.final_event
            if terminal is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await out.send(terminal)

    def _failed_message(self) -> dict[str, Any]:
        return self._message(GameReply(text=FAILED_TEXT))
