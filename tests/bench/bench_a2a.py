"""Benchmark: our trio+h11 A2A server vs a2a-sdk's reference server, and the real runtime.

Not a test. Run:  /work/venv/bin/python tests/bench/bench_a2a.py [--quick] [--seconds 5]
(see tests/bench/README.md; ``--quick`` is a ~1 minute smoke run).

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

The real runtime (``python -m agentcade serve <game>`` in a subprocess: GameHost + SkillAgent
+ the openai client behind our A2A server; the client is raw sockets, as above):

4. "end" -> final with a slow model: the probe game, its model pointed at the fake OpenAI
   server (``agentcade/testing/fake_openai.py``, in this process). Per session: ``start`` (the model
   answers at once), a streaming ``message`` whose model call hangs (read in the background
   to its INTERRUPTED final), and once the fake has received that model call, ``end`` on
   another connection (the end round's model call answers at once). Timed: sending ``end``
   -> its final reply; split at the moment the end round's model request reaches the fake.
5. RSS per idle GameHost session: riddle with the offline model (no LLM settings),
   ``--max-sessions 2000``; RSS before and after 1,000 ``start`` requests, each on its own
   connection, closed after the reply (so only the sessions stay). A second row points
   riddle at the fake model: each session then also holds an openai client and its
   keep-alive connection to the model.
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
from agentcade.core.protocol import GameInput, GameReply  # noqa: E402
from agentcade.testing.fake_openai import FakeOpenAI, Hang, Reply, serve_fake_openai  # noqa: E402
from tests.a2a_peers import EchoHandler, echo_card, free_port  # noqa: E402

PROBE = ROOT / "tests" / "data" / "games" / "probe"
END_TARGET_MS = 20.0
SESSION_TARGET_KIB = 200
END_MARK = "END-ROUND-OK"
"""In the end round's model answer: the final reply must carry it (the model really ran)."""

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
    return proc, wait_listening(proc, port, kind)


def wait_listening(proc: subprocess.Popen[bytes], port: int, what: str) -> int:
    deadline = time.monotonic() + 20
    import socket

    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{what} server did not start")


