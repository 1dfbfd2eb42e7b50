"""Benchmark: the main agent's code router per spoken line (tests/data/routing_cases.tsv).

Not a test. Run:  .venv/bin/python tests/bench/bench_route.py

Every line of the labelled routing set is routed as the main agent does it (``route``,
then ``find_named`` for a line the model could not answer). The reference is one
``normalize`` of the same lines (one pass over the text): the ratio says how many passes
the router's pinyin name matching costs, and falls when a line's normal form and syllables
are computed once and handed down instead of again for every name and window.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.core.judge import normalize  # noqa: E402
from agentcade.core.skill import Skill  # noqa: E402
from agentcade.game.client import GameInfo  # noqa: E402
from agentcade.game.loader import builtin_games_dir  # noqa: E402
from agentcade.main.router import find_named, route  # noqa: E402

CASES = ROOT / "tests" / "data" / "routing_cases.tsv"


def per_pass(fn: Callable[[], object], seconds: float = 1.0) -> float:
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return (time.perf_counter() - start) / calls


def main() -> None:
    root = builtin_games_dir()
    games = [GameInfo.of(Skill.load(p / "SKILL.md"), str(p)) for p in sorted(root.iterdir())
             if (p / "SKILL.md").is_file()]
    rows = []
    for raw in CASES.read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            current, line = raw.split("\t")[:2]
            rows.append((None if current == "-" else current, line))
    lines = [line for _, line in rows]

    def routed() -> None:
        for current, line in rows:
            route(line, games, current)

    def named() -> None:
        for line in lines:
            find_named(line, games)

    def reference() -> None:
        for line in lines:
            normalize(line)

    routed()  # warm the caches a running host has warm
    ref = per_pass(reference)
    n = len(rows)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}"
          f" ({n} lines, mean {sum(map(len, lines)) / n:.1f} characters)")
    print(f"normalize (reference): {ref / n * 1e6:8.1f} us a line")
    for label, fn in (("route", routed), ("find_named", named)):
        t = per_pass(fn)
        print(f"{label:22s} {t / n * 1e6:8.1f} us a line  = {t / ref:6.1f}x normalize")


if __name__ == "__main__":
    main()
