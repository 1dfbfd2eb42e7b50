"""The labelled 海龟汤 rulings (tests/data/turtle_soup_rulings.tsv), for the test and the bench."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RULINGS = Path(__file__).parent / "data" / "turtle_soup_rulings.tsv"


@dataclass(frozen=True)
class Ruling:
    """One labelled line: what a child said to a puzzle, and the rulings that are right."""

    puzzle: str
    kind: str
    """"question", "solution" or "chat" (said to the host: answered as chat, never ruled)."""
    line: str
    right: frozenset[str]
    """Any of yes, no, irrelevant, close, solved; "chat" for a chat line."""


def load() -> list[Ruling]:
    cases = []
    for row in RULINGS.read_text(encoding="utf-8").splitlines():
        if not row.strip() or row.startswith("#"):
            continue
        puzzle, kind, line, right = row.split("\t")
        cases.append(Ruling(puzzle, kind, line, frozenset(right.split(","))))
    return cases
