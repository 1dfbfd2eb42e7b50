"""Benchmark: the real serving path, a guide-style game under ``agentcade serve``, vs a2a-sdk.

Not a test. Run:  nice .venv/bin/python tests/bench/bench_serve.py [--seconds 5] [--runs 3]
                  [--clients 16 64] [--game games/guess_number] [--profile FILE]

``tests/bench/bench_a2a.py`` measures the bare A2A layer (an echo handler on each server);
families and authors run the game host. Here the same load generator (raw sockets,
keep-alive, one connection per virtual client, each reading every chunked SSE body to its
end) plays whole sessions — ``start``, three ``message`` lines, ``end``, each a
``SendStreamingMessage`` on a context of its own — against:

* ours: ``python -m agentcade serve games/guess_number`` (SKILL.md, settings.yaml, tools,
  GameHost, SkillAgent, the offline model: no ``LLM_*`` settings, an empty config folder);
* sdk: the echo game on a2a-sdk's own server (uvicorn + starlette + ``DefaultRequestHandler``,
  ``tests/a2a_peers.sdk_app``), a trivial game, so the SDK's figure is its serving alone.

Printed per run and number of clients: each server's CPU time (user + system, from
``/proc/<pid>/stat``) per request, and the SDK's over ours (the goal: 3.0x at 16 clients),
with the load average. Both servers run side by side and are loaded in turn. CPU time per
request hardly moves when other programs load the machine; requests/s do, and are printed
only as a count.

``--profile FILE`` runs our server under cProfile instead (one 16-client run) and prints
its top costs; the profile is kept in FILE for ``python -m pstats``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.a2a_peers import free_port  # noqa: E402
from tests.bench.bench_a2a import (  # noqa: E402
    cpu_seconds,
    one_stream,
    request_bytes,
    start,
    stop,
    wait_listening,
)

GOAL = 3.0
SESSION = (("start", "开始"), ("message", "十"), ("message", "五"), ("message", "十五"), ("end", ""))
"""One family's session: what each request of it says."""


def start_ours(game: str, profile: Path | None = None) -> tuple[subprocess.Popen[bytes], int]:
    """``python -m agentcade serve GAME`` with no model settings (offline)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    env["AGENTCADE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="bench-serve-")
    port = free_port()
    run = ["-m", "cProfile", "-o", str(profile)] if profile else []
    cmd = [sys.executable, *run, "-m", "agentcade", "serve", game, "--host", "127.0.0.1",
           "--port", str(port), "--max-sessions", "10000"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, wait_listening(proc, port, f"agentcade serve {game}")


async def sessions(port: int, clients: int, seconds: float) -> int:
    """Play whole sessions on ``clients`` connections for ``seconds``; the requests done."""
    done = 0
    stop_at = trio.current_time() + seconds

    async def client(index: int) -> None:
        nonlocal done
        number = 0
        async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
            while trio.current_time() < stop_at:
                number += 1
                context = f"bench-{index}-{number}"
                for kind, text in SESSION:
                    await one_stream(stream, request_bytes(port, context, kind, text))
                    done += 1

    async with trio.open_nursery() as nursery:
        for index in range(clients):
            nursery.start_soon(client, index)
    return done


def cpu_per_request(pid: int, port: int, clients: int, seconds: float) -> tuple[float, int]:
    before = cpu_seconds(pid)
    done = trio.run(sessions, port, clients, seconds)
    return (cpu_seconds(pid) - before) / max(done, 1) * 1e6, done


def compare(game: str, clients_list: list[int], seconds: float, runs: int) -> None:
    ours = start_ours(game)
    sdk = start("sdk")
    try:
        for _proc, port in (ours, sdk):
            trio.run(sessions, port, 4, 1.0)  # warm-up: imports, caches, the first sessions
        for clients in clients_list:
            print(f"\nServer CPU per request, {clients} clients, sessions of {len(SESSION)} requests, "
                  f"{seconds:g} s per run ({game} under agentcade serve | the echo game on a2a-sdk)")
            ratios = []
            for run in range(runs):
                mine, mine_done = cpu_per_request(ours[0].pid, ours[1], clients, seconds)
                theirs, theirs_done = cpu_per_request(sdk[0].pid, sdk[1], clients, seconds)
                ratios.append(theirs / mine)
                print(f"  run {run + 1}: ours {mine:6.0f} µs ({mine_done} requests) | sdk {theirs:6.0f} µs "
                      f"({theirs_done} requests) | sdk/ours {ratios[-1]:.2f}x | load {os.getloadavg()[0]:.2f}")
            print(f"  median sdk/ours {statistics.median(ratios):.2f}x (goal {GOAL:g}x)")
    finally:
        stop(ours[0])
        stop(sdk[0])


def profile(game: str, seconds: float, out: Path, top: int) -> None:
    import pstats

    proc, port = start_ours(game, out)
    try:
        trio.run(sessions, port, 4, 1.0)
        done = trio.run(sessions, port, 16, seconds)
    finally:
        proc.send_signal(signal.SIGINT)  # serve exits 0 on Ctrl-C: cProfile writes the file
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
    deadline = time.monotonic() + 5
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    print(f"\ncProfile of agentcade serve {game}: {done} requests at 16 clients (and a warm-up)")
    stats = pstats.Stats(str(out))
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--game", default="games/guess_number")
    parser.add_argument("--profile", type=Path, help="profile our server instead (cProfile output file)")
    parser.add_argument("--top", type=int, default=30)
    opts = parser.parse_args()
    if opts.profile:
        profile(opts.game, opts.seconds, opts.profile, opts.top)
    else:
        compare(opts.game, opts.clients, opts.seconds, opts.runs)


if __name__ == "__main__":
    main()
