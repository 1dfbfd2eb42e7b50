"""What a family says, through the whole pipeline (issue 54): what a child tells the robot
stays with the child, a line said to someone else in the room is not the game's, and a
start never restarts the game that plays."""

from __future__ import annotations

import json

import pytest

from agentcade.core.guard import PRIVATE_LINE
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import DANGER_GAME_TAIL
from tests import test_main_agent
from tests.test_main_agent import GAMES, Heard, pipeline

game_model = test_main_agent.game_model  # the probe game on the fake model
offline_games = test_main_agent.offline_games  # the built-in games on the offline model


async def test_a_childs_full_name_and_school_are_never_said_back_traced_or_heard_by_the_game(offline_games) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), heard=heard) as (agent, records):
        await agent.on_user("玩猜谜语")
        await agent.wait_idle()
        await agent.on_user("我叫王乐乐 我在阳光小学三年二班 你记住哦")
        await agent.wait_idle()
        assert heard.speech[-1] == PRIVATE_LINE + DANGER_GAME_TAIL
        assert [r["kind"] for r in records.of("a2a_request")] == ["start"]
        assert [r["topic"] for r in records.of("personal_data_heard")] == ["full_name"]
        assert "王乐乐" not in json.dumps(list(records), ensure_ascii=False)
        assert not any(m.get("content", "").count("王乐乐") for m in agent.history)
    assert not any("王乐乐" in line or "阳光小学" in line for line in heard.speech)


async def test_a_home_address_told_outside_a_game_gets_the_private_line(offline_games) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), heard=heard) as (agent, records):
        await agent.on_user("我家住在幸福路12号")
        await agent.wait_idle()
    assert heard.speech[-1] == PRIVATE_LINE
    assert [r["topic"] for r in records.of("personal_data_heard")] == ["address"]


@pytest.mark.parametrize(
    ("line", "forwarded"),
    [
        ("妹妹 是蝴蝶啦", "是蝴蝶啦"),
        ("妹妹是蝴蝶啦", "是蝴蝶啦"),  # in voice: no pause written (issue 54)
        ("妹妹是谁", "妹妹是谁"),  # 妹妹 is the subject: the whole line
        ("爸爸是在切洋葱吗", "爸爸是在切洋葱吗"),
    ],
)
async def test_a_guess_said_to_a_sister_goes_to_the_game_without_her_name(
    game_model, line: str, forwarded: str
) -> None:
    async with pipeline(GAMES) as (agent, records):
        await agent.on_user("玩探针")
        await agent.wait_idle()
        await agent.on_user(line)
        await agent.wait_idle()
        assert [(r["kind"], r["text"]) for r in records.of("a2a_request")][1:] == [("message", forwarded)]


async def test_a_question_to_a_brother_gets_no_verdict_and_is_not_echoed(game_model) -> None:
    heard = Heard()
    async with pipeline(GAMES, heard=heard) as (agent, records):
        await agent.on_user("玩探针")
        await agent.wait_idle()
        said = len(heard.speech)
        await agent.on_user("哥哥你猜是什么")
        await agent.wait_idle()
        assert [r["kind"] for r in records.of("a2a_request")] == ["start"]
        assert len(records.of("aside")) == 1
        assert heard.speech[said:] == []


async def test_starting_the_game_that_plays_again_neither_restarts_nor_reveals(game_model) -> None:
    async with pipeline(GAMES) as (agent, records):
        await agent.on_user("玩探针")
        await agent.wait_idle()
        client = agent.registry.get("probe")
        assert client is not None
        await agent.start_game(client, "玩探针")
        await agent.wait_idle()
        assert [r["kind"] for r in records.of("a2a_request")] == ["start"]
        assert [r["game"] for r in records.of("start_ignored")] == ["probe"]


async def test_a_no_to_the_games_offer_of_another_round_ends_the_game(offline_games) -> None:
    """Issue 54: 海龟汤 answered "要不要再来一个？" to 不要了 five times over."""
    heard = Heard()
    async with pipeline(builtin_games_dir(), heard=heard) as (agent, records):
        await agent.on_user("玩海龟汤")
        await agent.wait_idle()
        await agent.on_user("我放弃")
        await agent.wait_idle()
        assert heard.speech[-1].endswith("要不要再来一个？")
        await agent.on_user("不要了")
        await agent.wait_idle()
        assert agent.current is None
        assert [r["kind"] for r in records.of("a2a_request")] == ["start", "message", "end"]


async def test_a_no_without_an_offer_goes_to_the_game(offline_games) -> None:
    async with pipeline(builtin_games_dir()) as (agent, records):
        await agent.on_user("玩海龟汤")
        await agent.wait_idle()
        await agent.on_user("不要")
        await agent.wait_idle()
        assert agent.current is not None
        assert [r["kind"] for r in records.of("a2a_request")] == ["start", "message"]


async def test_a_danger_told_with_personal_data_is_answered_first_and_the_data_kept(offline_games) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), heard=heard) as (agent, records):
        await agent.on_user("我家住在幸福路12号 我想玩火")
        await agent.wait_idle()
        assert [r["topic"] for r in records.of("danger")] == ["fire"]
        assert "幸福路" not in json.dumps(list(records), ensure_ascii=False)
    assert heard.speech[-1].endswith(PRIVATE_LINE)
    assert heard.speech[-1] != PRIVATE_LINE
    assert "幸福路" not in "".join(heard.speech)
