"""The judge on a held-back set of how children state the built-in games' answers.

tests/data/judge_heldout.tsv was written before the judge learnt diminutives, adjectives,
measure words and same-sound characters, and the judge is never tuned on it (rules are
developed on tests/data/judge_cases.tsv). ``python tests/bench/bench_judge.py`` prints
the rates by rule and every miss.
"""

from __future__ import annotations

import yaml

from agentcade.games.draw_guess.drawings import ANIMALS
from tests.heldout import HELDOUT, load, score

CASES = load()


def test_the_held_back_set_covers_every_riddle_and_drawing_answer():
    riddles = yaml.safe_load(
        (HELDOUT.parents[2] / "games/riddle/riddles.yaml").read_text(encoding="utf-8")
    )["riddles"]
    answers = {case.answer for case in CASES}
    assert {a.answer for a in ANIMALS} <= answers
    assert {r["answer"] for r in riddles} <= answers
    assert sum(c.accept for c in CASES) >= 300
    assert sum(not c.accept for c in CASES) >= 300


def test_the_judge_accepts_at_least_98_percent_of_true_variants():
    result = score(CASES)
    assert result.accept_rate >= 0.98, [c.utterance for c in result.misses if c.accept]


def test_the_judge_falsely_accepts_at_most_1_percent_of_near_misses():
    result = score(CASES)
    assert result.false_accept_rate <= 0.01, [c.utterance for c in result.misses if not c.accept]
