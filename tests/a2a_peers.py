"""Peers for the A2A tests and the benchmark.

* ``EchoHandler``: a model-free ``GameHandler`` (one intermediate reply, then the final).
* ``SDKEchoExecutor`` + ``sdk_app`` / ``SDKServerThread``: the same game on a2a-sdk's own
  server (starlette + uvicorn), the reference peer.
* ``sdk_client_events``: a2a-sdk's own client (asyncio) playing one streaming request;
  run it with ``trio.to_thread.run_sync``.
* ``FakeSkill`` / ``echo_card``: a stand-in for ``agentcade.core.skill.Skill``.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import trio

from agentcade.a2a.card import build_card
from agentcade.a2a.handler import ReplySink
from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.skill import Declaration

ECHO_WORKING = "稍等"


def echo_replies(game_input: GameInput) -> list[GameReply]:
    """What the echo game says to one input: an intermediate reply, then the final one."""
    if game_input.kind == "start":
        final = GameReply(text=f"开始：{game_input.text}" if game_input.text else "开始啦")
    elif game_input.kind == "end":
        final = GameReply(text="再见", session="ended")
    else:
        final = GameReply(text=f"你说：{game_input.text}"[:500])
    return [GameReply(text=ECHO_WORKING), final]


class EchoHandler:
    """Echo game for our server; remembers sessions (for the plain-text door).

    Args:
        delay: seconds to sleep before the final reply (0: none).
    """

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        self.sessions: set[str] = set()
        self.inputs: list[tuple[str, GameInput]] = []
        self.cancelled = 0
        self.cancelled_event = trio.Event()

    def has_session(self, context_id: str) -> bool:
        return context_id in self.sessions

    async def handle(self, context_id: str, game_input: GameInput, emit: ReplySink) -> None:
        self.inputs.append((context_id, game_input))
        if game_input.kind == "end":
            self.sessions.discard(context_id)
        else:
            self.sessions.add(context_id)
        working, final = echo_replies(game_input)
        try:
            await emit(working, final=False)
            if self.delay:
                await trio.sleep(self.delay)
            await emit(final, final=True)
        except trio.Cancelled:
            self.cancelled += 1
            self.cancelled_event.set()
            raise


@dataclass(frozen=True)
class FakeSkill(Declaration):
    """A game's declaration as a SKILL.md would give it, with the fields the card uses."""

    id: str = "echo"
    name: str = "回声"
    description: str = "把你说的话说回来"
    summary: str = "回声游戏"
    aliases: tuple[str, ...] = ("回声", "学舌")
    required_capabilities: tuple[str, ...] = ("speaker",)
    version: str = "1.2.3"
    author: str | None = "Agentcade"
    homepage: str | None = "https://example.org/echo"
    body: str = ""


def echo_card(port: int, path: str = "/") -> dict[str, Any]:
    return build_card(FakeSkill(), f"http://127.0.0.1:{port}{path}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------ a2a-sdk reference server


def _make_sdk_executor() -> Any:
    from a2a.helpers import get_data_parts, new_task_from_user_message
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.tasks import TaskUpdater
    from a2a.types.a2a_pb2 import Message, Part, Role, TaskState
    from google.protobuf import struct_pb2

    from agentcade.core.protocol import parse_input

    def reply_message(reply: GameReply, context_id: str, task_id: str) -> Message:
        value = struct_pb2.Value()
        value.struct_value.update(reply.to_wire())
        parts = [Part(data=value)]
        if reply.text:
            parts.append(Part(text=reply.text))
        import uuid

        return Message(
            message_id=str(uuid.uuid4()),
            context_id=context_id,
            task_id=task_id,
            role=Role.ROLE_AGENT,
            parts=parts,
        )

    class SDKEchoExecutor(AgentExecutor):
        """The echo game as an a2a-sdk AgentExecutor speaking agentcade/1."""

        def __init__(self, delay: float = 0.0, final_text: str | None = None) -> None:
            self.delay = delay
            self.final_text = final_text

        async def execute(self, context: Any, event_queue: Any) -> None:
            message = context.message
            task = context.current_task
            if task is None:
                task = new_task_from_user_message(message)
                await event_queue.enqueue_event(task)
            data = get_data_parts(list(message.parts))
            game_input = parse_input(data[0])
            updater = TaskUpdater(event_queue, task.id, task.context_id)
            working, final = echo_replies(game_input)
            proto = game_input.protocol
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                reply_message(
                    working.model_copy(update={"protocol": proto}), task.context_id, task.id
                ),
            )
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.final_text is not None:  # a game that breaks "the final reply has text"
                final = final.model_construct(**{**dict(final), "text": self.final_text})
            await updater.update_status(
                TaskState.TASK_STATE_COMPLETED,
                reply_message(
                    final.model_copy(update={"protocol": proto}), task.context_id, task.id
                ),
            )

        async def cancel(self, context: Any, event_queue: Any) -> None:
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            await updater.cancel()

    return SDKEchoExecutor


