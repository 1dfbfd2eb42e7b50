"""Build the one-file executable ``dist/agentcade`` with PyInstaller and measure it.

Usage::

    python build/build.py [--dist DIR] [--work DIR] [--clean]

Runs PyInstaller on ``agentcade.spec`` (work files in ``build/work``, the executable in
``dist/``), then prints the build time, the executable's size and its cold-start time
(``agentcade --version``: the first run after the build on its own, then the median of
three more). Exits non-zero when PyInstaller fails or the executable does not run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "agentcade.spec"
EXE_NAME = "agentcade.exe" if sys.platform == "win32" else "agentcade"
TIMED_RUNS = 3


def build(dist: Path, work: Path, *, clean: bool = False) -> float:
    """Run PyInstaller on the spec; returns the wall time in seconds."""
    cmd = [
        sys.executable,
        "-m",
        "PyInstaller",
        str(SPEC),
        "--noconfirm",
        "--log-level",
        "WARN",
        "--distpath",
        str(dist),
        "--workpath",
        str(work),
    ]
    if clean:
        cmd.append("--clean")
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True)
    return time.perf_counter() - start


def time_version(exe: Path) -> float:
    """Seconds for one ``agentcade --version``; raises if it fails or prints the wrong thing."""
    start = time.perf_counter()
    proc = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or not proc.stdout.startswith("agentcade "):
        raise RuntimeError(
            f"{exe} --version failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}"
        )
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist/)"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=ROOT / "build" / "work",
        help="PyInstaller work folder (default: build/work)",
    )
    parser.add_argument("--clean", action="store_true", help="empty PyInstaller's caches first")
    args = parser.parse_args(argv)
    dist, work = args.dist.resolve(), args.work.resolve()

    try:
        build_s = build(dist, work, clean=args.clean)
    except subprocess.CalledProcessError as exc:
        print(f"build.py: PyInstaller failed (exit {exc.returncode})", file=sys.stderr)
        return 1
    exe = dist / EXE_NAME
    if not exe.is_file():
        print(f"build.py: PyInstaller succeeded but {exe} is missing", file=sys.stderr)
        return 1

    size_mib = exe.stat().st_size / (1024 * 1024)
    try:
        first_s = time_version(exe)
        runs = [time_version(exe) for _ in range(TIMED_RUNS)]
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"build.py: the executable does not run: {exc}", file=sys.stderr)
        return 1
    version = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()

    print(f"executable:        {os.path.relpath(exe, Path.cwd())} ({version})")
    print(f"build time:        {build_s:.1f} s")
    print(f"size:              {size_mib:.1f} MiB")
    print(f"first cold start:  {first_s:.2f} s  (agentcade --version)")
    print(
        f"cold start:        {statistics.median(runs):.2f} s  "
        f"(median of {TIMED_RUNS}: {', '.join(f'{r:.2f}' for r in runs)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
