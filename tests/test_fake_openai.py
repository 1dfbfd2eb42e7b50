"""The fake OpenAI server itself: raw HTTP over one socket (keep-alive, SSE, routes)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import h11
import trio

from agentcade.testing.fake_openai import Fail, FakeOpenAI, Garbage, Hang, Reply, serve_fake_openai

BODY = {"model": "m", "messages": [{"role": "system", "content": "规则"}, {"role": "user", "content": "你好"}]}


class Client:
    """A minimal h11 client on one TCP connection, to see exactly what the server sends."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.conn = h11.Connection(h11.CLIENT)

    async def request(self, target: str, body: dict[str, Any] | bytes) -> tuple[int, bytes, dict[bytes, bytes]]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                   (b"content-length", str(len(data)).encode())]  # fmt: skip
        for sent in (h11.Request(method="POST", target=target, headers=headers), h11.Data(data=data),
                     h11.EndOfMessage()):  # fmt: skip
            await self.stream.send_all(self.conn.send(sent) or b"")
        status, out = 0, bytearray()
        response_headers: dict[bytes, bytes] = {}
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                status, response_headers = event.status_code, dict(event.headers)
            elif isinstance(event, h11.Data):
                out += event.data
            elif isinstance(event, h11.EndOfMessage):
                self.conn.start_next_cycle()
                return status, bytes(out), response_headers


async def connect(fake: FakeOpenAI, nursery: trio.Nursery) -> Client:
    """A client whose socket closes when the test ends (the nursery fixture's teardown)."""
    client = Client(await trio.open_tcp_stream("127.0.0.1", fake.port))

    async def close_at_teardown() -> None:
        try:
            await trio.sleep_forever()
        finally:
            await trio.aclose_forcefully(client.stream)

    nursery.start_soon(close_at_teardown)
    return client


async def test_plain_reply_with_tool_calls_and_keep_alive(nursery: trio.Nursery) -> None:
    fake = await nursery.start(serve_fake_openai)
    assert fake.url == f"http://127.0.0.1:{fake.port}/v1"
    fake.push(Reply("你好", tool_calls=[("check", {"n": 3}), ("raw", "{not json")]))
    client = await connect(fake, nursery)

    status, body, _ = await client.request("/v1/chat/completions", BODY)
    assert status == 200
    message = json.loads(body)["choices"][0]["message"]
    assert message["content"] == "你好"
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        ("check", '{"n": 3}'),
        ("raw", "{not json"),
    ]
    # Same connection, second request: the default reply; the other route works too.
    status, body, _ = await client.request("/chat/completions", BODY)
    assert status == 200
    assert json.loads(body)["choices"][0]["message"]["content"] == "好的。"
    assert fake.paths == ["/v1/chat/completions", "/chat/completions"]
    assert fake.requests == [BODY, BODY]
    assert fake.system_prompts() == ["规则", "规则"]
    assert "你好" in fake.all_text()


async def test_streamed_reply_is_sse(nursery: trio.Nursery) -> None:
    fake = await nursery.start(serve_fake_openai)
    fake.push(Reply("一二三四五六", tool_calls=[("guess", {"number": 15})]))
    client = await connect(fake, nursery)

    status, body, headers = await client.request("/v1/chat/completions", {**BODY, "stream": True})

    assert status == 200
    assert headers[b"content-type"] == b"text/event-stream"
    assert headers[b"transfer-encoding"] == b"chunked"
    events = body.decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    arguments = "".join(
        call["function"].get("arguments", "")
        for c in chunks
        for call in c["choices"][0]["delta"].get("tool_calls", [])
    )
    assert text == "一二三四五六"
    assert json.loads(arguments) == {"number": 15}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_failures_garbage_callables_and_404(nursery: trio.Nursery) -> None:
    fake = await nursery.start(partial(serve_fake_openai, default=Reply("默认")))
    seen: list[dict[str, Any]] = []

    def dynamic(request: dict[str, Any]) -> Reply:
        seen.append(request)
        return Reply(f"第 {len(fake.requests)} 次")

    fake.push(Fail(503), Garbage(b"<html>"), dynamic)
    client = await connect(fake, nursery)

    status, body, _ = await client.request("/v1/chat/completions", BODY)
    assert status == 503
    assert json.loads(body)["error"]["message"] == "fake failure"
    assert (await client.request("/v1/chat/completions", BODY))[1] == b"<html>"
    status, body, _ = await client.request("/v1/chat/completions", BODY)
    assert json.loads(body)["choices"][0]["message"]["content"] == "第 3 次"
    assert seen == [BODY]
    assert fake.pending == 0
    assert (await client.request("/v1/other", BODY))[0] == 404
    assert (await client.request("/v1/chat/completions", b"{oops"))[0] == 400
    assert len(fake.requests) == 3  # 404 and 400 are not recorded


async def test_hang_never_answers(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    fake = await nursery.start(serve_fake_openai)
    fake.push(Hang())
    client = await connect(fake, nursery)
    with trio.move_on_after(1000) as scope:
        await client.request("/v1/chat/completions", BODY)
    assert scope.cancelled_caught
    assert len(fake.requests) == 1
