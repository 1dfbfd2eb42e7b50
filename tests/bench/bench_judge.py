"""Benchmark: the judge's accuracy on the held-back set, and its speed on long lines.

Not a test. Run:  .venv/bin/python tests/bench/bench_judge.py

1. Accuracy on tests/data/judge_heldout.tsv (written before tuning, never tuned on):
   the accept rate of true variants, the false-accept rate of near misses, both by rule,
   and every miss. tests/test_judge_heldout.py holds the goals (>= 98 %, <= 1 %).
2. Speed: ``is_match`` and ``parse_number`` on lines of 50, 500 and 5,000 characters.
   The reference is ``normalize`` of the same line (one pass over the text); the ratio
   shows the judge stays linear (the same ratio at every length) instead of quadratic.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.core.judge import is_match, normalize, parse_number  # noqa: E402
from tests.heldout import load, score  # noqa: E402

SAMPLE = "我猜是一只红色的小老虎吧不对是大熊猫宝宝还是长颈鹿呀嗯嗯十五个苹果"


def per_call(fn: Callable[[], object], seconds: float = 0.3) -> float:
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return (time.perf_counter() - start) / calls


def accuracy() -> None:
    result = score(load())
    print(f"held-back set: accept {result.accept_rate:.1%} of {result.positives} true variants"
          f" (goal >= 98%), false accept {result.false_accept_rate:.1%} of"
          f" {result.negatives} near misses (goal <= 1%)")  # fmt: skip
    rules = sorted({rule for rule, _ in result.by_rule})
    for rule in rules:
        right, wrong = result.by_rule[(rule, True)], result.by_rule[(rule, False)]
        print(f"  {rule:14s} {right:4d} right {wrong:3d} wrong")
    for case in result.misses:
        verdict = "missed" if case.accept else "falsely accepted"
        print(f"  {verdict}: {case.utterance!r} for {case.answer!r} ({case.rule})")


def speed() -> None:
    print("speed (ms per call; ratio to normalize() of the same line):")
    for size in (50, 500, 5000):
        line = (SAMPLE * (size // len(SAMPLE) + 1))[:size]
        ref = per_call(partial(normalize, line))
        for answer, aliases in (("猫", ("猫咪",)), ("长颈鹿", ()), ("胡萝卜", ("萝卜", "红萝卜")),
                                ("15", ())):  # fmt: skip
            t = per_call(partial(is_match, line, answer, aliases))
            print(f"  {size:5d} chars  is_match({answer!r}) {t * 1e3:8.2f} ms  x{t / ref:6.0f}")
        t = per_call(partial(parse_number, line))
        print(f"  {size:5d} chars  parse_number      {t * 1e3:8.2f} ms  x{t / ref:6.0f}")


if __name__ == "__main__":
    accuracy()
    speed()
