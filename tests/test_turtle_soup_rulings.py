"""海龟汤's referee on a labelled set of what children say to ten puzzles (issue 40): code's part.

tests/data/turtle_soup_rulings.tsv holds, per puzzle, questions that the 汤底 answers with 是,
false leads (不是 / 不重要), the whole story told in the child's own words, a part of it, and
a chat line. What code decides is checked here; ``python tests/bench/bench_referee.py`` plays
every line through the game with a real model and prints how many rulings are right.
"""

from __future__ import annotations

import pytest

from agentcade.games.turtle_soup.library import load_puzzles
from agentcade.games.turtle_soup.referee import states_the_truth, supports_yes
from agentcade.judge import small_talk
from tests.turtle_rulings import load

PUZZLES = {p.id: p for p in load_puzzles()}
CASES = load()
SOLVED = [c for c in CASES if "solved" in c.right]
NOT_SOLVED = [c for c in CASES if "solved" not in c.right and c.kind != "chat"]


def test_the_set_has_every_kind_of_line_for_ten_puzzles() -> None:
    assert len({c.puzzle for c in CASES}) >= 10
    for puzzle in {c.puzzle for c in CASES}:
        mine = [c for c in CASES if c.puzzle == puzzle]
        assert sum("yes" in c.right for c in mine) >= 3
        assert sum(c.kind == "question" and "yes" not in c.right for c in mine) >= 3
        assert sum("solved" in c.right for c in mine) >= 1
        assert sum(c.kind == "chat" for c in mine) >= 1


@pytest.mark.parametrize("case", SOLVED, ids=lambda c: c.line)
def test_every_full_story_in_a_childs_words_is_solved_in_code(case) -> None:
    assert states_the_truth(PUZZLES[case.puzzle], case.line)


@pytest.mark.parametrize("case", NOT_SOLVED, ids=lambda c: c.line)
def test_no_question_or_part_of_the_story_is_solved_in_code(case) -> None:
    assert not states_the_truth(PUZZLES[case.puzzle], case.line)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "chat"], ids=lambda c: c.line)
def test_chat_is_small_talk_never_ruled(case) -> None:
    assert small_talk(case.line)


def test_a_yes_stands_for_nearly_every_question_the_story_answers_with_yes() -> None:
    yes = [c for c in CASES if c.kind == "question" and "yes" in c.right]
    blocked = [c.line for c in yes if not supports_yes(PUZZLES[c.puzzle], c.line)]
    assert len(blocked) <= len(yes) // 20, blocked  # 寿星是一只动物吗: 动物 is not in the story


def test_a_yes_to_most_false_leads_is_turned_into_not_important_by_code() -> None:
    leads = [c for c in CASES if c.kind == "question" and "yes" not in c.right]
    kept = [c.line for c in leads if supports_yes(PUZZLES[c.puzzle], c.line)]
    assert len(kept) <= len(leads) // 5, kept  # the rest is the referee's to get right


@pytest.mark.parametrize("puzzle", PUZZLES.values(), ids=lambda p: p.id)
def test_how_children_say_the_key_points_never_hears_them_in_the_surface_or_a_hint(puzzle) -> None:
    """``said_as`` (issue 54) is loose enough for a child's words, never so loose that the
    story read out, or a hint, would solve the puzzle; the 汤底 itself always does."""
    assert not states_the_truth(puzzle, puzzle.surface)
    for hint in puzzle.hints:
        assert not states_the_truth(puzzle, hint), hint
    assert states_the_truth(puzzle, puzzle.bottom)