def start_game(
    game: str, llm_url: str | None, max_sessions: int
) -> tuple[subprocess.Popen[bytes], int]:
    """``python -m agentcade serve <game>`` on 127.0.0.1: the production entry point.

    LLM settings come only from here: every ``LLM_*`` variable of this environment is
    dropped and the user config folder is an empty one, so ``llm_url=None`` is offline.
    """
    import tempfile

    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    env["AGENTCADE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="bench-agentcade-")
    if llm_url is not None:
        env.update(
            LLM_BASE_URL=llm_url,
            LLM_API_KEY="sk-fake-secret",
            LLM_MODEL="fake-model",
            LLM_TIMEOUT="30",
        )
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "agentcade",
        "serve",
        game,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    cmd += ["--max-sessions", str(max_sessions)]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return proc, wait_listening(proc, port, f"agentcade serve {game}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_row(pid: int, port: int, clients: int, seconds: float) -> tuple[float, int]:
    """Server CPU µs per streamed request under ``clients`` clients; and the requests."""
    before = cpu_seconds(pid)
    rps, _p50, _p99, _errors = trio.run(load, port, clients, seconds)
    used = cpu_seconds(pid) - before
    done = round(rps * seconds)
    return used / max(done, 1) * 1e6, done


def bench_cpu(seconds: float, runs: int) -> None:
    """Server CPU time per request, ours and the SDK's, same load generator, 16 clients.

    CPU time, not wall time: on a machine shared with other work the figure stays put
    while throughput and latency move with the load.
    """
    procs = {kind: start(kind) for kind in ("ours", "sdk")}
    try:
        for _proc, port in procs.values():
            trio.run(load, port, 4, 1.0)  # warm-up
        print(f"\nA2A server CPU per streamed request, 16 clients, {seconds:g} s per run")
        ratios = []
        for run in range(runs):
            ours = cpu_row(procs["ours"][0].pid, procs["ours"][1], 16, seconds)
            sdk = cpu_row(procs["sdk"][0].pid, procs["sdk"][1], 16, seconds)
            ratios.append(sdk[0] / ours[0])
            print(
                f"  run {run + 1}: ours {ours[0]:7.0f} µs ({ours[1]} requests)"
                f" | sdk {sdk[0]:7.0f} µs ({sdk[1]} requests) | sdk/ours {ratios[-1]:.2f}x"
                f" | load {os.getloadavg()[0]:.2f}"
            )
        print(f"  median sdk/ours {statistics.median(ratios):.2f}x")
    finally:
        for proc, _port in procs.values():
            stop(proc)


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
            await emit(GameReply(text="再见", session="ended"), final=True)
            return
        with trio.CancelScope() as scope:
            self.in_flight[context_id] = scope
            await emit(GameReply(text="想一想"), final=False)
            await trio.sleep(self.turn_seconds)
            await emit(GameReply(text="好了"), final=True)
        if scope.cancelled_caught:
            await emit(GameReply(text="不玩了"), final=True)


async def bench_end_cancel(
    handler_factory: Callable[[], Any], rounds: int = 200
) -> tuple[float, float]:
    from agentcade.a2a.server import serve_a2a

    times: list[float] = []
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            serve_a2a, handler_factory(), echo_card, 0
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


# ------------------------------------------------------------------ the real runtime


def has_text(buf: bytes, text: str) -> bool:
    """Whether ``text`` is in a JSON body, written raw or with \\u escapes."""
    return text.encode() in buf or json.dumps(text)[1:-1].encode() in buf


def user_event(request: dict[str, Any]) -> str | None:
    """The ``event`` of the last user message of a chat request (SkillAgent's format)."""
    last = request.get("messages", [{}])[-1]
    if last.get("role") != "user":
        return None  # a tool result: a later step of a ReAct round
    try:
        return json.loads(last["content"]).get("event")
    except (ValueError, AttributeError):
        return None


class EndScript:
    """The fake model's script: ``message`` hangs, ``start``/``end`` answer at once."""

    def __init__(self) -> None:
        self.message_seen = trio.Event()
        self.end_seen_at = 0.0

    def __call__(self, request: dict[str, Any]) -> Reply | Hang:
        event = user_event(request)
        if event == "message":
            self.message_seen.set()
            return Hang()
        if event == "end":
            self.end_seen_at = time.perf_counter()
            return Reply(f"好的，这一局就到这里。{END_MARK}")
        return Reply("我们开始吧。")


async def read_to_end(stream: trio.SocketStream, out: list[bytes]) -> None:
    """The background reader of the hanging turn: its whole SSE body."""
    buf = b""
    with trio.move_on_after(10):
        while not buf.endswith(b"\r\n0\r\n\r\n"):
            data = await stream.receive_some(65536)
            if not data:
                break
            buf += data
    out.append(buf)


async def bench_end_real(game: Path, rounds: int) -> dict[str, list[float]]:
    """``end`` -> final on the real runtime (see the module docstring, 4)."""
    script = EndScript()
    out: dict[str, list[float]] = {"total": [], "to_model": [], "after_model": []}
    async with trio.open_nursery() as nursery:
        fake: FakeOpenAI = await nursery.start(serve_fake_openai)
        fake.default = script
        proc, port = await trio.to_thread.run_sync(start_game, str(game), fake.url, rounds + 8)
        try:
            for i in range(-3, rounds):  # three warm-up sessions
                ctx = f"real-end-{i}-{uuid.uuid4().hex[:8]}"
                script.message_seen = trio.Event()
                first = await trio.open_tcp_stream("127.0.0.1", port)
                await one_stream(first, request_bytes(port, ctx, "start", "开始"))
                await first.aclose()
                turn = await trio.open_tcp_stream("127.0.0.1", port)
                end = await trio.open_tcp_stream("127.0.0.1", port)
                turn_body: list[bytes] = []
                async with trio.open_nursery() as reader:
                    await turn.send_all(request_bytes(port, ctx, "message", "慢慢想"))
                    reader.start_soon(read_to_end, turn, turn_body)
                    with trio.fail_after(10):
                        await script.message_seen.wait()  # the model call is in flight
                    t0 = time.perf_counter()
                    body = await one_stream(end, request_bytes(port, ctx, "end", ""))
                    t1 = time.perf_counter()
                await end.aclose()
                await turn.aclose()
                if not has_text(body, END_MARK):
                    raise RuntimeError(
                        f"end's final is not the end round's model answer: {body[-400:]!r}"
                    )
                if not (turn_body and b"TASK_STATE_COMPLETED" in turn_body[0]):
                    raise RuntimeError(f"the interrupted turn got no final reply: {turn_body!r}")
                if i >= 0:
                    out["total"].append(t1 - t0)
                    out["to_model"].append(script.end_seen_at - t0)
                    out["after_model"].append(t1 - script.end_seen_at)
        finally:
            await trio.to_thread.run_sync(stop, proc)
            nursery.cancel_scope.cancel()
    return out


async def bench_idle_real(game: str, n: int, with_model: bool) -> tuple[int, int, float]:
    """RSS (KiB) of ``agentcade serve`` before/after ``n`` idle sessions; seconds for the starts."""

    async def request(port: int, ctx: str, kind: str, text: str) -> bytes:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        try:
            return await one_stream(stream, request_bytes(port, ctx, kind, text))
        finally:
            await stream.aclose()

    async with trio.open_nursery() as nursery:
        url = None
        if with_model:
            fake: FakeOpenAI = await nursery.start(serve_fake_openai)
            fake.default = Reply("我们开始吧。")
            url = fake.url
        proc, port = await trio.to_thread.run_sync(start_game, game, url, 2000)
        try:
            for i in range(20):  # warm-up: whole sessions (start + end), none left behind
                await request(port, f"warm-{i}", "start", "开始")
                await request(port, f"warm-{i}", "end", "")
            await trio.sleep(0.5)
            before = rss_kib(proc.pid)
            t0 = time.perf_counter()
            for i in range(n):
                body = await request(port, f"idle-{i}", "start", "开始")
                if has_text(body, "太多"):
                    raise RuntimeError("the host refused a session (max sessions)")
            seconds = time.perf_counter() - t0
            await trio.sleep(1.0)  # let the server close the connections
            after = rss_kib(proc.pid)
            body = await request(port, "idle-0", "message", "不知道")  # the sessions are alive
            if has_text(body, "这一局已经结束了"):
                raise RuntimeError("the first idle session is gone")
        finally:
            await trio.to_thread.run_sync(stop, proc)
            nursery.cancel_scope.cancel()
    return before, after, seconds


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", choices=["ours", "sdk"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per throughput row")
    parser.add_argument("--idle", type=int, default=1000, help="sessions for the RSS figures")
    parser.add_argument(
        "--rounds", type=int, default=200, help="sessions for the 'end' latency figures"
    )
    parser.add_argument("--end-game", default=str(PROBE), help="game for the real 'end' figure")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 s per row, fewer rounds")
    parser.add_argument(
        "--cpu", type=int, metavar="RUNS", help="only the CPU-per-request figure, RUNS runs"
    )
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.cpu:
        bench_cpu(args.seconds, args.cpu)
        return
    if args.quick:
        args.seconds, args.rounds, args.idle = 1.0, 50, min(args.idle, 300)
    started = time.monotonic()

    results: dict[tuple[str, int], tuple[float, float, float, int]] = {}
    memory: dict[str, tuple[int, int]] = {}
    cpu: dict[tuple[str, int], float] = {}
    for kind in ("ours", "sdk"):
        proc, port = start(kind)
        try:
            trio.run(load, port, 4, 1.0)  # warm-up
            for clients in (1, 16, 64):
                cpu_before = cpu_seconds(proc.pid)
                results[(kind, clients)] = trio.run(load, port, clients, args.seconds)
                done = max(round(results[(kind, clients)][0] * args.seconds), 1)
                cpu[(kind, clients)] = (cpu_seconds(proc.pid) - cpu_before) / done * 1e6
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
    print("server CPU per request (µs, ours | sdk | sdk/ours):")
    for clients in (1, 16, 64):
        o_cpu, s_cpu = cpu[("ours", clients)], cpu[("sdk", clients)]
        print(f"{clients:>7} | {o_cpu:>7.0f} | {s_cpu:>7.0f} | {s_cpu / o_cpu:.2f}x")
    print(f"load average {os.getloadavg()[0]:.2f}")
    p50, p99 = trio.run(bench_end_cancel, EndCancelsHandler, args.rounds)
    print(
        f"\n'end' while a turn waits on a stand-in handler (EndCancelsHandler, no GameHost) -> end's final"
        f" reply, {args.rounds} sessions: p50 {p50:.2f} ms, p99 {p99:.2f} ms (ours, in-process)"
    )
    print(
        f"\nRSS after {args.idle} idle echo sessions (one 'start' each, connections KEPT OPEN; echo handler):"
    )
    for kind, (before, after) in memory.items():
        print(
            f"  {kind:>4}: {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB, +{(after - before) / args.idle:.1f} KiB/session"
        )

    sys.stdout.flush()
    end = trio.run(bench_end_real, Path(args.end_game), args.rounds)
    name = Path(args.end_game).name
    print(
        f"\nREAL RUNTIME: 'end' -> final, `agentcade serve {name}` (GameHost) + fake OpenAI model;"
        f" the message's model call hangs, the end round's answers at once; {args.rounds} sessions,"
        f" client = raw sockets (trio), one connection per request"
    )
    for label, key in (
        ("end sent -> final reply", "total"),
        ("  end sent -> end round's model request at the fake", "to_model"),
        ("  model request at the fake -> final reply at the client", "after_model"),
    ):
        q = statistics.quantiles(end[key], n=100, method="inclusive")  # never beyond the max
        print(
            f"  {label:<58} p50 {q[49] * 1000:6.2f} ms   p99 {q[98] * 1000:6.2f} ms   max {max(end[key]) * 1000:6.2f} ms"
        )
    p99 = statistics.quantiles(end["total"], n=100, method="inclusive")[98]
    verdict = "OK" if p99 * 1000 <= END_TARGET_MS else "ABOVE TARGET"
    print(f"  target: p99 <= {END_TARGET_MS:g} ms -> {verdict}")

    sys.stdout.flush()
    rows = [("riddle, offline model", trio.run(bench_idle_real, "riddle", args.idle, False))]
    rows.append(("riddle, fake OpenAI model", trio.run(bench_idle_real, "riddle", args.idle, True)))
    print(
        f"\nREAL RUNTIME: RSS of `agentcade serve riddle --max-sessions 2000` before/after {args.idle}"
        f" idle GameHost sessions (one 'start' each, its connection closed after the reply)"
    )
    for index, (label, (before, after, seconds)) in enumerate(rows):
        per = (after - before) / args.idle
        verdict = (
            ("OK" if per <= SESSION_TARGET_KIB else "ABOVE TARGET")
            if index == 0
            else "(no target set)"
        )
        print(
            f"  {label:<26}: {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB, +{per:.1f} KiB/session"
            f"  ({args.idle / seconds:.0f} starts/s, sequential)  target <= {SESSION_TARGET_KIB} KiB: {verdict}"
        )
    print(f"\ntotal run time {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
