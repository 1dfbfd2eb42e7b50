"""Benchmark: the main agent's code router per spoken line (tests/data/routing_cases.tsv).

Not a test. Run:  .venv/bin/python tests/bench/bench_route.py

Every line of the labelled routing set is routed as the main agent does it (``route``).
Three figures, each as a ratio to one ``normalize`` of the same lines (one pass over the
text), measured in one run:

* ``before``: pinyin name matching as it was — every answer span of every window computed
  eagerly (``eager_is_match`` below keeps that algorithm), and the line matched a second
  time by ``find_named`` in the main agent;
* ``after``: ``route`` as it is — spans computed only where a cut can reach, game names
  normalised once, the game the line names handed down in the ``Route``;
* ``long line``: the same two on one 60-character line (ASR gives up to about 60).

The speed-up is before / after. Figures are noisy on a loaded machine: the load is printed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.core.judge import matching, normalize, text  # noqa: E402
from agentcade.core.skill import Skill  # noqa: E402
from agentcade.game.client import GameInfo  # noqa: E402
from agentcade.game.loader import builtin_games_dir  # noqa: E402
from agentcade.main import router  # noqa: E402
from tests import labelled  # noqa: E402
from tests.bench.bench_judge import per_call  # noqa: E402

CASES = ROOT / "tests" / "data" / "routing_cases.tsv"
LONG = "我觉得是因为他的伞被雨淋湿了所以要打开晾干吧我猜对了吗要不然我们换一个玩海龟汤好不好呀小懒你说呢我还想玩猜数字"


def eager_is_match(utterance: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """``judge.is_match`` as it was: answer spans at every position, reachable or not."""
    forms = [f for f in (matching._form(a) for a in (answer, *aliases) if a) if f is not None]
    if not forms or not utterance:
        return False
    pre = text._prenormalize(utterance)
    text_forms = [f for f in forms if f.number is None]
    numbers = {f.number for f in forms if f.number is not None}
    if text_forms:
        tokens = matching._tokens_plain(pre, answer=False)
        if tokens:
            ends = [
                sorted({j for f in text_forms for j in matching._span_ends(tokens, i, f)})
                for i in range(len(tokens))
            ]
            if matching._segments(tokens, lambda i: ends[i]):
                return True
    if numbers:
        numeric = matching._tokens_numeric(pre)
        ends = [[i + 1] if t[0] == "n" and t[2] in numbers else [] for i, t in enumerate(numeric)]
        if matching._segments(numeric, lambda i: ends[i]):
            return True
    return False


def per_pass(fn: Callable[[], object]) -> float:
    return per_call(fn, seconds=1.0)


def main() -> None:
    root = builtin_games_dir()
    games = [
        GameInfo.of(Skill.load(p / "SKILL.md"), str(p))
        for p in sorted(root.iterdir())
        if (p / "SKILL.md").is_file()
    ]
    rows = []
    for _, (current, line, *_rest) in labelled.rows(CASES):
        rows.append((None if current == "-" else current, line))

    def after(rows: list[tuple[str | None, str]]) -> Callable[[], None]:
        def run() -> None:
            for current, line in rows:
                router.route(line, games, current)

        return run

    def before(rows: list[tuple[str | None, str]]) -> Callable[[], None]:
        def run() -> None:
            with mock.patch.object(router, "is_match", eager_is_match):
                for current, line in rows:
                    router.route(line, games, current)
                    router.find_named(line, games)  # the main agent matched the line again

        return run

    def reference(rows: list[tuple[str | None, str]]) -> Callable[[], None]:
        def run() -> None:
            for _, line in rows:
                normalize(line)

        return run

    loadavg = getattr(os, "getloadavg", None)  # not on Windows
    load = " ".join(f"{x:.2f}" for x in loadavg()) if loadavg else "n/a"
    n = len(rows)
    print(
        f"load average: {load}   ({n} lines, mean {sum(len(line) for _, line in rows) / n:.1f} characters)"
    )
    for label, lines in (
        ("routing set", rows),
        ("long line", [(None, LONG), ("turtle_soup", LONG)]),
    ):
        after(lines)()  # warm the caches a running host has warm
        before(lines)()
        ref = per_pass(reference(lines))
        t_before = per_pass(before(lines))
        t_after = per_pass(after(lines))
        k = len(lines)
        print(
            f"{label}: normalize {ref / k * 1e6:.1f} us a line;"
            f" before {t_before / k * 1e3:.2f} ms ({t_before / ref:.0f}x),"
            f" after {t_after / k * 1e3:.2f} ms ({t_after / ref:.0f}x);"
            f" speed-up {t_before / t_after:.1f}x"
        )


if __name__ == "__main__":
    main()
