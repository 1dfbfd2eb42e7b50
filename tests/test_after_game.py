"""Lines outside a game read against what just happened (issue 40): rounds after a game
ended, vague picks after the list, a bare "开始" or number — on a labelled set
(tests/data/after_game_cases.tsv): lines that must resolve in code and lines that must not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from agentcade.core.danger import DANGER_ANSWERS
from agentcade.core.host_settings import Budgets
from agentcade.core.skill import Skill
from agentcade.game.client import GameInfo
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import DANGER_GAME_TAIL, DANGER_HEARD, NUMBER_OFFER, WAIT_TEXT
from agentcade.main.chat import friendly, made_up
from agentcade.main.router import After, describe_text, route, which_text
from agentcade.testing.fake_openai import FakeOpenAI, Reply, serve_fake_openai
from agentcade.testing.timed_robot import Records
from tests import labelled
from tests.test_main_agent import Heard, main_model, pipeline

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
    assert (got.kind, got.game_id if kind in ("start", "restart", "repeat", "number", "describe") else "") == (kind, game)


def test_the_games_order_is_the_lists(games) -> None:
    """The positions in the set are the order the list was said in (the registry's)."""
    assert [g.id for g in games] == ["draw_guess", "guess_number", "riddle", "turtle_soup"]


def test_during_a_game_a_round_request_still_goes_to_the_game(games) -> None:
    after = After(game_id="riddle", fresh=True, offered="again", listed=True)
    for line in ("再来一局", "下一个", "好", "最后那个", "十", "开始"):
        assert route(line, games, "guess_number", after).kind == "forward"


# -- through the whole pipeline: the built-in games on the offline model, the main agent's
# model the fake OpenAI server (it must not be asked for what code decides) ---------------


@pytest.fixture
def offline_games(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


@pytest.fixture
async def main(nursery: trio.Nursery) -> FakeOpenAI:
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    return fake


def sent(records: Records) -> list[str]:
    return [r["kind"] for r in records.of("a2a_request")]


async def test_again_after_ending_guess_number_starts_a_new_round_that_judges_ten(offline_games, main) -> None:
    """Issue 40: 玩猜数字 → 结束游戏 → 再来一局 → 十: 0 of 9 tries worked with the model."""
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, records):
        await agent.on_user("玩猜数字")
        await agent.on_user("结束游戏")
        await agent.wait_idle()
        assert agent.current is None
        await agent.on_user("再来一局")
        assert agent.current is not None
        assert agent.current.info.id == "guess_number"
        before = len(heard.speech)
        await agent.on_user("十")
        await agent.wait_idle()
        assert sent(records) == ["start", "end", "start", "message"]
    assert main.requests == []
    assert any(w in "".join(heard.speech[before:]) for w in ("大了", "小了", "猜对", "猜中"))


@pytest.mark.parametrize(("game", "line"), [("猜谜语", "再来一个"), ("海龟汤", "再来一个吧"), ("猜谜语", "下一个")])
async def test_another_round_after_a_game_ended_restarts_it_without_the_model(
    offline_games, main, game: str, line: str
) -> None:
    async with pipeline(builtin_games_dir(), main_model(main)) as (agent, records):
        await agent.on_user(f"玩{game}")
        played = agent.current.info.id if agent.current else None
        await agent.on_user("不玩了")
        await agent.wait_idle()
        await agent.on_user(line)
        assert agent.current is not None
        assert agent.current.info.id == played
    assert main.requests == []
    assert [r["how"] for r in records.of("after_game_start")] == ["restart"]


async def test_a_bare_yes_restarts_only_a_game_whose_last_words_offered_it(offline_games, main) -> None:
    main.default = Reply("嗯嗯。")
    async with pipeline(builtin_games_dir(), main_model(main)) as (agent, _):
        await agent.on_user("玩猜数字")
        await agent.on_user("结束游戏")  # the summary offers nothing
        await agent.wait_idle()
        await agent.on_user("好")
        assert agent.current is None
    assert len(main.requests) == 1


async def test_repeat_right_after_a_game_ended_says_its_last_words_again(offline_games, main) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, _):
        await agent.on_user("玩猜谜语")
        await agent.on_user("结束游戏")
        await agent.wait_idle()
        goodbye = heard.speech[-1]
        await agent.on_user("再说一遍")
        assert agent.current is None
    assert main.requests == []
    assert heard.speech[-1].endswith(goodbye)


@pytest.mark.parametrize(("line", "game"), [("最后那个吧", "turtle_soup"), ("那玩画画那个", "draw_guess"),
                                            ("第二个", "guess_number")])
async def test_a_vague_pick_right_after_the_list_starts_that_game(offline_games, main, line: str, game: str) -> None:
    async with pipeline(builtin_games_dir(), main_model(main)) as (agent, _):
        await agent.on_user("有什么游戏")
        await agent.on_user(line)
        assert agent.current is not None
        assert agent.current.info.id == game
    assert main.requests == []


async def test_leaving_the_pick_to_the_host_starts_a_game_it_picks(offline_games, main) -> None:
    async with pipeline(builtin_games_dir(), main_model(main)) as (agent, records):
        await agent.on_user("有什么游戏")
        await agent.on_user("随便，你挑一个")
        assert agent.current is not None
    assert main.requests == []
    assert [r["how"] for r in records.of("after_game_start")] == ["random"]