def sdk_app(port: int, *, delay: float = 0.0, final_text: str | None = None) -> Any:
    """A starlette app serving the echo game with a2a-sdk's DefaultRequestHandler.

    ``final_text`` replaces the text of every final reply (``""``: an empty one).
    """
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types.a2a_pb2 import AgentCard
    from google.protobuf.json_format import ParseDict
    from starlette.applications import Starlette

    card = ParseDict(echo_card(port), AgentCard(), ignore_unknown_fields=True)
    handler = DefaultRequestHandler(_make_sdk_executor()(delay, final_text), InMemoryTaskStore(), card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/")
    return Starlette(routes=routes)


class SDKServerThread:
    """uvicorn + the SDK app on a free port, in a thread (for tests)."""

    def __init__(self, *, delay: float = 0.0, final_text: str | None = None) -> None:
        import uvicorn

        self.port = free_port()
        config = uvicorn.Config(
            sdk_app(self.port, delay=delay, final_text=final_text),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SDKServerThread:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(5)


# ------------------------------------------------------------------ a2a-sdk reference client


def sdk_client_events(
    base_url: str, payload: Any, *, context_id: str = "ctx-sdk"
) -> list[dict[str, Any]]:
    """Play one streaming request with a2a-sdk's client; return the StreamResponses as dicts.

    ``payload``: a dict is sent as one DataPart, a str as one TextPart. Blocking (asyncio.run).
    """

    async def run() -> list[dict[str, Any]]:
        import httpx
        from a2a.client import ClientConfig, create_client
        from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
        from google.protobuf import struct_pb2
        from google.protobuf.json_format import MessageToDict

        if isinstance(payload, str):
            part = Part(text=payload)
        else:
            value = struct_pb2.Value()
            value.struct_value.update(payload)
            part = Part(data=value)
        request = SendMessageRequest(
            message=Message(
                message_id="msg-sdk-1", context_id=context_id, role=Role.ROLE_USER, parts=[part]
            )
        )
        async with httpx.AsyncClient(timeout=10) as http:
            client = await create_client(base_url, client_config=ClientConfig(httpx_client=http))
            events = [MessageToDict(ev) async for ev in client.send_message(request)]
            await client.close()
        return events

    return asyncio.run(run())


# ------------------------------------------------------------------ raw HTTP for tests


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        import json

        return json.loads(self.body)

    def sse(self) -> list[dict[str, Any]]:
        """The ``data:`` payloads of an SSE body, parsed as JSON."""
        import json

        from agentcade.a2a.sse import SSEDecoder

        return [json.loads(e.data) for e in SSEDecoder().feed(self.body)]


def rpc_body(method: str, params: Any, rid: Any = "r1") -> bytes:
    import json

    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, ensure_ascii=False
    ).encode()


def send_params(
    payload: Any = None, *, context_id: str | None = "ctx-1", parts: Any = None
) -> dict[str, Any]:
    """SendMessageRequest params with one DataPart (dict payload) or TextPart (str)."""
    if parts is None:
        parts = [{"text": payload}] if isinstance(payload, str) else [{"data": payload}]
    message: dict[str, Any] = {"messageId": "m-1", "role": "ROLE_USER", "parts": parts}
    if context_id is not None:
        message["contextId"] = context_id
    return {"message": message}


def game_input(kind: str = "message", text: str = "你好", **extra: Any) -> dict[str, Any]:
    return {"protocol": "agentcade/1", "kind": kind, "text": text, **extra}


async def http_request(
    port: int,
    method: str,
    target: str,
    *,
    body: bytes = b"",
    headers: list[tuple[str, str]] | None = None,
    version: str | None = "1.0",
    stream: trio.abc.Stream | None = None,
    content_type: str | None = "application/json",
) -> RawResponse:
    """One request on a new connection (or on ``stream``), read to the end of the response.

    A POST carries ``content_type`` (None: no Content-Type header) and a Content-Length.
    """
    import h11

    own = stream is None
    if stream is None:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
    conn = h11.Connection(h11.CLIENT)
    hs = [("host", f"127.0.0.1:{port}")]
    if version is not None:
        hs.append(("a2a-version", version))
    if method == "POST":
        if content_type is not None:
            hs.append(("content-type", content_type))
        hs.append(("content-length", str(len(body))))
    hs += headers or []
    try:
        await stream.send_all(conn.send(h11.Request(method=method, target=target, headers=hs)))
        if body:
            await stream.send_all(conn.send(h11.Data(data=body)))
        await stream.send_all(conn.send(h11.EndOfMessage()))
        response = None
        data = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(bytes(await stream.receive_some(65536)))
                continue
            if isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                data += event.data
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                break
        assert response is not None
        return RawResponse(
            response.status_code,
            {k.decode(): v.decode() for k, v in response.headers},
            bytes(data),
        )
    finally:
        if own:
            await stream.aclose()


async def start_server(
    nursery: trio.Nursery, handler: Any = None, *, path: str = "/", **limits: Any
) -> tuple[int, Any]:
    """Serve ``handler`` (default: a fresh EchoHandler) on 127.0.0.1:0; return (port, handler)."""
    from agentcade.a2a.server import ServerLimits, serve_a2a

    handler = handler if handler is not None else EchoHandler()
    listeners = (
        await nursery.start(serve_a2a, handler, lambda port: echo_card(port, path), 0)
        if not limits
        else await nursery.start(
            lambda task_status: serve_a2a(
                handler,
                lambda port: echo_card(port, path),
                0,
                limits=ServerLimits(**limits),
                task_status=task_status,
            )
        )
    )
    return int(listeners[0].socket.getsockname()[1]), handler
