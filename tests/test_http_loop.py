"""One HTTP/1.1 loop serves the A2A server, the local pages and the simulated Daemon.

The same hostile request gets the same answer, byte for byte in its error body, from all
three: the loop (``agentcade.net.server``) refuses it before any route is reached.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import trio
import trio.testing

from agentcade.a2a.server import A2AServer
from agentcade.core.trace import Trace
from agentcade.sim import SimDevice
from agentcade.web import Pages
from tests.a2a_peers import EchoHandler, echo_card
from tests.test_web_server import pages  # noqa: F401  (the pages, served on 127.0.0.1:0)

Connect = Callable[[trio.abc.Stream], object]


@pytest.fixture
def servers(pages: tuple[Pages, Trace]) -> dict[str, Connect]:  # noqa: F811
    """Each server's per-connection entry point, fed in-memory streams."""
    return {
        "a2a": A2AServer(EchoHandler(), echo_card(1)).handle_connection,
        "pages": pages[0].server.handle_connection,
        "daemon": SimDevice().control.handle_connection,
    }


async def exchange(connect: Connect, data: bytes, *, eof: bool = False) -> bytes:
    """Send ``data`` on a fresh connection; everything the server says until it closes."""
    client, server = trio.testing.memory_stream_pair()
    out = b""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(connect, server)  # type: ignore[arg-type]
        await client.send_all(data)
        if eof:
            await client.send_eof()
        while chunk := await client.receive_some():
            out += chunk
    return out


def shape(answer: bytes) -> tuple[bytes, dict[str, str], object]:
    """Status line, the headers that make the shape, and the JSON body."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = dict(line.decode().lower().split(": ", 1) for line in lines)
    kept: dict[str, str] = {k: headers[k] for k in ("content-type", "connection") if k in headers}
    return status, kept, json.loads(body)


HOSTILE = {
    "malformed request line": (b"GET\x00 / HTTP/1.1\r\nhost: x\r\n\r\n", 400),
    "head over 16 KiB": (b"GET / HTTP/1.1\r\nhost: x\r\nx-big: " + b"a" * 20000 + b"\r\n\r\n", 431),
    "declared body over every limit": (
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 99999999\r\n\r\n{",
        413,
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
async def test_a_hostile_request_gets_the_same_error_from_all_three(
    servers: dict[str, Connect], name: str
) -> None:
    data, status = HOSTILE[name]
    answers = {kind: shape(await exchange(connect, data)) for kind, connect in servers.items()}
    a2a = answers.pop("a2a")
    assert a2a[0].startswith(b"HTTP/1.1 %d " % status)
    assert a2a[1] == {"content-type": "application/json", "connection": "close"}
    assert isinstance(a2a[2], dict)
    assert list(a2a[2]) == ["error"]
    assert answers == {"pages": a2a, "daemon": a2a}


async def test_a_slow_client_gets_the_same_408_from_all_three(
    servers: dict[str, Connect], autojump_clock: trio.testing.MockClock
) -> None:
    answers = {
        kind: shape(await exchange(connect, b"POST / HTTP/1.1\r\nhost: x\r\n"))
        for kind, connect in servers.items()
    }
    assert answers["a2a"] == (
        b"HTTP/1.1 408 ",
        {"content-type": "application/json", "connection": "close"},
        {"error": "request timeout"},
    )
    assert answers["pages"] == answers["daemon"] == answers["a2a"]


async def test_a_client_that_hangs_up_mid_head_gets_no_answer_from_any(
    servers: dict[str, Connect],
) -> None:
    for connect in servers.values():
        assert await exchange(connect, b"GET / HTTP/1.1\r\nhost", eof=True) == b""
