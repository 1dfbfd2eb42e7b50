"""A scripted, OpenAI-compatible chat-completions server for tests (trio + h11, real HTTP).

Usage: start it in the pytest-trio ``nursery`` fixture; it serves until the nursery is
cancelled (pytest-trio cancels the fixture nursery when the test ends)::

    async def test_something(nursery):
        fake = await nursery.start(serve_fake_openai)
        fake.push(Reply("你好"), Reply(tool_calls=[("check_answer", {})]), Fail(500))
        model = OpenAIChatModel(fake.settings())      # base_url=fake.url (ends in /v1)
        ...
        assert fake.requests[0]["model"] == "fake-model"
        assert "谜底" not in fake.all_text()          # nothing secret reached the model

Script items (``fake.push(...)``; popped one per request, then ``fake.default``):

* ``Reply(text, tool_calls=[("name", {args})], delay=0.0, chunk_delay=0.0)``: a normal
  completion (``chunk_delay``: seconds between streamed chunks). ``args``
  may be a dict (sent as JSON text) or a str (sent verbatim). With ``"stream": true`` in the
  request it is sent as SSE: ``data: {chunk}\\n\\n`` ... ``data: [DONE]\\n\\n``, text and tool
  arguments split into small deltas.
* ``Fail(status=500, body=..., headers=())``: an error status with a JSON (dict) or raw
  (bytes) body. The openai client retries 408/409/429/5xx; ``("retry-after-ms", "10")``
  keeps its backoff short, ``("x-should-retry", "false")`` turns the retry off.
* ``Garbage(raw, status=200)``: ``raw`` bytes as the body, ``application/json`` (or
  ``text/event-stream`` for streamed requests).
* ``Hang()``: read the request and never answer.
* a callable ``(request_json) -> item``: decides per request.

Routes: ``POST /v1/chat/completions`` and ``POST /chat/completions``; anything else is 404.
Connections are kept alive (HTTP/1.1), one request at a time per connection, as h11 does.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import h11
import trio

from agentcade.core.settings import LLMSettings

__all__ = [
    "Fail",
    "FakeOpenAI",
    "Garbage",
    "Hang",
    "Item",
    "Reply",
    "serve_fake_openai",
]


@dataclass(frozen=True)
class Reply:
    """A completion: ``text`` and/or ``tool_calls`` as ``(name, args)`` pairs."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    delay: float = 0.0
    chunk_delay: float = 0.0
    """Seconds between streamed chunks (a model generating at a given speed)."""


@dataclass(frozen=True)
class Fail:
    """An HTTP error status, with extra response ``headers`` (e.g. ``retry-after-ms``)."""

    status: int = 500
    body: dict[str, Any] | bytes = field(
        default_factory=lambda: {"error": {"message": "fake failure", "type": "server_error"}}
    )
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Garbage:
    """A response whose body is ``raw`` verbatim."""

    raw: bytes = b"this is not json"
    status: int = 200


@dataclass(frozen=True)
class Hang:
    """Never answer."""


Item = Reply | Fail | Garbage | Hang | Callable[[dict[str, Any]], "Reply | Fail | Garbage | Hang"]

_CHUNK = 4  # characters per streamed text/argument delta: small, so assembly is exercised


