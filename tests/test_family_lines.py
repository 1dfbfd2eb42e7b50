"""A family's own words move the game (issue 54), on a labelled set written from a family's
point of view (tests/data/family_lines.tsv) and split before the rules were written: each
behaviour right on at least 95 % of its tuning half and of its held-out half."""

from __future__ import annotations

import pytest

from tests import family_lines

CASES = family_lines.load()
BEHAVIOURS = sorted({c.behaviour for c in CASES})
HALVES = sorted({(c.behaviour, c.half) for c in CASES})
"""Each behaviour's halves: tune and held; 海龟汤 stories have a second held-out set, new."""


def test_every_behaviour_has_both_halves_of_lines_that_act_and_lines_that_must_not() -> None:
    for behaviour in BEHAVIOURS:
        cases = [c for c in CASES if c.behaviour == behaviour]
        assert {"tune", "held"} <= {c.half for c in cases} <= {"tune", "held", "new"}, behaviour
        assert len({c.expected for c in cases}) >= 2, behaviour


@pytest.mark.parametrize(("behaviour", "half"), HALVES)
def test_a_behaviour_reads_the_familys_lines_as_labelled(behaviour: str, half: str) -> None:
    cases = [c for c in CASES if c.behaviour == behaviour and c.half == half]
    score = family_lines.score(cases)[(behaviour, half)]
    misses = [f"line {c.lineno}: {c.line} → {got} (labelled {c.expected})" for c, got in score.misses]
    assert score.rate >= family_lines.GOAL, misses
