"""你画我猜 (games/draw_guess) through GameHost, with the fake OpenAI server as the model.

The fake model is scripted per test (which tool it calls, what it says), so these tests pin
down what the game's code guarantees whatever the model does: the drawing, the judging, the
scores, the reveals, and that nothing unrevealed reaches the model or the family early.
Drawing intervals are patched to zero so the file runs in a few seconds.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from agentcade import effects
from agentcade.core.allowlist import ALLOWED_CALLS
from agentcade.core.protocol import GameReply
from agentcade.core.vector import encode_vector
from agentcade.device.validate import validate_directive
from agentcade.game.host import INTERRUPTED, GameHost
from agentcade.game.loader import LoadedGame, load_game
from agentcade.game.turn import Turn
from agentcade.testing.fake_openai import FakeOpenAI, Reply
from tests.game_helpers import (
    ask,
    call,
    directives,
    end_while_the_model_hangs,
    moves,
    screen,
    texts,
    user_events,
)

GAME_DIR = Path(__file__).resolve().parent.parent / "games" / "draw_guess"
FIRST, SECOND = "长颈鹿", "熊猫"
ORDER = (FIRST, SECOND, "猫", "狗", "老虎", "大象")
SAY_FIRST = "好呀，我来画一个动物，你猜猜是什么。"


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def game(monkeypatch: pytest.MonkeyPatch) -> LoadedGame:
    """The game with instant drawing and a fixed deck: 长颈鹿, 熊猫, 猫, 狗, 老虎, 大象, ..."""
    loaded = load_game(GAME_DIR, builtin=True)
    module = sys.modules[loaded.agent_cls.__module__]
    by_answer = {a.answer: a for a in module.ANIMALS}
    deck = [by_answer[a] for a in ORDER] + [a for a in module.ANIMALS if a.answer not in ORDER]
    monkeypatch.setattr(module, "shuffled_animals", lambda: list(deck))
    monkeypatch.setattr(loaded.agent_cls, "draw_interval", 0.0)
    monkeypatch.setattr(loaded.agent_cls, "prepare_pause", 0.0)
    return loaded




def animal(game: LoadedGame, answer: str) -> Any:
    module = sys.modules[game.agent_cls.__module__]
    return next(a for a in module.ANIMALS if a.answer == answer)


_AGENTS: list[Any] = []


def make_host(fake: FakeOpenAI, game: LoadedGame) -> GameHost:
    settings = game.agent_cls.config(llm=fake.settings(timeout=5.0))

    def new_agent() -> Any:
        _AGENTS.append(game.new_agent(settings))
        return _AGENTS[-1]

    return GameHost(new_agent)


def last_result() -> Any:
    """The hook's result of the last round the newest game remembered."""
    return json.loads(_AGENTS[-1]._memory[-1][0]["content"]).get("result")


def state() -> dict[str, Any]:
    return dict(_AGENTS[-1].state())


async def start(host: GameHost, fake: FakeOpenAI) -> list[GameReply]:
    return await ask(host, "start", "玩你画我猜")  # code opens: no model is asked


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def drawing(game: LoadedGame, answer: str) -> str:
    return encode_vector(list(animal(game, answer).strokes))


FACES = {face: encode_vector(effects.kaomoji(face)) for face in ("happy", "sorry")}


# --------------------------------------------------------------------------- start


async def test_start_says_first_then_shows_progress_then_draws_stroke_by_stroke(fake, game) -> None:
    replies = await start(make_host(fake, game), fake)
    giraffe = animal(game, FIRST)
    assert replies[0].text == SAY_FIRST
    assert replies[0].directives == []
    # the progress bar, then one directives-only reply per stroke, the last picture stays
    middle = replies[1:-1]
    assert all(not r.text and len(r.directives) == 1 for r in middle)
    bar = [encode_vector(effects.progress_bar(f)) for f in (0.0, 1.0)]
    steps = [encode_vector(list(giraffe.strokes[:n])) for n in range(1, len(giraffe.strokes) + 1)]
    assert screen(replies) == bar + steps
    assert len(steps) >= 2
    # the first question is code's, right after the drawing: no model is waited for (issue 54)
    assert replies[-1].text.startswith("画好啦，就在屏幕上。")
    assert replies[-1].text.endswith("你猜这是什么动物？")
    assert "三分" in replies[-1].text
    assert "两分" in replies[-1].text
    assert replies[-1].session == "active"
    assert fake.requests == []
    assert state()["第几题"] == 1