class FakeOpenAI:
    """State of one fake server: its script, the requests it saw, its address."""

    def __init__(self, port: int, default: Item) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v1"
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.default: Item = default
        self._script: deque[Item] = deque()
        self._count = 0
        self._arrived = trio.Event()
        # The audio endpoints (/v1/audio/transcriptions, /v1/audio/speech):
        self.audio_requests: list[tuple[str, dict[str, str], bytes]] = []
        """``(path, headers, body)`` of every audio request."""
        self.transcript = "你好"
        """What /audio/transcriptions answers."""
        self.speech = b"\x01\x00" * 2400
        """What /audio/speech answers (raw PCM, or a WAV to test that path)."""
        self.audio_status = 200
        self.audio_delay = 0.0

    def push(self, *items: Item) -> None:
        """Queue responses for the next requests, in order."""
        self._script.extend(items)

    async def wait_requests(self, count: int) -> None:
        """Wait until the server has received ``count`` requests in all."""
        while len(self.requests) < count:
            await self._arrived.wait()

    @property
    def pending(self) -> int:
        """How many scripted items are still queued."""
        return len(self._script)

    def settings(self, **overrides: Any) -> LLMSettings:
        """``LLMSettings`` pointing at this server (key ``sk-fake-secret``, model ``fake-model``)."""
        data: dict[str, Any] = {
            "base_url": self.url,
            "api_key": "sk-fake-secret",
            "model": "fake-model",
            "timeout": 5.0,
        }
        data.update(overrides)
        return LLMSettings(**data)

    def system_prompts(self) -> list[str]:
        """Every system message content, over all requests, in order."""
        return [
            _content_text(message.get("content"))
            for request in self.requests
            for message in request.get("messages", [])
            if message.get("role") == "system"
        ]

    def all_text(self) -> str:
        """Everything the model saw: message contents, tool-call arguments and tool schemas."""
        parts: list[str] = []
        for request in self.requests:
            for message in request.get("messages", []):
                parts.append(_content_text(message.get("content")))
                for call in message.get("tool_calls") or []:
                    function = call.get("function", {})
                    parts.extend([str(function.get("name", "")), str(function.get("arguments", ""))])
            if "tools" in request:
                parts.append(json.dumps(request["tools"], ensure_ascii=False))
        return "\n".join(parts)

    def _next_item(self, request: dict[str, Any]) -> Reply | Fail | Garbage | Hang:
        item = self._script.popleft() if self._script else self.default
        if callable(item) and not isinstance(item, Reply | Fail | Garbage | Hang):
            item = item(request)
        return item

    # ------------------------------------------------------------------ HTTP

    async def _handle_connection(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = await _read_request(conn, stream)
                if request is None:
                    return
                await self._respond(conn, stream, request, body)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (h11.ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError):
            return
        finally:
            await trio.aclose_forcefully(stream)

    async def _respond(
        self, conn: h11.Connection, stream: trio.SocketStream, request: h11.Request, body: bytes
    ) -> None:
        path = request.target.decode("latin-1").split("?", 1)[0]
        if request.method == b"POST" and path in ("/v1/audio/transcriptions", "/v1/audio/speech"):
            headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
            self.audio_requests.append((path, headers, body))
            if self.audio_delay:
                await trio.sleep(self.audio_delay)
            if self.audio_status != 200:
                await _send_body(conn, stream, self.audio_status, {"error": {"message": "refused"}})
            elif path.endswith("transcriptions"):
                await _send_body(conn, stream, 200, {"text": self.transcript})
            else:
                await _send_body(conn, stream, 200, self.speech, content_type=b"audio/pcm")
            return
        if request.method != b"POST" or path not in ("/v1/chat/completions", "/chat/completions"):
            await _send_body(conn, stream, 404, {"error": {"message": f"no route {path}"}})
            return
        try:
            payload = json.loads(body)
        except ValueError:
            await _send_body(conn, stream, 400, {"error": {"message": "body is not JSON"}})
            return
        self.requests.append(payload)
        self._arrived.set()
        self._arrived = trio.Event()
        self.paths.append(path)
        self._count += 1
        item = self._next_item(payload)
        streamed = bool(payload.get("stream"))
        match item:
            case Hang():
                await trio.sleep_forever()
            case Fail(status=status, body=fail_body, headers=extra):
                await _send_body(conn, stream, status, fail_body, extra_headers=extra)
            case Garbage(raw=raw, status=status):
                kind = b"text/event-stream" if streamed else b"application/json"
                await _send_body(conn, stream, status, raw, content_type=kind)
            case Reply():
                if item.delay:
                    await trio.sleep(item.delay)
                completion_id = f"chatcmpl-fake-{self._count}"
                model = str(payload.get("model", "fake-model"))
                if streamed:
                    chunks = _chunks(item, completion_id, model)
                    await _send_stream(conn, stream, chunks, item.chunk_delay)
                else:
                    await _send_body(conn, stream, 200, _completion(item, completion_id, model))


async def serve_fake_openai(
    *,
    default: Item | None = None,
    task_status: trio.TaskStatus[FakeOpenAI] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve a ``FakeOpenAI`` on 127.0.0.1 (dynamic port) until cancelled.

    Args:
        default: the response once the script is empty (default ``Reply("好的。")``); pass
            it with ``functools.partial`` since ``nursery.start`` takes no keywords.
        task_status: receives the ``FakeOpenAI`` once the socket listens.
    """
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    fake = FakeOpenAI(port, default if default is not None else Reply("好的。"))
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, fake._handle_connection, listeners)
        task_status.started(fake)


# ---------------------------------------------------------------------- h11 glue


async def _read_request(
    conn: h11.Connection, stream: trio.SocketStream
) -> tuple[h11.Request | None, bytes]:
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(bytes(await stream.receive_some(65536)))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return request, bytes(body)
        else:  # ConnectionClosed (client went away between requests) or PAUSED
            return None, b""


async def _send(conn: h11.Connection, stream: trio.SocketStream, event: h11.Event) -> None:
    data = conn.send(event)
    try:
        if data:
            await stream.send_all(data)
    except BaseException:
        # Especially trio.Cancelled: the connection is now in an unknown state.
        conn.send_failed()
        raise


async def _send_body(
    conn: h11.Connection,
    stream: trio.SocketStream,
    status: int,
    body: dict[str, Any] | bytes,
    *,
    content_type: bytes = b"application/json",
    extra_headers: tuple[tuple[str, str], ...] = (),
) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    headers = [(b"content-type", content_type), (b"content-length", str(len(data)).encode())]
    headers += [(name.encode(), value.encode()) for name, value in extra_headers]
    await _send(conn, stream, h11.Response(status_code=status, headers=headers))
    await _send(conn, stream, h11.Data(data=data))
    await _send(conn, stream, h11.EndOfMessage())


async def _send_stream(
    conn: h11.Connection,
    stream: trio.SocketStream,
    chunks: list[dict[str, Any]],
    chunk_delay: float = 0.0,
) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await _send(conn, stream, h11.Response(status_code=200, headers=headers))  # chunked
    for chunk in chunks:
        line = "data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n"
        await _send(conn, stream, h11.Data(data=line.encode()))
        if chunk_delay:
            await trio.sleep(chunk_delay)
        else:
            await trio.lowlevel.checkpoint()
    await _send(conn, stream, h11.Data(data=b"data: [DONE]\n\n"))
    await _send(conn, stream, h11.EndOfMessage())


# ---------------------------------------------------------------------- payloads


def _arguments(args: dict[str, Any] | str) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _completion(reply: Reply, completion_id: str, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {"name": name, "arguments": _arguments(args)},
            }
            for index, (name, args) in enumerate(reply.tool_calls)
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunks(reply: Reply, completion_id: str, model: str) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    for start in range(0, len(reply.text), _CHUNK):
        chunks.append(chunk({"content": reply.text[start : start + _CHUNK]}))
    for index, (name, args) in enumerate(reply.tool_calls):
        head = {"index": index, "id": f"call_{index}", "type": "function"}
        chunks.append(chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}))
        text = _arguments(args)
        for start in range(0, len(text), _CHUNK):
            piece = {"index": index, "function": {"arguments": text[start : start + _CHUNK]}}
            chunks.append(chunk({"tool_calls": [piece]}))
    chunks.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    return chunks


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""
