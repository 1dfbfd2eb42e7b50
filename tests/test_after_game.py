"""Lines outside a game read against what just happened (issue 40): rounds after a game
ended, vague picks after the list, a bare "开始" or number — on a labelled set
(tests/data/after_game_cases.tsv): lines that must resolve in code and lines that must not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcade.core.skill import Skill
from agentcade.game.client import GameInfo
from agentcade.game.loader import builtin_games_dir
from agentcade.main.router import After, route
from tests import labelled

CASES = Path(__file__).parent / "data" / "after_game_cases.tsv"


@pytest.fixture(scope="module")
def games() -> list[GameInfo]:
    root = builtin_games_dir()
    return [
        GameInfo.of(Skill.load(p / "SKILL.md"), str(p))
        for p in sorted(root.iterdir())
        if (p / "SKILL.md").is_file()
    ]


def situation(text: str) -> After:
    fields: dict[str, str] = {}
    for part in text.split(","):
        if part and part != "-":
            key, _, value = part.partition("=")
            fields[key] = value
    return After(
        game_id=fields.get("recent", ""),
        fresh="fresh" in fields,
        offered="again" if "offered" in fields else None,
        listed="listed" in fields,
        offered_game=fields.get("host", ""),
    )


CASE_ROWS = [(n, f) for n, f in labelled.rows(CASES)]


def test_the_set_has_lines_that_resolve_and_lines_that_must_not() -> None:
    kinds = [fields[2] for _, fields in CASE_ROWS]
    assert sum(k != "model" for k in kinds) >= 50
    assert kinds.count("model") >= 20


@pytest.mark.parametrize(("lineno", "fields"), CASE_ROWS, ids=[f"{n}:{f[1]}" for n, f in CASE_ROWS])
def test_a_line_after_a_game_or_the_list_routes_as_labelled(games, lineno: int, fields: list[str]) -> None:
    where, line, kind, game = [*fields, ""][:4]
    got = route(line, games, None, situation(where))
    assert (got.kind, got.game_id if kind in ("start", "restart", "repeat", "number") else "") == (kind, game)


def test_the_games_order_is_the_lists(games) -> None:
    """The positions in the set are the order the list was said in (the registry's)."""
    assert [g.id for g in games] == ["draw_guess", "guess_number", "riddle", "turtle_soup"]


def test_during_a_game_a_round_request_still_goes_to_the_game(games) -> None:
    after = After(game_id="riddle", fresh=True, offered="again", listed=True)
    for line in ("再来一局", "下一个", "好", "最后那个", "十", "开始"):
        assert route(line, games, "guess_number", after).kind == "forward"
