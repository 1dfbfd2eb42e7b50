"""The held-back judge set (tests/data/judge_heldout.tsv): loading and scoring.

Shared by the test that holds the judge to its goals (test_judge_heldout.py) and the
benchmark that prints the figures (bench/bench_judge.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agentcade.core.judge import is_match
from tests import labelled

HELDOUT = Path(__file__).parent / "data" / "judge_heldout.tsv"


@dataclass(frozen=True)
class Case:
    accept: bool
    rule: str
    answer: str
    aliases: tuple[str, ...]
    utterance: str


@dataclass
class Score:
    accepted: int = 0  # true variants accepted
    positives: int = 0
    false_accepted: int = 0  # near misses accepted
    negatives: int = 0
    misses: list[Case] = field(default_factory=list)
    by_rule: Counter[tuple[str, bool]] = field(default_factory=Counter)  # (rule, right)

    @property
    def accept_rate(self) -> float:
        return self.accepted / self.positives

    @property
    def false_accept_rate(self) -> float:
        return self.false_accepted / self.negatives


def load(path: Path = HELDOUT) -> list[Case]:
    cases = []
    for _, fields in labelled.rows(path):
        verdict, rule, answer, aliases, utterance = fields[:5]
        alias_list = tuple(a for a in aliases.split("|") if a)
        cases.append(Case(verdict == "accept", rule, answer, alias_list, utterance))
    return cases


def score(cases: list[Case]) -> Score:
    result = Score()
    for case in cases:
        got = is_match(case.utterance, case.answer, case.aliases)
        if case.accept:
            result.positives += 1
            result.accepted += got
        else:
            result.negatives += 1
            result.false_accepted += got
        result.by_rule[(case.rule, got == case.accept)] += 1
        if got != case.accept:
            result.misses.append(case)
    return result
