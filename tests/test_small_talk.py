"""Small talk is never judged (issue 38): said to the host, not to the game's question.

``judge.small_talk`` decides it in code. Every built-in game leaves such a line unjudged and
speaks no verdict, on the offline model (the stand-in of check and CI, which used to call
the judging tool for every line the hooks passed on); a judging tool is not run for it
(tests/test_tools.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcade.check.scenarios import Scenario, Step, play_scenario
from agentcade.game.loader import load_game
from agentcade.judge import help_request, small_talk

ROOT = Path(__file__).resolve().parents[1]
SMALL_TALK = ["你叫什么名字", "我们聊聊天吧", "你好呀", "今天天气真好", "谢谢你", "你几岁了", "给我讲个笑话吧",
              "这次我来猜", "该我猜了"]  # taking turns (issue 54): "这次我来猜" was ruled a wrong guess
NOT_SMALL_TALK = ["是水吗", "我猜是桌子", "长颈鹿", "不是长颈鹿", "他喜欢吃海鲜吗", "那天天气不好吗",
                  "我猜你喜欢的是苹果", "十五", "下一个", "我喜欢小狗", "让我猜猜 是小狗"]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize("said", SMALL_TALK)
def test_small_talk_is_recognised(said: str) -> None:
    assert small_talk(said)


@pytest.mark.parametrize("said", NOT_SMALL_TALK)
def test_guesses_questions_of_the_story_and_requests_are_not_small_talk(said: str) -> None:
    assert not small_talk(said)


def test_help_me_asks_for_a_hint() -> None:
    assert help_request("帮帮我") == "hint"


@pytest.mark.parametrize("game", ["riddle", "guess_number", "draw_guess", "turtle_soup"])
async def test_a_built_in_game_judges_no_small_talk_and_speaks_no_verdict(game: str) -> None:
    loaded = load_game(ROOT / "games" / game)
    steps = (Step("start", "开始"), *(Step("message", line, judged=False) for line in SMALL_TALK))
    run = await play_scenario(loaded, Scenario("闲聊不判定", steps), 0)
    assert run.failures == []
    assert run.made_up_verdicts == 0
