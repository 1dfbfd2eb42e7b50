"""The main agent's code router on a labelled set of lines a family says (tests/data/routing_cases.tsv).

Each row: the game running (``-`` for none), the line as speech recognition gave it, the
route it must take, the game it concerns and the kind of line (guess, hint, give-up,
chat, end, switch, misheard names...).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from agentcade.core.skill import Skill
from agentcade.game.client import GameInfo
from agentcade.game.loader import builtin_games_dir
from agentcade.main.router import games_text, greeting, route
from tests import labelled

CASES = Path(__file__).parent / "data" / "routing_cases.tsv"
ANSWERS = {"guess", "asr-guess", "question", "solution", "hint", "give-up", "next"}
"""Kinds of line that play the game: none of them may ever end or switch it."""


class Case(NamedTuple):
    current: str | None
    line: str
    kind: str
    game: str
    what: str


def _cases() -> list[Case]:
    rows = []
    for _, (current, line, kind, game, what) in labelled.rows(CASES):
        rows.append(Case(None if current == "-" else current, line, kind, game, what))
    return rows


@pytest.fixture(scope="module")
def games() -> list[GameInfo]:
    root = builtin_games_dir()
    return [
        GameInfo.of(Skill.load(p / "SKILL.md"), str(p))
        for p in sorted(root.iterdir())
        if (p / "SKILL.md").is_file()
    ]


def _right(case: Case, games: list[GameInfo]) -> bool:
    got = route(case.line, games, case.current)
    return got.kind == case.kind and (case.kind != "start" or got.game_id == case.game)


def test_the_set_has_at_least_200_lines_said_during_a_game() -> None:
    assert sum(1 for c in _cases() if c.current is not None) >= 200


def test_lines_are_routed_right_at_least_99_percent(games: list[GameInfo]) -> None:
    cases = _cases()
    wrong = [c for c in cases if not _right(c, games)]
    assert len(wrong) <= len(cases) // 100, wrong


def test_no_guess_or_answer_ends_or_switches_a_game(games: list[GameInfo]) -> None:
    answers = [c for c in _cases() if c.current is not None and c.what in ANSWERS]
    assert len(answers) >= 150
    moved = [(c.line, route(c.line, games, c.current)) for c in answers]
    assert [m for m in moved if m[1].kind != "forward"] == []


def test_switching_names_the_new_game_also_when_misheard(games: list[GameInfo]) -> None:
    got = route("换一个游戏吧，我想玩海贵汤", games, "riddle")
    assert (got.kind, got.game_id) == ("start", "turtle_soup")


def test_the_running_games_own_name_never_switches(games: list[GameInfo]) -> None:
    assert route("他喝的是海龟汤吗", games, "turtle_soup").kind == "forward"
    assert route("玩海龟汤", games, "turtle_soup").kind == "forward"


def test_the_games_list_reads_each_description_and_the_greeting_each_summary(games: list[GameInfo]) -> None:
    listed = games_text(games)
    hello = greeting(games)
    for g in games:
        assert g.description.split("。")[0].split("；")[0] in listed
        assert f"{g.name}，{g.summary}" in hello
