"""The family's lines (tests/data/family_lines.tsv): each behaviour read by the code that
decides it, scored per half (``tune``: the rules were written against it; ``held``: never).

Shared by the test that holds each behaviour to 95 % (test_family_lines.py) and by
``python -m tests.family_lines``, which prints the figures for the issue note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from agentcade.core import guard
from agentcade.core.ending import declines_offer
from agentcade.core.judge import asks_verdict, is_match, normalize, parse_number, round_request
from agentcade.core.judge.intents import aside
from agentcade.core.skill import Skill
from agentcade.game.client import GameInfo
from agentcade.game.loader import builtin_games_dir
from agentcade.main.chat import made_up
from agentcade.main.router import After, route
from tests import labelled

FAMILY_LINES = Path(__file__).parent / "data" / "family_lines.tsv"
GOAL = 0.95
"""Each behaviour, on each half."""


@dataclass(frozen=True)
class Case:
    lineno: int
    behaviour: str
    half: str
    context: str
    line: str
    expected: str


@dataclass
class Score:
    right: int = 0
    total: int = 0
    misses: list[tuple[Case, str]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.right / self.total if self.total else 1.0


def load(path: Path = FAMILY_LINES) -> list[Case]:
    return [Case(n, *fields[:5]) for n, fields in labelled.rows(path)]


@cache
def games() -> list[GameInfo]:
    root = builtin_games_dir()
    return [GameInfo.of(Skill.load(p / "SKILL.md"), str(p)) for p in sorted(root.iterdir()) if (p / "SKILL.md").is_file()]


def _round(case: Case) -> str:
    offered = None if case.context == "-" else case.context
    return round_request(case.line, offered=offered) or "-"  # type: ignore[arg-type]


def _number(case: Case) -> str:
    value = parse_number(case.line)
    return "-" if value is None else str(value)


def _personal(case: Case) -> str:
    return "private" if guard.said_personal(case.line) is not None else "-"


def _asks(case: Case) -> str:
    hit = guard.screen(case.line)
    return "ask" if hit is not None and hit.kind is guard.GuardKind.PERSONAL_DATA else "-"


def _aside(case: Case) -> str:
    rest = aside(case.line)
    if rest is None:
        return "game"
    if not rest:
        return "aside"
    answer = case.context
    number = parse_number(answer)
    right = parse_number(rest) == number if number is not None else is_match(rest, answer)
    return "guess" if right else f"passed on: {rest}"


def _in_game(case: Case) -> str:
    return route(case.line, games(), case.context).kind


def _vague(case: Case) -> str:
    return route(case.line, games(), None, After(listed=case.context == "listed")).kind


def _soup(case: Case) -> str:
    from games.turtle_soup.library import load_puzzles
    from games.turtle_soup.referee import states_the_truth

    puzzle = next(p for p in load_puzzles() if p.id == case.context)
    return "solved" if states_the_truth(puzzle, case.line) else "-"


def _soup_ask(case: Case) -> str:
    return "answer" if asks_verdict(case.line) else "-"


def _decline(case: Case) -> str:
    return "end" if declines_offer(normalize(case.line)) else "-"


def _claim(case: Case) -> str:
    return "claim" if made_up(case.line) else "-"


READERS: dict[str, Callable[[Case], str]] = {
    "round": _round,
    "number": _number,
    "personal": _personal,
    "asks": _asks,
    "aside": _aside,
    "in_game": _in_game,
    "vague": _vague,
    "soup": _soup,
    "soup_ask": _soup_ask,
    "claim": _claim,
    "decline": _decline,
}


def score(cases: list[Case]) -> dict[tuple[str, str], Score]:
    """(behaviour, half) → its score."""
    scores: dict[tuple[str, str], Score] = {}
    for case in cases:
        got = READERS[case.behaviour](case)
        s = scores.setdefault((case.behaviour, case.half), Score())
        s.total += 1
        if got == case.expected:
            s.right += 1
        else:
            s.misses.append((case, got))
    return scores


def main() -> None:
    for (behaviour, half), s in sorted(score(load()).items()):
        print(f"{behaviour:9} {half:4} {s.right:3}/{s.total:<3} {s.rate:6.1%}")
        for case, got in s.misses:
            print(f"    line {case.lineno}: {case.line!r} ({case.context}) expected {case.expected}, got {got}")


if __name__ == "__main__":
    main()
