"""Games written directly on a2a-sdk's server, not with agentcade, for ``check``'s tests.

Each module (``compliant``, ``violating``, ``old_version``) defines ``make_app(port) -> Starlette``. Run one
with ``python -m tests.check_peers <name> <port>`` (uvicorn); ``PeerProcess`` does that in a
subprocess on a free port and waits until it accepts connections.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def card(port: int, *, game_id: str, name: str, capabilities: list[str], streaming: bool = True) -> Any:
    """An AgentCard proto written by hand, the way a non-Python author would (no agentcade)."""
    from a2a.types.a2a_pb2 import AgentCard
    from google.protobuf.json_format import ParseDict

    data = {
        "name": name,
        "description": f"{name}：一个不用 agentcade 写的游戏",
        "version": "0.1.0",
        "supportedInterfaces": [
            {"url": f"http://127.0.0.1:{port}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": streaming},
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "provider": {"organization": "peer-tests", "url": "https://example.org/peer"},
        "skills": [
            {
                "id": game_id,
                "name": name,
                "description": "测试用的外部游戏",
                "tags": ["agentcade/1", *[f"capability:{c}" for c in capabilities]],
                "examples": [name],
            }
        ],
    }
    return ParseDict(data, AgentCard())


def reply_message(reply: dict[str, Any], context_id: str, task_id: str) -> Any:
    """A ROLE_AGENT message with the reply as a DataPart (plus a TextPart when there is text)."""
    from a2a.types.a2a_pb2 import Message, Part, Role
    from google.protobuf import struct_pb2

    value = struct_pb2.Value()
    value.struct_value.update(reply)
    parts = [Part(data=value)]
    if reply.get("text"):
        parts.append(Part(text=reply["text"]))
    return Message(message_id=str(uuid.uuid4()), context_id=context_id, task_id=task_id,
                   role=Role.ROLE_AGENT, parts=parts)


def app(served_card: Any, handler_card: Any, play: Any) -> Any:
    """A starlette app: ``play(game_input: dict, live: set[str], context_id) -> [(reply, final)]``."""
    from a2a.helpers import get_data_parts, new_task_from_user_message
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types.a2a_pb2 import TaskState
    from starlette.applications import Starlette

    live: set[str] = set()

    class Executor(AgentExecutor):
        async def execute(self, context: Any, event_queue: Any) -> None:
            task = context.current_task
            if task is None:
                task = new_task_from_user_message(context.message)
                await event_queue.enqueue_event(task)
            game_input = get_data_parts(list(context.message.parts))[0]
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            for reply, final in play(game_input, live, task.context_id):
                state = TaskState.TASK_STATE_COMPLETED if final else TaskState.TASK_STATE_WORKING
                await updater.update_status(state, reply_message(reply, task.context_id, task.id))

        async def cancel(self, context: Any, event_queue: Any) -> None:
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()

    handler = DefaultRequestHandler(Executor(), InMemoryTaskStore(), handler_card)
    routes = create_agent_card_routes(served_card) + create_jsonrpc_routes(handler, "/")
    return Starlette(routes=routes)


class PeerProcess:
    """``with PeerProcess("compliant") as peer: peer.url`` — the game in a subprocess."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def __enter__(self) -> PeerProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.check_peers", self.name, str(self.port)], cwd=ROOT
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError(f"the {self.name} peer did not start") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def reply(text: str = "", session: str = "active", **extra: Any) -> dict[str, Any]:
    """An agentcade/1 GameReply payload, written by hand as a non-agentcade game would."""
    return {"protocol": "agentcade/1", "text": text, "session": session, **extra}
