"""The one rule for "end the game" (``agentcade.core.ending``), which the router and the
offline main model both follow."""

from __future__ import annotations

import pytest

from agentcade.core.ending import END_LINES, END_PHRASES, is_end_request
from agentcade.core.judge import normalize


@pytest.mark.parametrize("line", END_PHRASES)
def test_an_end_phrase_ends_the_game_anywhere_in_the_line(line: str) -> None:
    assert is_end_request(normalize(f"好吧{line}"))


@pytest.mark.parametrize("line", END_LINES)
def test_a_short_end_word_ends_the_game_as_the_whole_line(line: str) -> None:
    assert is_end_request(normalize(f"{line}！"))


@pytest.mark.parametrize("line", ["停车场在哪", "停一下", "我们来玩猜谜语", "结果是十五"])
def test_a_line_that_only_contains_an_end_word_does_not(line: str) -> None:
    assert not is_end_request(normalize(line))


def test_a_misheard_end_phrase_still_ends_the_game() -> None:
    assert is_end_request(normalize("接术游戏"))
