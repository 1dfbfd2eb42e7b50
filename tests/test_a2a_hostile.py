"""Hostile and broken clients: every one is answered (or dropped) and nobody else notices."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from agentcade.a2a.client import A2AClient
from agentcade.a2a.server import A2AServer, ServerLimits
from agentcade.core.protocol import GameInput
from tests.a2a_peers import (
    EchoHandler,
    echo_card,
    game_input,
    http_request,
    rpc_body,
    send_params,
    start_server,
)

UNTAKEN_PARTS = [
    ("raw part", [{"raw": "AAEC"}], "not raw bytes"),
    ("url part", [{"url": "https://example.org/x.png"}], "not a file URL"),
    ("image part", [{"raw": "AAEC", "mediaType": "image/png"}], "not image/png"),
    (
        "text declared as audio",
        [{"text": "hi", "mediaType": "audio/wav"}, {"url": "https://x/y", "mediaType": "video/mp4"}],
        "not audio/wav, video/mp4",
    ),
]


@pytest.mark.parametrize(
    ("name", "parts", "needle"), UNTAKEN_PARTS, ids=[b[0] for b in UNTAKEN_PARTS]
)
async def test_parts_the_game_cannot_take_are_content_type_not_supported(
    nursery: trio.Nursery, name: str, parts: list, needle: str
) -> None:
    port, handler = await start_server(nursery)
    body = rpc_body("SendStreamingMessage", send_params(parts=parts))
    resp = await http_request(
        port, "POST", "/", body=body, headers=[("accept", "text/event-stream")]
    )
    assert resp.headers["content-type"] == "application/json"
    error = resp.json()["error"]
    assert error["code"] == -32005
    assert error["data"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    assert "application/json or text/plain" in error["message"]
    assert needle in error["message"], error["message"]
    assert handler.inputs == []


async def test_an_image_beside_a_game_input_is_ignored(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    parts = [{"raw": "AAEC", "mediaType": "image/png"}, {"data": game_input(text="看")}]
    body = rpc_body("SendMessage", send_params(parts=parts))
    resp = await http_request(port, "POST", "/", body=body)
    assert resp.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [i.text for _, i in handler.inputs] == ["看"]


BAD_PARTS = [
    ("data is a list", [{"data": [1, 2]}], "GameInput must be a JSON object, got list"),
    ("data is a string", [{"data": "start"}], "GameInput must be a JSON object, got str"),
    ("no protocol", [{"data": {"kind": "start"}}], "has no 'protocol' field"),
    (
        "unknown protocol",
        [{"data": game_input(protocol="agentcade/9")}],
        "unknown protocol version 'agentcade/9'",
    ),
    ("bad kind", [{"data": game_input(kind="restart")}], "invalid GameInput: kind"),
    ("reason on message", [{"data": game_input(reason="user")}], "reason is only allowed"),
    ("empty part", [{"metadata": {}}], "carries no GameInput"),
]


@pytest.mark.parametrize(("name", "parts", "needle"), BAD_PARTS, ids=[b[0] for b in BAD_PARTS])
async def test_wrong_parts_are_invalid_params(
    nursery: trio.Nursery, name: str, parts: list, needle: str
) -> None:
    port, handler = await start_server(nursery)
    body = rpc_body("SendStreamingMessage", send_params(parts=parts))
    resp = await http_request(
        port, "POST", "/", body=body, headers=[("accept", "text/event-stream")]
    )
    assert resp.headers["content-type"] == "application/json"
    error = resp.json()["error"]
    assert error["code"] == -32602
    assert needle in error["message"], error["message"]
    assert handler.inputs == []


async def _raw(port: int, data: bytes, *, eof: bool = False) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    try:
        await stream.send_all(data)
        if eof:
            await stream.send_eof()
        out = b""
        with trio.fail_after(5):
            while chunk := await stream.receive_some(65536):
                out += chunk
        return out
    finally:
        await stream.aclose()


async def test_body_over_10_mib_is_413_before_reading(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    size = 10 * 1024 * 1024 + 1
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {size}\r\n\r\n"
    out = await _raw(port, head.encode() + b"{" * 1000)  # the rest is never sent
    assert out.startswith(b"HTTP/1.1 413 ")


async def test_chunked_body_over_the_limit_is_413(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery, max_body=1000)
    head = b"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ntransfer-encoding: chunked\r\n\r\n"
    chunk = b"200\r\n" + b" " * 0x200 + b"\r\n"
    out = await _raw(port, head + chunk * 3)
    assert out.startswith(b"HTTP/1.1 413 ")


async def test_header_too_large_is_431(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    head = (
        b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: x\r\nx-big: "
        + b"a" * 20000
        + b"\r\n\r\n"
    )
    out = await _raw(port, head)
    assert out.startswith(b"HTTP/1.1 431 ")


async def test_garbage_is_400(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    assert (await _raw(port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")).startswith(
        b"HTTP/1.1 400 "
    )


def _serve_memory(server: A2AServer, nursery: trio.Nursery) -> trio.testing.MemoryStreamPair:  # type: ignore[name-defined]
    client, server_stream = trio.testing.memory_stream_pair()
    nursery.start_soon(server.handle_connection, server_stream)
    return client


async def test_slow_client_gets_408_after_exactly_the_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = A2AServer(EchoHandler(), echo_card(1), limits=ServerLimits(request_timeout=10))
    async with trio.open_nursery() as nursery:
        client = _serve_memory(server, nursery)
        t0 = trio.current_time()
        await client.send_all(b"POST / HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        assert (await client.receive_some()).startswith(b"HTTP/1.1 408 ")
        assert trio.current_time() - t0 == 10


async def test_slow_body_gets_408(autojump_clock: trio.testing.MockClock) -> None:
    server = A2AServer(EchoHandler(), echo_card(1), limits=ServerLimits(request_timeout=10))
    async with trio.open_nursery() as nursery:
        client = _serve_memory(server, nursery)
        await client.send_all(b"POST / HTTP/1.1\r\nHost: x\r\ncontent-length: 100\r\n\r\n{")
        assert (await client.receive_some()).startswith(b"HTTP/1.1 408 ")


async def test_idle_keep_alive_connection_is_closed_quietly(
    autojump_clock: trio.testing.MockClock,
) -> None:
    server = A2AServer(EchoHandler(), echo_card(1), limits=ServerLimits(idle_timeout=20))
    async with trio.open_nursery() as nursery:
        client = _serve_memory(server, nursery)
        await client.send_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
        t0 = trio.current_time()
        received = b""
        while data := await client.receive_some():
            received += data
        assert received.startswith(b"HTTP/1.1 200 ")
        assert trio.current_time() - t0 == 20


async def test_client_that_stops_reading_is_dropped(autojump_clock: trio.testing.MockClock) -> None:
    server = A2AServer(EchoHandler(), echo_card(1), limits=ServerLimits(write_timeout=5))
    client, server_stream = trio.testing.lockstep_stream_pair()  # writes block until read
    body = rpc_body("SendStreamingMessage", send_params(game_input()))
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client.send_all, head.encode() + body)
        await trio.testing.wait_all_tasks_blocked()
        t0 = trio.current_time()
        await server.handle_connection(server_stream)  # returns: the client was dropped
        assert trio.current_time() - t0 == 5
    assert server.tasks.running == 0


async def test_half_closed_mid_head_is_dropped_without_answer(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    assert await _raw(port, b"POST / HTTP/1.1\r\nHost: x\r\n", eof=True) == b""


async def test_half_closed_after_a_unary_request_still_gets_the_answer(
    nursery: trio.Nursery,
) -> None:
    port, _ = await start_server(nursery)
    body = rpc_body("GetTask", {"id": "nope"})
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
    out = await _raw(port, head.encode() + body, eof=True)
    assert out.startswith(b"HTTP/1.1 200 ")
    assert json.loads(out.split(b"\r\n\r\n", 1)[1])["error"]["code"] == -32001


async def test_half_closed_after_a_streaming_request_cancels_the_turn(
    nursery: trio.Nursery,
) -> None:
    handler = EchoHandler(delay=30)
    port, _ = await start_server(nursery, handler)
    body = rpc_body("SendStreamingMessage", send_params(game_input()))
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
    out = await _raw(port, head.encode() + body, eof=True)
    assert b"TASK_STATE_CANCELED" in out  # EOF from the peer = the client is gone
    assert handler.cancelled == 1


async def test_100_sessions_and_misbehaving_clients(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    handler = EchoHandler(delay=0.05)
    port, _ = await start_server(
        nursery, handler, request_timeout=2, write_timeout=2, idle_timeout=2
    )
    url = f"http://127.0.0.1:{port}/"
    client = A2AClient(reply_timeout=10)
    done: list[int] = []

    async def session(i: int) -> None:
        async with client.stream(url, f"ctx-{i}", GameInput(kind="start", text=str(i))) as replies:
            got = [(r.text, final) async for r, final in replies]
        assert got == [("稍等", False), (f"开始：{i}", True)]
        done.append(i)

    async def slowloris() -> None:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(b"POST / HTTP/1.1\r\n")
        for _ in range(10):
            await trio.sleep(0.1)
            await stream.send_all(b"x-a: b\r\n")
        await stream.aclose()

    async def garbage() -> None:
        await _raw(port, b"\x00" * 5000 + b"\r\n\r\n")

    async def quitter() -> None:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        body = rpc_body("SendStreamingMessage", send_params(game_input()))
        await stream.send_all(
            f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n".encode()
            + body[:20]
        )
        await stream.aclose()

    async def huge() -> None:
        await _raw(port, b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 99999999999\r\n\r\n")

    with trio.fail_after(20):
        async with trio.open_nursery() as inner:
            for bad in (slowloris, garbage, quitter, huge):
                inner.start_soon(bad)
            for i in range(100):
                inner.start_soon(session, i)
    assert sorted(done) == list(range(100))
