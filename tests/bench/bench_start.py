"""Benchmark: how soon after start ``agentcade serve`` and a game binary answer their card.

Not a test. Run:  .venv/bin/python tests/bench/bench_start.py [--runs 7] [--game games/riddle]
                  [--binary dist/riddle ...]

Each run starts ``agentcade serve <game> --host 127.0.0.1 --port P`` (the console script
next to this interpreter, as a family or an operator starts it from a venv; ``--module``
runs ``python -m agentcade`` instead) with no ``LLM_*`` settings and an empty config
folder, then asks ``GET /.well-known/agent-card.json`` every 5 ms until it answers 200.
Each ``--binary`` (a game binary from ``agentcade build-game``, the same game) is started
the same way with the same options, in turn with the venv's command in every round, so
all figures of one run share the machine's load. Printed: the time from ``Popen`` to that
answer, per run, then min and median for each command; and, as a reference measured the
same way, the start of a bare ``python -c pass`` (what no program from a venv can beat).
The goals are 0.7 s from a venv and 1.0 s for a binary (issue 39).
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_a2a import stop  # noqa: E402

GOAL_VENV_S = 0.7
GOAL_BINARY_S = 1.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def card_answers(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/.well-known/agent-card.json")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def one_run(cmd: list[str], env: dict[str, str]) -> float:
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*cmd, "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        while not card_answers(port):
            if proc.poll() is not None:
                raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
            if time.perf_counter() - t0 > 30:
                raise RuntimeError("no card after 30 s")
            time.sleep(0.005)
        return time.perf_counter() - t0
    finally:
        stop(proc)


def bare_start(env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--game", default="games/riddle")
    parser.add_argument("--module", action="store_true", help="python -m agentcade, not the console script")
    parser.add_argument("--binary", action="append", default=[], type=Path,
                        help="a game binary of the same game, timed beside (repeatable)")
    opts = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    env["AGENTCADE_HOME"] = tempfile.mkdtemp(prefix="bench-start-")
    script = Path(sys.executable).with_name("agentcade")
    commands: dict[str, list[str]] = {}
    if opts.module or not script.exists():
        commands["python -m agentcade serve " + opts.game] = [sys.executable, "-m", "agentcade", "serve", opts.game]
    else:
        commands["agentcade serve " + opts.game] = [str(script), "serve", opts.game]
    for binary in opts.binary:
        commands[f"binary {binary}"] = [str(binary.resolve())]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for cmd in commands.values():
        one_run(cmd, env)  # warm the file cache and the .pyc files
    times: dict[str, list[float]] = {name: [] for name in commands}
    for run in range(opts.runs):
        figures = []
        for name, cmd in commands.items():
            times[name].append(one_run(cmd, env))
            figures.append(f"{times[name][-1]:.3f} s")
        print(f"  run {run + 1}: card after {' | '.join(figures)} | load {os.getloadavg()[0]:.2f}")
    bare = min(bare_start(env) for _ in range(3))
    for name, runs in times.items():
        goal = GOAL_BINARY_S if name.startswith("binary") else GOAL_VENV_S
        print(f"{name}: card answered after min {min(runs):.3f} s, median {statistics.median(runs):.3f} s "
              f"(goal {goal} s)")
    print(f"bare interpreter start {bare:.3f} s; load average at the end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
