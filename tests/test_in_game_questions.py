"""Rules, "我猜对了吗" and small talk inside every built-in game (issue 40).

A weak model's answer to "这个游戏怎么玩来着" was dropped as a made-up verdict ("抱歉，我刚才
走神了"), "哇你画得真好看" was judged "不对哦" and counted as a miss, and "我猜对了吗" was
judged a wrong answer with a head shake. Now the rules are said in code from the game's own
``description``, "我猜对了吗" is answered from the game's state, and small talk is chat: none
of them is judged, counted, or costs a try. The fake model is scripted where a line does
reach it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcade.core.claims import claims_progress
from agentcade.game.host import GameHost
from agentcade.game.loader import LoadedGame, load_game
from agentcade.judge import asks_verdict, rules_question, small_talk
from agentcade.testing.fake_openai import FakeOpenAI, Reply
from tests.game_helpers import GAMES_DIR, Hosts, ask, calls, game_module

GAMES = ("guess_number", "riddle", "draw_guess", "turtle_soup")
RULES_LINES = (
    "这个游戏怎么玩来着",
    "这个怎么玩呀，规则是啥",
    "这个游戏怎么算分来着",
    "啥意思，听不懂",
)


@pytest.mark.parametrize("line", [*RULES_LINES, "规则是什么", "怎么才算赢呀", "没听懂"])
def test_rules_questions_are_recognised(line) -> None:
    assert rules_question(line)


@pytest.mark.parametrize(
    "line",
    ["我猜是老虎", "他是不是在做实验", "十五", "下一个", "我不明白他为什么要把灯全都打开再关上"],
)
def test_guesses_and_story_questions_are_not_rules_questions(line) -> None:
    assert not rules_question(line)


@pytest.mark.parametrize(
    "line", ["我猜对了吗", "对不对呀", "我答对了没有", "刚才那个对了吗", "我是不是猜对了"]
)
def test_am_i_right_is_recognised(line) -> None:
    assert asks_verdict(line)


@pytest.mark.parametrize("line", ["是老虎对不对", "是不是老虎", "是桌子吗", "猜对了就给我画星星"])
def test_a_guess_with_a_question_tag_is_still_a_guess(line) -> None:
    assert not asks_verdict(line)


@pytest.mark.parametrize(
    "line", ["哇你画得真好看", "你吃过饭了没", "冰箱里面好冷哦，你怕冷吗", "你真厉害"]
)
def test_new_small_talk_is_recognised(line) -> None:
    assert small_talk(line)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


@pytest.fixture(params=GAMES)
def game(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> LoadedGame:
    loaded = load_game(GAMES_DIR / request.param, builtin=True)
    if request.param == "draw_guess":
        monkeypatch.setattr(loaded.agent_cls, "draw_interval", 0.0)
        monkeypatch.setattr(loaded.agent_cls, "prepare_pause", 0.0)
    return loaded


async def started(hosts: Hosts, fake: FakeOpenAI) -> GameHost:
    host = hosts.make(fake)
    await ask(host, "start", "开始")
    fake.requests.clear()
    return host


def counts(agent: Any) -> tuple[Any, ...]:
    """What a guess, a question or a miss would change, in any of the games."""
    names = ("guesses", "tries", "questions", "total_questions", "hints", "hints_used", "solved")
    deck = getattr(agent, "deck", None)
    return (*(getattr(agent, n, None) for n in names), getattr(deck, "asked", None))


def shook_head(replies: list[Any]) -> bool:
    return "motion.move_to" in calls(replies)


@pytest.mark.parametrize("line", RULES_LINES)
async def test_a_rules_question_is_answered_from_the_games_description(
    hosts, fake, game, line
) -> None:
    host = await started(hosts, fake)
    before = counts(hosts.agents[-1])
    replies = await ask(host, "message", line)
    said = "".join(r.text for r in replies)
    assert game.agent_cls.skill.description in said
    assert fake.requests == []  # no model: nothing to drop, nothing to wait for
    assert counts(hosts.agents[-1]) == before
    assert not shook_head(replies)


async def test_the_rules_say_where_the_game_stands(hosts, fake, game) -> None:
    host = await started(hosts, fake)
    replies = await ask(host, "message", "这个游戏怎么玩来着")
    assert replies[-1].text.endswith(hosts.agents[-1].where_we_are())
    assert hosts.agents[-1].where_we_are()


async def test_am_i_right_is_answered_from_the_state_and_never_judged(hosts, fake, game) -> None:
    host = await started(hosts, fake)
    before = counts(hosts.agents[-1])
    replies = await ask(host, "message", "我猜对了吗")
    assert replies[-1].text.startswith(("还没有猜中哦", "你还没猜呢"))
    assert fake.requests == []
    assert counts(hosts.agents[-1]) == before
    assert not shook_head(replies)


@pytest.mark.parametrize("line", ["哇你画得真好看", "你吃过饭了没", "冰箱里面好冷哦，你怕冷吗"])
async def test_small_talk_is_chat_not_a_guess_a_question_or_a_miss(hosts, fake, game, line) -> None:
    host = await started(hosts, fake)
    before = counts(hosts.agents[-1])
    fake.push(Reply("谢谢你呀！我们接着玩吧。"))
    replies = await ask(host, "message", line)
    assert "".join(r.text for r in replies) == "谢谢你呀！我们接着玩吧。"
    assert counts(hosts.agents[-1]) == before
    assert not shook_head(replies)


async def test_a_chat_reply_with_a_made_up_verdict_goes_on_instead_of_failing(
    hosts, fake, game
) -> None:
    host = await started(hosts, fake)
    fake.push(Reply("不对哦，猜错了。"))
    replies = await ask(host, "message", "你吃过饭了没")
    assert replies[-1].text == "嘿嘿，我们接着玩吧。"  # not "抱歉，我刚才走神了"


# --------------------------------------------------------------------------- made-up actions


@pytest.fixture
def numbers(monkeypatch: pytest.MonkeyPatch) -> LoadedGame:
    loaded = load_game(GAMES_DIR / "guess_number", builtin=True)
    targets = iter([13, 7])
    monkeypatch.setattr(
        game_module(loaded),
        "random",
        type("R", (), {"randint": staticmethod(lambda a, b: next(targets))}),
    )
    return loaded


async def test_too_hard_next_starts_a_real_new_round_of_guess_number(fake, numbers) -> None:
    made = Hosts(numbers)
    try:
        host = made.make(fake)
        await ask(host, "start", "玩猜数字")
        await ask(host, "message", "十")
        replies = await ask(host, "message", "这个好难，下一个")
        assert "刚才我想的是十三" in "".join(r.text for r in replies)
        replies = await ask(host, "message", "十")
        assert replies[-1].text == "比十还小一些，你还有四次机会。"  # the fresh round's chances
        assert fake.requests == []
    finally:
        await made.aclose()


@pytest.fixture
def drawing(monkeypatch: pytest.MonkeyPatch) -> LoadedGame:
    loaded = load_game(GAMES_DIR / "draw_guess", builtin=True)
    monkeypatch.setattr(loaded.agent_cls, "draw_interval", 0.0)
    monkeypatch.setattr(loaded.agent_cls, "prepare_pause", 0.0)
    return loaded


async def test_hurry_up_and_draw_shows_the_drawing_and_claims_nothing(fake, drawing) -> None:
    made = Hosts(drawing)
    try:
        host = made.make(fake)
        await ask(host, "start", "玩你画我猜")
        fake.requests.clear()
        replies = await ask(host, "message", "快画呀")
        assert replies[-1].text == "第一题已经画在屏幕上了，你猜是什么动物？"
        assert "expression_runtime.update" in calls(replies)  # the drawing, on the screen again
        assert fake.requests == []
    finally:
        await made.aclose()


async def test_a_drawing_the_game_did_not_make_is_not_spoken(fake, drawing) -> None:
    made = Hosts(drawing)
    try:
        host = made.make(fake)
        await ask(host, "start", "玩你画我猜")
        fake.push(Reply("我画了一个小动物。你喜欢吗？"))
        replies = await ask(host, "message", "你喜欢什么颜色")
        assert replies[-1].text == "你喜欢吗？"
    finally:
        await made.aclose()


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("好，我们来新的一局。", True),
        ("好，重新开始！", True),
        ("我画了一个小动物。", True),
        ("要不要再来一局？", False),
        ("想不想重新开始？", False),
        ("你猜是什么动物？", False),
    ],
)
def test_a_restart_or_drawing_is_a_claim_an_offer_is_not(text, claims) -> None:
    assert bool(claims_progress(text)) == claims