# --------------------------------------------------------------------------- judging


async def test_right_answer_nods_happy_puts_the_drawing_back_and_scores_three(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    replies = await ask(host, "message", "我猜是长颈鹿")
    assert fake.requests == []  # judged and worded in code
    result = last_result()
    assert replies[-1].text == result["message"]
    assert result["correct"] is True
    assert result["points"] == 3
    assert result["score"] == 3
    assert screen(replies) == [FACES["happy"], drawing(game, FIRST)]
    tilts = {tilt for _, tilt in moves(replies)}
    assert {pan for pan, _ in moves(replies)} == {90}
    assert len(tilts) > 1
    assert replies[-1].session == "active"


async def test_wrong_answer_shakes_sorry_and_puts_the_drawing_back(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    replies = await ask(host, "message", "是马吗")
    assert fake.requests == []  # another animal: judged wrong in code
    result = last_result()
    assert result["correct"] is False
    assert result["tries"] == 1
    assert FIRST not in json.dumps(result, ensure_ascii=False)
    assert screen(replies) == [FACES["sorry"], drawing(game, FIRST)]
    pans = {pan for pan, _ in moves(replies)}
    assert {tilt for _, tilt in moves(replies)} == {115}
    assert len(pans) > 1
    # a right guess after a wrong one scores two
    await ask(host, "message", "长颈鹿")
    assert last_result()["points"] == 2


async def test_half_an_answer_is_wrong(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    requests = len(fake.requests)
    replies = await ask(host, "message", "鹿")
    assert last_result()["correct"] is False
    assert texts(replies) == "不对哦，再看看，也可以要个提示。"
    assert len(fake.requests) == requests
    assert state()["这题已经揭晓"] is False


async def test_a_guess_of_no_animal_in_the_library_is_heard_as_judged_wrong(fake, game) -> None:
    """Issue 25: "小鸟" was judged wrong in code but the weak model said only "你猜小鸟吗？"."""
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(Reply("你猜小鸟吗？"))
    requests = len(fake.requests)
    replies = await ask(host, "message", "小鸟")
    assert texts(replies) == "不对哦，再看看，也可以要个提示。"
    assert len(fake.requests) == requests  # code's verdict is the reply, no model words it


async def test_a_line_that_is_no_animal_reaches_the_model_with_the_verdict(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(call("submit_answer"), Reply("不是哦，你再仔细看看。"))
    replies = await ask(host, "message", "这个有点像一把椅子")
    assert user_events(fake.requests[-2])[-1]["result"] == {
        "outcome": "not_the_answer",
        "correct": False,
    }
    assert tool_results(fake.requests[-1]) == [{"outcome": "already_judged"}]
    assert replies[-1].text == "不是哦，你再仔细看看。"


@pytest.mark.parametrize("said", ["不知道", "我不会", "猜不出来"])
async def test_a_give_up_or_hint_request_is_never_a_wrong_guess(fake, game, said) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    replies = await ask(host, "message", said)
    assert "不对" not in texts(replies)
    assert FACES["sorry"] not in screen(replies)
    assert state()["这题猜错次数"] == 0
    assert fake.requests == []


async def test_each_input_is_judged_once(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(Reply(tool_calls=[("submit_answer", {}), ("submit_answer", {})]), Reply("不对。"))
    await ask(host, "message", "是一种会飞的东西")
    first, second = tool_results(fake.requests[-1])
    assert first == second == {"outcome": "already_judged"}  # the hook judged it
    assert state()["这题猜错次数"] == 0


# --------------------------------------------------------------------------- hints


async def test_hints_never_contain_the_answer_and_cost_a_point(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    hints = []
    for _ in range(4):
        await ask(host, "message", "给个提示")
        hints.append(last_result())
    assert [h["hint"] for h in hints[:3]] == list(animal(game, FIRST).hints)
    assert hints[3]["outcome"] == "no_more_hints"
    assert not any(ch in json.dumps(hints, ensure_ascii=False) for ch in FIRST)
    await ask(host, "message", "长颈鹿")
    assert last_result()["points"] == 1  # three hints: the last tier


def test_no_hint_in_the_library_gives_its_answer_away(game) -> None:
    module = sys.modules[game.agent_cls.__module__]
    for a in module.ANIMALS:
        assert len(a.hints) == 3, a.answer
        for hint in a.hints:
            assert not any(ch in hint for ch in a.answer), (a.answer, hint)
        effects.stroke_steps(a.strokes)  # every drawing fits the screen


# --------------------------------------------------------------------------- skip / next


async def test_skip_reveals_first_then_draws_a_new_one_and_the_round_ends_after_five(
    fake, game
) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    revealed = []
    for number in range(2, 6):
        replies = await ask(host, "message", "跳过")
        result = last_result()
        revealed.append(result["answer"])
        assert replies[0].text.startswith(f"刚才画的是{result['answer']}。")  # said before drawing
        assert result["outcome"] == "new_drawing"
        assert result["number"] == number
        assert screen(replies)[-1] == drawing(game, ORDER[number - 1])
    replies = await ask(host, "message", "跳过")
    result = last_result()
    revealed.append(result["answer"])
    assert revealed == list(ORDER[:5])
    assert result["outcome"] == "round_over"
    assert result["skipped"] == 5
    assert replies[0].text == f"刚才画的是{ORDER[4]}。"
    assert replies[-1].session == "ended"
    assert not host.has_session("c")


async def test_next_question_after_a_right_answer_draws_the_next_animal_numbered_by_the_game(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    await ask(host, "message", "长颈鹿")
    asked = len(fake.requests)
    replies = await ask(host, "message", "下一题")
    assert len(fake.requests) == asked  # code drew it: the model once said 第三题 over the old picture
    assert replies[0].text.startswith("好，第二题")
    assert replies[-1].text == "画好了，这是第二题，你猜是什么动物？"
    assert screen(replies)[-1] == drawing(game, SECOND)


async def test_a_bare_yes_after_the_offer_draws_the_next_question(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    assert texts(await ask(host, "message", "长颈鹿")).endswith("要不要来下一题？")
    replies = await ask(host, "message", "好呀")
    assert replies[-1].text == "画好了，这是第二题，你猜是什么动物？"
    assert screen(replies)[-1] == drawing(game, SECOND)


async def test_next_on_an_unsolved_drawing_reveals_it_then_draws_the_next(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    replies = await ask(host, "message", "换一题")
    assert replies[0].text.startswith(f"刚才画的是{FIRST}。")
    assert replies[-1].text == "画好了，这是第二题，你猜是什么动物？"
    assert screen(replies)[-1] == drawing(game, SECOND)


async def test_say_it_again_shows_the_drawing_again_with_its_number(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    replies = await ask(host, "message", "再说一遍")
    assert replies[-1].text == "这是第一题，画在屏幕上了，你猜是什么动物？"
    assert screen(replies)[-1] == drawing(game, FIRST)


async def test_another_round_starts_over_from_question_one(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    await ask(host, "message", "长颈鹿")
    await ask(host, "message", "下一题")
    replies = await ask(host, "message", "再来一局")
    assert replies[0].text.startswith(f"刚才画的是{SECOND}。好，我们重新开始")
    assert replies[-1].text == "画好了，这是第一题，你猜是什么动物？"


def test_the_deck_never_repeats_an_animal_within_a_session(game) -> None:
    module = sys.modules[game.agent_cls.__module__]
    agent = game.agent_cls(game.agent_cls.config())
    drawn = [agent._prepare()[0].answer for _ in module.ANIMALS]
    assert len(set(drawn)) == len(module.ANIMALS)


async def test_a_full_round_of_right_answers_scores_fifteen_and_ends(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    for i, answer in enumerate(ORDER[:5]):
        if i:
            await ask(host, "message", "下一个")
        replies = await ask(host, "message", f"是{answer}吧")
    result = last_result()
    assert result["correct"] is True
    assert result["outcome"] == "round_over"
    assert result["score"] == 15
    assert result["right"] == 5
    assert "你猜对了五题" in result["message"]
    assert "十五分" in result["message"]
    assert replies[-1].session == "ended"


# --------------------------------------------------------------------------- other tools


async def test_show_drawing_and_show_progress(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(call("show_drawing"), Reply("你再看看。"))
    replies = await ask(host, "message", "我没看清")
    assert screen(replies) == [drawing(game, FIRST)]
    await ask(host, "message", "长颈鹿")
    await ask(host, "message", "我得了几分")
    progress = last_result()
    assert progress["number"] == 1
    assert progress["score"] == 3
    assert "第一题" in progress["message"]
    assert "三分" in progress["message"]


async def test_chit_chat_in_the_middle_judges_nothing_and_keeps_the_game(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(Reply("今天天气真不错。我们接着猜屏幕上的画吧。"))
    replies = await ask(host, "message", "今天天气真好")
    assert directives(replies) == []
    await ask(host, "message", "长颈鹿")
    assert last_result()["points"] == 3


async def test_start_game_starts_over_and_reveals_the_unsolved_one(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(call("start_game"), Reply("重新开始啦。"))
    replies = await ask(host, "message", "重新来一局")
    assert replies[0].text.startswith(f"刚才画的是{FIRST}。")
    result = tool_results(fake.requests[-1])[-1]
    assert result["number"] == 1
    assert screen(replies)[-1] == drawing(game, SECOND)


async def test_a_start_the_model_calls_mid_question_neither_reveals_nor_redraws(fake, game) -> None:
    """Issue 54: a start is idempotent; the model called start_game on a line that asks for
    no new round (好呀): the drawing on the screen stays the question."""
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(call("start_game"), Reply("好的，继续猜吧。"))
    replies = await ask(host, "message", "好呀")
    assert FIRST not in texts(replies)
    assert [r["outcome"] for r in tool_results(fake.requests[-1])] == ["already_started"]
    assert screen(replies) == []
    await ask(host, "message", FIRST)
    assert last_result()["correct"] is True


async def test_a_right_the_model_words_for_a_line_code_judged_not_the_answer_is_dropped(fake, game) -> None:
    """Issue 54's playtest: 好呀好呀 was judged not the answer and the weak model said
    "你猜对了，得3分。"; a verdict of right stands only when code found the player right."""
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(Reply("你猜对了，得3分。你猜这是什么动物？"))
    replies = await ask(host, "message", "好呀好呀")
    assert texts(replies) == "你猜这是什么动物？"
    assert state()["得分"] == 0


async def test_end_game_tool_reveals_sums_up_and_ends(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(call("end_game"), Reply("好的，不玩啦。"))
    replies = await ask(host, "message", "我不想玩了")
    assert FIRST in texts(replies)
    assert "这一局就到这里" in texts(replies)
    assert replies[-1].session == "ended"


# --------------------------------------------------------------------------- end


async def test_end_sums_up_the_score_and_reveals_the_unsolved_answer(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    await ask(host, "message", "长颈鹿")
    await ask(host, "message", "下一题")
    fake.push(Reply("谢谢你的回答。"))  # what the weak model said instead of the summary
    requests = len(fake.requests)
    replies = await ask(host, "end", "结束游戏")
    assert len(fake.requests) == requests  # the game's own words: no model re-words them
    text = texts(replies)
    assert text.startswith(f"刚才画的是{SECOND}。")
    assert "你猜对了一题，一共得了三分" in text
    assert replies[-1].session == "ended"


async def test_end_while_the_model_hangs_cancels_and_reveals(fake, game) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    stuck, end = await end_while_the_model_hangs(host, fake, "嗯让我想想")
    assert stuck[-1].text == INTERRUPTED
    assert f"刚才画的是{FIRST}。" in texts(end)
    assert end[-1].session == "ended"


async def test_end_while_drawing_cancels_the_drawing_and_reveals(fake, game, monkeypatch) -> None:
    host = make_host(fake, game)
    await start(host, fake)
    await ask(host, "message", "长颈鹿")
    monkeypatch.setattr(game.agent_cls, "draw_interval", 30.0)  # the next drawing is slow
    fake.push(Reply("再见。"))  # 下一题 is drawn by code: the model is only asked at the end
    drawing_replies: list[GameReply] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(ask, host, "message", "下一题", into=drawing_replies))
        await trio.testing.wait_all_tasks_blocked(cushion=0.05)  # between two strokes
        assert encode_vector(list(animal(game, SECOND).strokes[:1])) in screen(drawing_replies)
        with trio.fail_after(5):
            end = await ask(host, "end", "结束游戏")
    assert drawing_replies[-1].text == INTERRUPTED
    assert f"刚才画的是{SECOND}。" in texts(end)
    assert "一共得了三分" in texts(end)
    assert end[-1].session == "ended"


# --------------------------------------------------------------------------- guarantees


async def play_everything(host: GameHost, fake: FakeOpenAI) -> list[GameReply]:
    """A session using every tool; returns every reply."""
    replies = await start(host, fake)
    script = [
        (None, "是马吗"),
        (None, "提示一下"),
        (None, "再看看"),
        (None, "几分了"),
        (None, "长颈鹿"),
        (None, "下一题"),
        (None, "跳过"),
        (None, "重新开始"),
        ("end_game", "我们停一下吧"),
    ]
    for tool, text in script:
        if tool:
            fake.push(call(tool), Reply("好的。"))
        replies += await ask(host, "message", text)
    return replies


async def test_every_directive_is_valid_and_uses_exactly_the_declared_capabilities(
    fake, game
) -> None:
    replies = await play_everything(make_host(fake, game), fake)
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(Reply("再见。"))
    replies += await ask(host, "end", "结束游戏")
    declared = game.skill.required_capabilities
    sent = directives(replies)
    for directive in sent:
        validate_directive(directive, declared)
    assert (
        {ALLOWED_CALLS[d.call] for d in sent}
        == set(declared)
        == {"motion", "expression.runtime.v3"}
    )


async def test_no_unrevealed_answer_reaches_the_model_or_an_early_reply(fake, game) -> None:
    host = make_host(fake, game)
    replies = await start(host, fake)
    for text in ["是鹿吗", "给个提示", "再给个提示", "几分了", "再看看", "今天天气真好", "还有提示吗", "是马"]:
        fake.push(Reply("好的。"))
        replies += await ask(host, "message", text)
    for secret in (FIRST, "颈"):
        assert secret not in fake.all_text()
        assert not any(secret in r.text for r in replies)
    # only the end reveals it
    fake.push(Reply("再见。"))
    end = await ask(host, "end", "结束游戏")
    assert FIRST in texts(end)


async def test_requests_that_reach_submit_answer_still_do_what_the_user_meant(fake, game) -> None:
    agent = game.new_agent(game.agent_cls.config())
    opening = Turn("start", "", _ignore)
    agent.robot.bind(opening)
    await agent.on_start(opening)
    got: list[Any] = []
    for text in ("给个提示", "长颈鹿", "好的", "跳过"):
        turn = Turn("message", text, _ignore)
        agent.robot.bind(turn)
        got.append(await agent.tools["submit_answer"].invoke(agent, turn, {}))
        agent.robot.bind(None)
    hint, right, nxt, skip = got
    assert hint["hint"] == animal(game, FIRST).hints[0]
    assert right["points"] == 2  # the hint cost a point
    assert nxt["outcome"] == "new_drawing"
    assert nxt["number"] == 2
    assert skip["answer"] == SECOND
    assert skip["number"] == 3


async def _ignore(reply: GameReply, final: bool) -> None:
    pass


async def test_the_offline_model_plays_sensibly(game) -> None:
    host = GameHost(lambda: game.new_agent(game.agent_cls.config()))  # no model configured
    opening = await ask(host, "start", "玩你画我猜")
    assert opening[0].text == SAY_FIRST
    assert "你猜这是什么动物" in opening[-1].text
    assert (await ask(host, "message", "是猫吗"))[-1].text.startswith("不对哦")
    assert (await ask(host, "message", "给个提示"))[-1].text == animal(game, FIRST).hints[0]
    skipped = await ask(host, "message", "跳过")
    assert skipped[0].text.startswith(f"刚才画的是{FIRST}。")
    assert "第二题" in skipped[-1].text
    assert (await ask(host, "message", "熊猫"))[-1].text.startswith("猜对了，就是熊猫！得三分")
    end = await ask(host, "end", "结束游戏")
    assert texts(end).startswith("这一局就到这里。你猜对了一题，跳过了一题，一共得了三分。")


async def test_a_start_the_model_makes_twice_in_one_turn_neither_reveals_nor_redraws_again(fake, game) -> None:
    """Issue 54: a weak model called start_game twice, and the second start said the answer of
    the drawing the first one had just made."""
    host = make_host(fake, game)
    await start(host, fake)
    fake.push(call("start_game"), call("start_game"), Reply("我们重新开始吧。"))
    replies = await ask(host, "message", "重新来一局")
    assert SECOND not in texts(replies)
    assert [r["outcome"] for r in tool_results(fake.requests[-1])] == ["new_drawing", "already_started"]
    assert screen(replies)[-1] == drawing(game, SECOND)
