"""Benchmark: our trio+h11 A2A server vs a2a-sdk's reference server (uvicorn + starlette).

Not a test. Run:  /work/venv/bin/python tests/bench/bench_a2a.py [--seconds 5]

1. Throughput/latency: the echo game (one WORKING + one COMPLETED reply) served by each
   server in its own process; one load generator (trio, raw sockets, keep-alive, one
   connection per virtual client, each loops SendStreamingMessage and reads to the end of
   the chunked SSE body) at 1, 16 and 64 concurrent clients for a fixed duration.
2. "end" latency: a turn waits on a slow handler; an ``end`` for the same context arrives on
   another connection; time from sending ``end`` to its final reply. ``bench_end_cancel``
   takes a handler factory (here: ``EndCancelsHandler``, which cancels the in-flight turn of
   the context, like GameHost will).
3. Memory: RSS growth of each server process after 1,000 sessions (one ``start`` each, on
   1,000 idle keep-alive connections that stay open). Sessions are a GameHost concept; here
   they are our per-request task store (64 finished kept) + idle connections + the echo
   handler's session set; the SDK keeps every task in its InMemoryTaskStore.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.a2a.handler import ReplySink  # noqa: E402
from agentcade.protocol import GameInput, GameReply  # noqa: E402
from tests.a2a_peers import EchoHandler, echo_card, free_port  # noqa: E402

# ------------------------------------------------------------------ servers (subprocesses)


def serve(kind: str, port: int) -> None:
    if kind == "ours":
        from agentcade.a2a.server import serve_a2a

        trio.run(lambda: serve_a2a(EchoHandler(), echo_card(port), port))
    else:
        import uvicorn

        from tests.a2a_peers import sdk_app

        uvicorn.run(sdk_app(port), host="127.0.0.1", port=port, log_level="error", lifespan="off")


def start(kind: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", kind, "--port", str(port)])
    deadline = time.monotonic() + 20
    import socket

    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ------------------------------------------------------------------ load generator


def request_bytes(port: int, context_id: str, kind: str = "message", text: str = "你好") -> bytes:
    body = json.dumps(
        {
            "method": "SendStreamingMessage",
            "params": {
                "message": {
                    "messageId": str(uuid.uuid4()),
                    "contextId": context_id,
                    "role": "ROLE_USER",
                    "parts": [{"data": {"protocol": "agentcade/1", "kind": kind, "text": text}}],
                }
            },
            "id": "b",
            "jsonrpc": "2.0",
        },
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()
    head = (
        f"POST / HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\na2a-version: 1.0\r\n"
        f"content-type: application/json\r\naccept: text/event-stream\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def one_stream(stream: trio.SocketStream, request: bytes) -> bytes:
    """Send one request, read to the end of its chunked body (keep-alive)."""
    await stream.send_all(request)
    buf = b""
    while not buf.endswith(b"\r\n0\r\n\r\n"):
        data = await stream.receive_some(65536)
        if not data:
            raise RuntimeError("server closed the connection")
        buf += data
    if b"TASK_STATE_COMPLETED" not in buf:
        raise RuntimeError(f"no final reply: {buf[:300]!r}")
    return buf


async def load(port: int, clients: int, seconds: float) -> tuple[float, float, float, int]:
    latencies: list[float] = []
    errors = 0
    stop_at = trio.current_time() + seconds

    async def worker(i: int) -> None:
        nonlocal errors
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        request = request_bytes(port, f"ctx-{i}")
        try:
            while trio.current_time() < stop_at:
                t0 = time.perf_counter()
                try:
                    await one_stream(stream, request)
                except (RuntimeError, trio.BrokenResourceError):
                    errors += 1
                    await stream.aclose()
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                    continue
                latencies.append(time.perf_counter() - t0)
        finally:
            await stream.aclose()

    # warm-up
    async with trio.open_nursery() as nursery:
        for i in range(clients):
            nursery.start_soon(worker, i)
    rps = len(latencies) / seconds
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [latencies[0]] * 99
    return rps, q[49] * 1000, q[98] * 1000, errors


async def idle_sessions(port: int, n: int) -> list[trio.SocketStream]:
    streams = []
    for i in range(n):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await one_stream(stream, request_bytes(port, f"idle-{i}", "start", "开始"))
        streams.append(stream)
    return streams


# ------------------------------------------------------------------ end cancels the turn


class EndCancelsHandler:
    """A slow game whose ``end`` cancels the context's in-flight turn (GameHost's rule)."""

    def __init__(self, turn_seconds: float = 30.0) -> None:
        self.turn_seconds = turn_seconds
        self.in_flight: dict[str, trio.CancelScope] = {}

    async def handle(self, context_id: str, game_input: GameInput, emit: ReplySink) -> None:
        if game_input.kind == "end":
            scope = self.in_flight.pop(context_id, None)
            if scope is not None:
                scope.cancel()
            await emit(GameReply(text="再见", session="ended"), True)
            return
        with trio.CancelScope() as scope:
            self.in_flight[context_id] = scope
            await emit(GameReply(text="想一想"), False)
            await trio.sleep(self.turn_seconds)
            await emit(GameReply(text="好了"), True)
        if scope.cancelled_caught:
            await emit(GameReply(text="不玩了"), True)


async def bench_end_cancel(
    handler_factory: Callable[[], Any], rounds: int = 200
) -> tuple[float, float]:
    from agentcade.a2a.server import serve_a2a

    times: list[float] = []
    async with trio.open_nursery() as nursery:
        port_box: list[int] = []
        listeners = await nursery.start(
            serve_a2a, handler_factory(), lambda p: port_box.append(p) or echo_card(p), 0
        )
        port = listeners[0].socket.getsockname()[1]
        for i in range(rounds):
            ctx = f"end-{i}"
            turn = await trio.open_tcp_stream("127.0.0.1", port)
            await turn.send_all(request_bytes(port, ctx, "message", "慢慢想"))
            buf = b""
            while b"TASK_STATE_WORKING" not in buf:
                buf += await turn.receive_some(65536)
            end = await trio.open_tcp_stream("127.0.0.1", port)
            t0 = time.perf_counter()
            await one_stream(end, request_bytes(port, ctx, "end", ""))
            times.append(time.perf_counter() - t0)
            await end.aclose()
            await turn.aclose()
        nursery.cancel_scope.cancel()
    q = statistics.quantiles(times, n=100)
    return q[49] * 1000, q[98] * 1000


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=["ours", "sdk"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--idle", type=int, default=1000)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return

    results: dict[tuple[str, int], tuple[float, float, float, int]] = {}
    memory: dict[str, tuple[int, int]] = {}
    for kind in ("ours", "sdk"):
        proc, port = start(kind)
        try:
            trio.run(load, port, 4, 1.0)  # warm-up
            for clients in (1, 16, 64):
                results[(kind, clients)] = trio.run(load, port, clients, args.seconds)
            before = rss_kib(proc.pid)

            async def idle(port: int = port, proc: subprocess.Popen[bytes] = proc) -> int:
                streams = await idle_sessions(port, args.idle)
                await trio.sleep(0.5)
                after = rss_kib(proc.pid)
                for s in streams:
                    await s.aclose()
                return after

            after = trio.run(idle)
            memory[kind] = (before, after)
        finally:
            proc.terminate()
            proc.wait(10)

    print(f"\nA2A streaming echo, {args.seconds:g} s per row, {os.cpu_count()} CPUs")
    print(
        f"{'clients':>7} | {'ours rps':>9} {'p50 ms':>7} {'p99 ms':>7} | {'sdk rps':>8} {'p50 ms':>7} {'p99 ms':>7} | {'rps x':>6} {'p99 x':>6} | errors"
    )
    for clients in (1, 16, 64):
        o, s = results[("ours", clients)], results[("sdk", clients)]
        print(
            f"{clients:>7} | {o[0]:>9.0f} {o[1]:>7.2f} {o[2]:>7.2f} | {s[0]:>8.0f} {s[1]:>7.2f} {s[2]:>7.2f} |"
            f" {o[0] / s[0]:>6.2f} {o[2] / s[2]:>6.2f} | {o[3]}/{s[3]}"
        )
    p50, p99 = trio.run(bench_end_cancel, EndCancelsHandler)
    print(
        f"\n'end' while a turn waits on a slow handler -> end's final reply: p50 {p50:.2f} ms, p99 {p99:.2f} ms (ours, in-process)"
    )
    print(f"\nRSS after {args.idle} idle sessions (one 'start' each, connections kept open):")
    for kind, (before, after) in memory.items():
        print(
            f"  {kind:>4}: {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB, +{(after - before) / args.idle:.1f} KiB/session"
        )


if __name__ == "__main__":
    main()
