"""Benchmark: how soon after start ``agentcade serve`` answers its agent card.

Not a test. Run:  .venv/bin/python tests/bench/bench_start.py [--runs 7] [--game games/riddle]

Each run starts ``agentcade serve <game> --host 127.0.0.1 --port P`` (the console script
next to this interpreter, as a family or an operator starts it from a venv; ``--module``
runs ``python -m agentcade`` instead) with no ``LLM_*`` settings and an empty config
folder, then asks ``GET /.well-known/agent-card.json`` every 5 ms until it answers 200.
Printed: the time from ``Popen`` to that answer, per run, then min and median; and, as a
reference measured the same way, the start of a bare ``python -c pass`` (what no program
can beat). The goal is 0.7 s from a venv (issue 39).
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

GOAL_S = 0.7


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
    opts = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLM_")}
    env["AGENTCADE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="bench-start-")
    script = Path(sys.executable).with_name("agentcade")
    if opts.module or not script.exists():
        cmd = [sys.executable, "-m", "agentcade", "serve", opts.game]
    else:
        cmd = [str(script), "serve", opts.game]
    one_run(cmd, env)  # warm the file cache and the .pyc files
    times = []
    for run in range(opts.runs):
        times.append(one_run(cmd, env))
        print(f"  run {run + 1}: card after {times[-1]:.3f} s | load {os.getloadavg()[0]:.2f}")
    bare = min(bare_start(env) for _ in range(3))
    print(f"{' '.join(Path(c).name if i == 0 else c for i, c in enumerate(cmd))}: card answered after "
          f"min {min(times):.3f} s, median {statistics.median(times):.3f} s (goal {GOAL_S} s); "
          f"bare interpreter start {bare:.3f} s")


if __name__ == "__main__":
    main()