async def test_a_bare_number_with_no_game_offers_the_number_game_and_yes_starts_it(offline_games, main) -> None:
    """Issue 40: "十" with no game got "我是一个人工智能，没有十这个数字。"."""
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, _):
        await agent.on_user("十")
        assert heard.speech == [NUMBER_OFFER.format(name="猜数字")]
        await agent.on_user("好")
        assert agent.current is not None
        assert agent.current.info.id == "guess_number"
    assert main.requests == []


@pytest.mark.parametrize("line", ["开始啊", "开始吧", "开始游戏"])
async def test_start_with_no_game_chosen_asks_which_and_starts_nothing(offline_games, main, line: str) -> None:
    """Issue 40: "开始啊" → "好的，开始游戏。" with nothing started."""
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, _):
        await agent.on_user(line)
        assert agent.current is None
    assert main.requests == []
    assert heard.speech == [which_text(agent.registry.games)]


# -- danger --------------------------------------------------------------------------


SOCKET = "我想把手指伸进插座里试试"


async def test_danger_outside_a_game_gets_the_caring_answer_before_any_model(offline_games, main) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, records):
        await agent.on_user(SOCKET)
    assert main.requests == []
    assert heard.speech == [DANGER_ANSWERS["electricity"]]
    assert [r["topic"] for r in records.of("danger")] == ["electricity"]


async def test_danger_in_a_game_is_answered_and_the_game_goes_on_as_it_was(offline_games, main) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, records):
        await agent.on_user("玩猜数字")
        await agent.on_user(SOCKET)
        assert heard.speech[-1] == DANGER_ANSWERS["electricity"] + DANGER_GAME_TAIL
        assert agent.current is not None
        await agent.on_user("十")
        await agent.wait_idle()
        assert sent(records) == ["start", "message"]  # the game never heard the socket
    assert any(w in heard.speech[-1] for w in ("大了", "小了", "猜对", "猜中"))


# -- no made-up actions in the host's own chat ----------------------------------------------


CLAIMS = "太棒了，你猜对了！我们来看第三题吧。好的，开始游戏。我画了一个小动物。"


@pytest.mark.parametrize("line", ["我们聊聊天吧", "讲个笑话吧", "你喜欢什么", "好"])
async def test_a_model_that_always_claims_gets_none_of_its_claims_spoken(offline_games, main, line: str) -> None:
    main.default = Reply(CLAIMS)
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, records):
        await agent.on_user(line)
        assert agent.current is None
    assert len(heard.speech) == 1
    spoken = heard.speech[0]
    for claim in ("猜对", "第三题", "开始游戏", "画了"):
        assert claim not in spoken
    assert spoken == friendly(line)  # still an honest line
    assert len(records.of("claim_dropped")) == 4


async def test_the_models_plain_words_beside_a_claim_are_kept(offline_games, main) -> None:
    main.push(Reply("天气真好呀！我们开始游戏吧。"))
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, _):
        await agent.on_user("今天天气真好")
    assert heard.speech == ["天气真好呀！"]


@pytest.mark.parametrize(
    "sentence",
    ["好的，开始游戏。", "太棒了，你猜对了！", "我们来看第三题吧。", "我画了一个小动物。", "明白了，继续玩！",
     "好，开始画画那个游戏。", "小了，再猜。", "好，重新想一个数。"],
)
def test_a_claim_of_what_only_code_does_is_made_up(sentence: str) -> None:
    assert made_up(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["你好呀，我是小懒。", "小兔子为什么不吃窝边草？因为它怕被发现。", "我最喜欢猜谜语了，你想玩吗？", "你长大了呀！",
     "天气真好呀！", "我们什么时候开始呢？", "你今天开心吗？"],
)
def test_plain_chat_is_not_made_up(sentence: str) -> None:
    assert not made_up(sentence)


# -- waiting -----------------------------------------------------------------------------


async def test_two_slow_model_calls_in_one_line_say_one_filler_then_the_answer(offline_games, main) -> None:
    """A refused start_game costs a second call: the child still hears "稍等" once.

    Wall clock (as test_faults' hanging model): the model is a real socket, and a jumping
    clock runs past the line budget while the request is in flight."""
    main.push(Reply(tool_calls=[("start_game", {"game_id": "riddle"})], delay=0.6),
              Reply("小兔子为什么不吃窝边草？因为它怕被发现。", delay=0.6))
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, records):
        agent.budgets = Budgets(patience=0.2, line=5)
        await agent.on_user("讲个笑话吧")
    assert heard.speech == [WAIT_TEXT, "小兔子为什么不吃窝边草？因为它怕被发现。"]
    assert len(records.of("patience")) == 1


async def test_how_a_named_game_is_played_is_answered_from_its_description_and_yes_starts_it(
    offline_games, main
) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, _):
        await agent.on_user("海龟汤怎么玩")
        assert agent.current is None
        described = agent.registry.get("turtle_soup")
        assert described is not None
        assert heard.speech == [describe_text(described.info)]
        await agent.on_user("好呀")
        assert agent.current is not None
        assert agent.current.info.id == "turtle_soup"
    assert main.requests == []


@pytest.mark.parametrize("playing", [False, True])
async def test_a_yes_to_the_caring_answer_is_heard_by_the_host_not_the_model_or_game(
    offline_games, main, playing: bool
) -> None:
    heard = Heard()
    async with pipeline(builtin_games_dir(), main_model(main), heard=heard) as (agent, records):
        if playing:
            await agent.on_user("玩猜数字")
        await agent.on_user("我想玩火")
        await agent.on_user("好的")
        assert heard.speech[-1] == DANGER_HEARD
        assert sent(records) == (["start"] if playing else [])
    assert main.requests == []
