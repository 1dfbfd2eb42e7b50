"""Our A2A client: against our server, and against hand-written peers for every error kind."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial

import pytest
import trio
import trio.testing

from agentcade.a2a.client import A2AClient, GameRemoteError
from agentcade.core.protocol import GameInput, GameReply
from tests.a2a_peers import EchoHandler, start_server

START = GameInput(kind="start", text="你好")


async def test_client_against_our_server(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    client = A2AClient()
    card, info = await client.fetch_card(f"http://127.0.0.1:{port}/")
    assert card["name"] == "回声"
    assert info.game_id == "echo"
    async with client.stream(info.url, "ctx-c", START, protocol="desktop-game/5") as replies:
        got = [(r, final) async for r, final in replies]
    assert got == [
        (GameReply(protocol="desktop-game/5", text="稍等"), False),
        (GameReply(protocol="desktop-game/5", text="开始：你好"), True),
    ]
    assert handler.inputs == [("ctx-c", START.model_copy(update={"protocol": "desktop-game/5"}))]
    assert [r.text for r in await client.send(info.url, "ctx-c", GameInput(kind="end"))] == [
        "稍等",
        "再见",
    ]


async def test_cancelling_the_client_cancels_the_game(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    handler = EchoHandler(delay=30)
    port, _ = await start_server(nursery, handler)
    client = A2AClient()
    with trio.move_on_after(0.3) as scope:
        async with client.stream(f"http://127.0.0.1:{port}/", "c", START) as replies:
            async for _ in replies:
                pass
    assert scope.cancelled_caught
    with trio.fail_after(5):
        await handler.cancelled_event.wait()


# ------------------------------------------------------------------ hand-written peers

Peer = Callable[[trio.SocketStream, bytes], Awaitable[None]]


async def _serve_peer(nursery: trio.Nursery, peer: Peer, seen: list[bytes]) -> str:
    async def handle(stream: trio.SocketStream) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive_some(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        while len(rest) < length:
            rest += await stream.receive_some(65536)
        seen.append(head + b"\r\n\r\n" + rest)
        try:
            await peer(stream, rest)
        finally:
            await stream.aclose()

    listeners = await nursery.start(partial(trio.serve_tcp, handle, 0, host="127.0.0.1"))
    port = listeners[0].socket.getsockname()[1]
    return f"http://127.0.0.1:{port}/rpc"


def _event(result: dict, *, lf: bool = False) -> bytes:
    text = "data: " + json.dumps(
        {"result": result, "id": "x", "jsonrpc": "2.0"}, separators=(",", ":")
    )
    return (text + ("\n\n" if lf else "\r\n\r\n")).encode()


def _status(state: str | int, parts: list | None) -> dict:
    status: dict = {"state": state}
    if parts is not None:
        status["message"] = {"messageId": "m", "role": "ROLE_AGENT", "parts": parts}
    return {"statusUpdate": {"taskId": "t", "contextId": "c", "status": status}}


def _reply(text: str, **extra: object) -> list:
    return [{"data": {"protocol": "agentcade/1", "text": text, **extra}}]


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"


async def test_request_headers_and_body(nursery: trio.Nursery) -> None:
    seen: list[bytes] = []

    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(SSE_HEAD + _event(_status("TASK_STATE_COMPLETED", _reply("ok"))))

    url = await _serve_peer(nursery, peer, seen)
    await A2AClient().send(
        url, "ctx-42", GameInput(kind="message", text="水"), protocol="agentcade/1"
    )
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /rpc HTTP/1.1"
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    assert headers["a2a-version"] == "1.0"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "text/event-stream"
    assert headers["x-a2a-context-id"] == "ctx-42"
    request = json.loads(body)
    assert list(request) == ["method", "params", "id", "jsonrpc"]
    assert request["method"] == "SendStreamingMessage"
    message = request["params"]["message"]
    assert message["contextId"] == "ctx-42"
    assert message["role"] == "ROLE_USER"
    assert message["parts"] == [
        {"data": {"protocol": "agentcade/1", "kind": "message", "text": "水"}}
    ]


async def test_lenient_sse_lf_comments_multiline_text_only_and_close_delimited(
    nursery: trio.Nursery,
) -> None:
    multi = 'data: {"result": {"statusUpdate": {"taskId": "t", "contextId": "c",\ndata: "status": {"state": "TASK_STATE_WORKING", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "只有文字"}]}}}}, "id": "x", "jsonrpc": "2.0"}\n\n'

    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(
            SSE_HEAD
            + b": ping\n\n"
            + _event(
                {
                    "task": {
                        "id": "t",
                        "contextId": "c",
                        "status": {"state": "TASK_STATE_SUBMITTED"},
                    }
                },
                lf=True,
            )
            + multi.encode()
            + _event(_status("TASK_STATE_WORKING", None), lf=True)  # no message: no reply
            + _event(
                {
                    "artifactUpdate": {
                        "taskId": "t",
                        "contextId": "c",
                        "artifact": {"artifactId": "a", "parts": []},
                    }
                }
            )
            + _event(
                _status(
                    2,
                    _reply(
                        "directives only",
                        directives=[{"call": "lights.set_color", "args": ["#00FF00"]}],
                    ),
                )
            )
            + _event(_status("TASK_STATE_INPUT_REQUIRED", _reply("你猜？")))
        )

    url = await _serve_peer(nursery, peer, [])
    async with A2AClient().stream(url, "c", START) as replies:
        got = [(r.text, final) async for r, final in replies]
    assert got == [("只有文字", False), ("directives only", False), ("你猜？", True)]


async def test_message_payload_is_final(nursery: trio.Nursery) -> None:
    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(
            SSE_HEAD
            + _event(
                {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}
            )
        )
        await trio.sleep_forever()  # the client must not wait for EOF

    url = await _serve_peer(nursery, peer, [])
    with trio.fail_after(5):
        assert [r.text for r in await A2AClient().send(url, "c", START)] == ["hi"]


async def test_unary_json_result_is_accepted(nursery: trio.Nursery) -> None:
    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        payload = json.dumps(
            {
                "result": {
                    "task": {
                        "id": "t",
                        "status": {
                            "state": "TASK_STATE_COMPLETED",
                            "message": {
                                "messageId": "m",
                                "role": "ROLE_AGENT",
                                "parts": _reply("done"),
                            },
                        },
                    }
                },
                "id": "x",
                "jsonrpc": "2.0",
            }
        ).encode()
        await stream.send_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
            + str(len(payload)).encode()
            + b"\r\n\r\n"
            + payload
        )

    url = await _serve_peer(nursery, peer, [])
    assert [r.text for r in await A2AClient().send(url, "c", START)] == ["done"]


def _json_response(obj: object, status: int = 200) -> bytes:
    payload = json.dumps(obj).encode()
    return (
        f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n".encode()
        + payload
    )


ERROR_PEERS: list[tuple[str, bytes, str, str]] = [
    ("http 500", b"HTTP/1.1 500 Oops\r\ncontent-length: 4\r\n\r\nboom", "http", "HTTP 500"),
    (
        "rpc error",
        _json_response(
            {"error": {"code": -32602, "message": "Validation failed"}, "id": "x", "jsonrpc": "2.0"}
        ),
        "rpc",
        "-32602: Validation failed",
    ),
    (
        "error event",
        SSE_HEAD
        + b'event: error\r\ndata: {"error": {"code": -32603, "message": "boom from executor"}, "id": "x", "jsonrpc": "2.0"}\r\n\r\n',
        "rpc",
        "boom from executor",
    ),
    (
        "failed",
        SSE_HEAD + _event(_status("TASK_STATE_FAILED", _reply("游戏坏了"))),
        "failed",
        "游戏坏了",
    ),
    ("rejected", SSE_HEAD + _event(_status("TASK_STATE_REJECTED", None)), "failed", "failed"),
    ("canceled", SSE_HEAD + _event(_status("TASK_STATE_CANCELED", None)), "canceled", "canceled"),
    ("bad json", SSE_HEAD + b"data: {nope\r\n\r\n", "protocol", "invalid JSON"),
    (
        "not a reply",
        SSE_HEAD + _event(_status("TASK_STATE_COMPLETED", [{"data": {"text": "no protocol"}}])),
        "protocol",
        "no 'protocol' field",
    ),
    (
        "final without message",
        SSE_HEAD + _event(_status("TASK_STATE_COMPLETED", None)),
        "protocol",
        "carries no reply",
    ),
    (
        "eof before final",
        SSE_HEAD + _event(_status("TASK_STATE_WORKING", _reply("..."))),
        "protocol",
        "before its final reply",
    ),
    (
        "reply in another protocol version",
        SSE_HEAD
        + _event(
            _status(
                "TASK_STATE_COMPLETED",
                [{"data": {"protocol": "desktop-game/5", "text": "旧版本"}}],
            )
        ),
        "protocol",
        "replied in protocol 'desktop-game/5', not the negotiated 'agentcade/1'",
    ),
    (
        "unary reply in another protocol version",
        _json_response(
            {
                "result": {
                    "task": {
                        "id": "t",
                        "status": {
                            "state": "TASK_STATE_COMPLETED",
                            "message": {
                                "messageId": "m",
                                "role": "ROLE_AGENT",
                                "parts": [{"data": {"protocol": "desktop-game/5", "text": "x"}}],
                            },
                        },
                    }
                },
                "id": "x",
                "jsonrpc": "2.0",
            }
        ),
        "protocol",
        "not the negotiated 'agentcade/1'",
    ),
    (
        "empty data event then eof",
        SSE_HEAD + b"data:\r\n\r\n",
        "protocol",
        "before its final reply",
    ),
    ("garbage http", b"SPDY/9 what\r\n\r\n", "protocol", "bad HTTP"),
    ("closed", b"", "network", "closed the connection"),
]


@pytest.mark.parametrize(
    ("name", "raw", "kind", "needle"), ERROR_PEERS, ids=[e[0] for e in ERROR_PEERS]
)
async def test_every_failure_is_a_game_remote_error(
    nursery: trio.Nursery, name: str, raw: bytes, kind: str, needle: str
) -> None:
    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(raw)

    url = await _serve_peer(nursery, peer, [])
    with pytest.raises(GameRemoteError) as info:
        await A2AClient().send(url, "c", START)
    assert info.value.kind == kind
    assert needle in info.value.message


async def test_a_text_only_reply_takes_the_negotiated_version(nursery: trio.Nursery) -> None:
    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(
            SSE_HEAD + b"\xef\xbb\xbf" + _event(_status("TASK_STATE_COMPLETED", [{"text": "好"}]))
        )

    url = await _serve_peer(nursery, peer, [])
    replies = await A2AClient().send(url, "c", START, protocol="desktop-game/5")
    assert replies == [GameReply(protocol="desktop-game/5", text="好")]


async def test_silence_is_a_timeout_and_pings_do_not_count(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(SSE_HEAD + _event(_status("TASK_STATE_WORKING", _reply("..."))))
        while True:
            await trio.sleep(0.05)
            await stream.send_all(b": ping\r\n\r\n")

    url = await _serve_peer(nursery, peer, [])
    client = A2AClient(reply_timeout=0.3)
    got: list[str] = []

    async def play() -> None:
        async with client.stream(url, "c", START) as replies:
            async for reply, _ in replies:
                got.append(reply.text)

    with pytest.raises(GameRemoteError) as info:
        await play()
    assert got == ["..."]
    assert info.value.kind == "timeout"


async def test_connection_refused_is_network() -> None:
    with trio.socket.socket() as sock:
        await sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = A2AClient()
    with pytest.raises(GameRemoteError) as info:
        await client.send(f"http://127.0.0.1:{port}/", "c", START)
    assert info.value.kind == "network"
    with pytest.raises(GameRemoteError) as info:
        await client.fetch_card(f"http://127.0.0.1:{port}")
    assert info.value.kind == "network"


async def test_fetch_card_errors(nursery: trio.Nursery) -> None:
    async def peer(stream: trio.SocketStream, body: bytes) -> None:
        await stream.send_all(_json_response({"name": "x", "skills": []}))

    url = await _serve_peer(nursery, peer, [])
    with pytest.raises(GameRemoteError) as info:
        await A2AClient().fetch_card(url.removesuffix("/rpc"))
    assert info.value.kind == "card"
    assert "JSONRPC" in info.value.message


async def test_interim_1xx_responses_are_ignored(nursery: trio.Nursery) -> None:
    """Regression (review): a 103 Early Hints (some CDNs send them) before the real
    response made the client fail with a bare AssertionError."""
    event = {
        "result": {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {
            "state": "TASK_STATE_COMPLETED",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [
                {"data": {"protocol": "agentcade/1", "text": "hi", "session": "active"}}]},
        }}},
        "id": "1", "jsonrpc": "2.0",
    }  # fmt: skip

    async def game_behind_a_cdn(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await stream.send_all(
            b"HTTP/1.1 103 Early Hints\r\nlink: </x>; rel=preload\r\n\r\n"
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
            b"data: " + json.dumps(event).encode() + b"\r\n\r\n"
        )
        await stream.aclose()

    listeners = await nursery.start(trio.serve_tcp, game_behind_a_cdn, 0)
    port = listeners[0].socket.getsockname()[1]
    replies = await A2AClient(reply_timeout=5).send(
        f"http://127.0.0.1:{port}/", "c", GameInput(kind="start")
    )
    assert [r.text for r in replies] == ["hi"]
