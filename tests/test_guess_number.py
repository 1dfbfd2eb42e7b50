"""猜数字 (games/guess_number) through GameHost, with the fake OpenAI server as the model.

Code judges what code can: the opening, every line that says a number (``on_message`` with
``parse_number``) and "不知道"/"猜不出来" are answered without the model (``turn.reply``).
The fake model is scripted for the rest (a new round, quitting, chit-chat), so these tests
pin down what the game's code guarantees whatever the model does: the rules are said,
guesses are answered bigger/smaller and cost a try only when they count, five misses lose
and reveal, hints narrow the range without ever giving the number away, and the number
reaches neither the model nor the family before it is revealed.

The numbers are fixed (13, then 7 for the next round) by patching ``random`` in the game
module. Small numbers also occur in ordinary text (一个, 一些, 五次), so the leak checks
use 13 / 十三, which nothing else in these scenarios says, and look at the structured
state and tool results as well.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from agentcade import effects
from agentcade.core.allowlist import ALLOWED_CALLS, FRONT_PAN, FRONT_TILT
from agentcade.core.protocol import GameReply
from agentcade.core.vector import encode_vector
from agentcade.game.host import INTERRUPTED, GameHost
from agentcade.game.loader import LoadedGame, load_game
from agentcade.game.turn import Turn
from agentcade.testing.fake_openai import FakeOpenAI, Reply
from tests.game_helpers import (
    GAMES_DIR,
    Hosts,
    ask,
    assert_valid_directives,
    call,
    calls,
    directives,
    end_while_the_model_hangs,
    game_module,
    state_of,
    texts,
    tool_results,
)

TARGET, NEXT = 13, 7
SECRETS = ("13", "十三")  # TARGET as Arabic and Chinese numerals
OPENING = "我想好了一个一到二十之间的数，你有五次机会，猜猜看吧。"
FACES = {face: encode_vector(effects.kaomoji(face)) for face in ("happy", "sorry")}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def loaded() -> LoadedGame:
    return load_game(GAMES_DIR / "guess_number", builtin=True)


def fixed_numbers(
    monkeypatch: pytest.MonkeyPatch, game: LoadedGame, numbers: Iterator[int]
) -> None:
    """Make the game's ``random.randint(1, 20)`` return ``numbers`` in order."""

    def randint(low: int, high: int) -> int:
        assert (low, high) == (1, 20)
        return next(numbers)

    monkeypatch.setattr(game_module(game), "random", SimpleNamespace(randint=randint))


@pytest.fixture
def game(loaded: LoadedGame, monkeypatch: pytest.MonkeyPatch) -> LoadedGame:
    """The game thinking of 13 first, then 7 (then 13 again, and so on)."""
    fixed_numbers(monkeypatch, loaded, itertools.cycle([TARGET, NEXT]))
    return loaded






async def started(hosts: Hosts, fake: FakeOpenAI) -> GameHost:
    host = hosts.make(fake)
    await ask(host, "start", "玩猜数字")
    return host


def guess(number: int) -> Reply:
    return call("submit_guess", number=number)


def last_result(hosts: Hosts) -> Any:
    """The hook's result of the last round the game remembered."""
    return json.loads(hosts.agents[-1]._memory[-1][0]["content"]).get("result")


def state(hosts: Hosts) -> dict[str, Any]:
    return dict(hosts.agents[-1].state())


async def guess_in(host: GameHost, hosts: Hosts, number: int, text: str = "") -> Any:
    """The user says a number; returns (the judged result, the replies)."""
    replies = await ask(host, "message", text or f"我猜{number}")
    return last_result(hosts), replies


def moves(replies: list[GameReply]) -> list[tuple[Any, Any]]:
    return [
        (d.kwargs["pan_deg"], d.kwargs["tilt_deg"])
        for d in directives(replies)
        if d.call == "motion.move_to"
    ]


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


# --------------------------------------------------------------------------- start


async def test_start_says_the_rules_without_asking_the_model(hosts, fake) -> None:
    replies = await ask(hosts.make(fake), "start", "玩猜数字")
    assert [r.text for r in replies] == [OPENING]
    assert replies[-1].session == "active"
    assert directives(replies) == []
    assert fake.requests == []
    assert last_result(hosts)["outcome"] == "new_round"
    assert state(hosts) == {
        "已知范围": "1到20",
        "猜过的数": [],
        "剩余机会": 5,
        "这一局结束了": False,
        "第几局": 1,
        "猜中的局数": 0,
    }


# --------------------------------------------------------------------------- guesses


@pytest.mark.parametrize("said", ["十三", "13", "我猜十三吧"])
async def test_right_guess_wins_with_a_nod_and_a_happy_face(hosts, fake, said) -> None:
    host = await started(hosts, fake)
    replies = await ask(host, "message", said)
    assert fake.requests == []  # judged and worded in code
    assert last_result(hosts) == {
        "outcome": "win",
        "answer": TARGET,
        "tries": 1,
        "message": "猜中了！就是十三，你用了一次。",
        "must_say": ["猜中了！就是十三。"],
    }
    assert replies[-1].text == "猜中了！就是十三，你用了一次。"
    assert calls(replies) == [
        "expression_runtime.start",
        *["motion.move_to"] * 5,
        "expression_runtime.update",
    ]
    assert directives(replies)[0].kwargs["custom_vector_path"] == FACES["happy"]
    assert directives(replies)[-1].kwargs["accessory"] == "none"  # back to the eyes
    assert {pan for pan, _ in moves(replies)} == {FRONT_PAN}  # a nod
    assert state(hosts)["这一局结束了"] is True
    assert state(hosts)["猜中的局数"] == 1
    assert replies[-1].session == "active"


async def test_wrong_guess_says_bigger_or_smaller_shakes_and_keeps_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    result, replies = await guess_in(host, hosts, 5)
    assert result == {
        "outcome": "higher",
        "tries_left": 4,
        "message": "比五还大不少，你还有四次机会。",
    }
    assert replies[-1].text == result["message"]
    assert calls(replies) == ["motion.move_to"] * 5  # a head shake, no face
    assert {tilt for _, tilt in moves(replies)} == {FRONT_TILT}
    assert moves(replies)[-1] == (FRONT_PAN, FRONT_TILT)
    result, _ = await guess_in(host, hosts, 15)
    assert result == {
        "outcome": "lower",
        "tries_left": 3,
        "message": "比十五还小一些，你还有三次机会。",
    }
    now = state(hosts)
    assert now["已知范围"] == "6到14"
    assert now["猜过的数"] == [5, 15]
    assert now["剩余机会"] == 3
    assert now["这一局结束了"] is False
    assert fake.requests == []


async def test_the_verdicts_given_ahead_are_those_then_said_for_each_number(hosts, fake) -> None:
    host = hosts.make(fake)
    ahead = (await ask(host, "start", "玩猜数字"))[-1].ahead
    assert len(ahead) == 20  # every number may be guessed
    # (guess, as said, the numbers still in range and not guessed after it: 6..20, 6..14)
    for number, said, left in ((5, "五", 15), (15, "十五", 9), (TARGET, "十三", 0)):
        _result, replies = await guess_in(host, hosts, number)
        assert replies[-1].text in ahead  # the verdict was given ahead, word for word
        assert said in replies[-1].text
        ahead = replies[-1].ahead
        assert len(ahead) == left  # after the win, nothing


async def test_out_of_range_and_repeated_guesses_cost_no_try(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    out, replies = await guess_in(host, hosts, 25, "二十五")
    assert out == {"outcome": "out_of_range", "message": "要猜一到二十之间的数哦。"}
    assert directives(replies) == []
    zero, _ = await guess_in(host, hosts, 0, "零")
    assert zero["outcome"] == "out_of_range"
    again, replies = await guess_in(host, hosts, 5, "五")
    assert again == {"outcome": "repeated", "message": "五已经猜过啦，换一个吧。"}
    assert directives(replies) == []
    assert state(hosts)["剩余机会"] == 4
    assert state(hosts)["猜过的数"] == [5]


async def test_five_wrong_guesses_lose_and_reveal_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    for number in (1, 2, 3, 4):
        result, _ = await guess_in(host, hosts, number)
        assert result["outcome"] == "higher"
    replies = await ask(host, "message", "五")
    result = last_result(hosts)
    assert result["outcome"] == "lose"
    assert result["answer"] == TARGET
    assert "十三" in replies[-1].text
    assert calls(replies) == [
        "expression_runtime.start",
        *["motion.move_to"] * 5,
        "expression_runtime.update",
    ]
    assert directives(replies)[0].kwargs["custom_vector_path"] == FACES["sorry"]
    assert {tilt for _, tilt in moves(replies)} == {FRONT_TILT}  # a shake
    now = state(hosts)
    assert now["这一局结束了"] is True
    assert now["剩余机会"] == 0
    assert now["猜中的局数"] == 0
    # the round is over: a sixth guess is not judged, the end does not reveal again
    over, _ = await guess_in(host, hosts, TARGET)
    assert over["outcome"] == "round_over"
    end = await ask(host, "end", "结束游戏")
    assert [r.text for r in end] == ["你一共玩了一局，猜中了零局。"]  # the number was said already


@pytest.mark.parametrize("said", ["五次机会用完了吗", "第二局", "还有几次"])
async def test_a_number_about_the_game_is_not_a_guess(hosts, fake, said) -> None:
    host = await started(hosts, fake)
    fake.push(Reply("你还有五次机会哦。"))
    await ask(host, "message", said)
    assert state(hosts)["猜过的数"] == []
    assert len(fake.requests) == 1  # the model words it; nothing was judged


@pytest.mark.parametrize("said", ["不知道", "我不会", "猜不出来"])
async def test_a_give_up_or_hint_request_is_never_a_wrong_guess(hosts, fake, said) -> None:
    host = await started(hosts, fake)
    replies = await ask(host, "message", said)
    assert state(hosts)["猜过的数"] == []
    assert "不对" not in texts(replies)
    assert calls(replies) == []  # no head shake
    assert fake.requests == []


async def test_the_model_cannot_guess_a_number_the_player_did_not_say(hosts, fake) -> None:
    host = await started(hosts, fake)
    fake.push(guess(13), Reply("你想猜几？"))
    await ask(host, "message", "嗯让我想想")
    assert tool_results(fake.requests[-1])[0]["outcome"] == "not_said"
    assert state(hosts)["猜过的数"] == []


# --------------------------------------------------------------------------- hints


async def test_hints_never_name_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)  # 6..20 left; 13 sits in the middle of it
    before = state(hosts)
    said: list[GameReply] = []
    for _ in range(4):
        said += await ask(host, "message", "给个提示")
        hint = last_result(hosts)
        assert set(hint) == {"hint"}
        assert not leaks(hint["hint"]), hint
    assert not leaks(texts(said))
    assert directives(said) == []
    assert state(hosts) == before  # hints cost no try


_NUMERAL_RUN = re.compile(r"[零一二三四五六七八九十]+|\d+")
_SPOKEN: dict[str, int] = {}  # filled from the game's own spoken() in numbers_in()


def numbers_in(module: Any, text: str) -> set[int]:
    """The numbers a text names (一个/一些/一样 are words, not numbers)."""
    if not _SPOKEN:
        _SPOKEN.update({module.spoken(n): n for n in range(100)})
    for word in ("一个", "一些", "一样"):
        text = text.replace(word, "")
    return {int(r) if r.isdigit() else _SPOKEN.get(r, -1) for r in _NUMERAL_RUN.findall(text)}


async def _transcript(agent: Any, actions: tuple[int | str, ...]) -> list[str]:
    """A new round (``start_game``), then the actions; every tool result as JSON text."""

    async def emit(reply: GameReply, *, final: bool) -> None:
        pass

    out = []
    for action in ("new", *actions):
        turn = Turn("message", "", emit)
        agent.robot.bind(turn)
        if action == "new":
            result = await agent.tools["start_game"].invoke(agent, turn, {})
        elif action == "hint":
            result = await agent.tools["get_hint"].invoke(agent, turn, {})
        else:
            result = await agent.tools["submit_guess"].invoke(agent, turn, {"number": action})
        out.append(json.dumps(result, ensure_ascii=False, sort_keys=True))
    return out[1:]


async def test_no_hint_pins_the_number_down_however_the_guesses_went(loaded, monkeypatch) -> None:
    """What the player knows is what they heard: two numbers that give the same tool results
    so far cannot be told apart. A hint may narrow that set, but never to one number when
    it held two or more before (and it never names the number)."""
    module = game_module(loaded)
    target = [0]
    monkeypatch.setattr(module, "random", SimpleNamespace(randint=lambda low, high: target[0]))

    async def still(*args: Any, **kwargs: Any) -> None:  # the robot is not the point here
        pass

    monkeypatch.setattr(module, "effects", SimpleNamespace(gesture=still, react=still))
    agents = {}
    for target[0] in range(1, 21):
        agents[target[0]] = loaded.new_agent(loaded.agent_cls.config())
    hint = "hint"
    plays: list[tuple[int | str, ...]] = [(hint, hint, hint, hint)]
    plays += [(g, hint, hint, hint) for g in range(1, 21)]
    plays += [(a, b, hint, hint) for a in range(1, 21) for b in range(1, 21) if a != b]
    plays += [(hint, a, hint, b, hint) for a in (4, 10, 16) for b in range(1, 21)]
    for actions in plays:
        heard = {}
        for target[0], agent in agents.items():
            heard[target[0]] = await _transcript(agent, actions)
        for k, action in enumerate(actions):
            if action != hint:
                continue
            for t, said in heard.items():
                before = [u for u, other in heard.items() if other[:k] == said[:k]]
                after = [u for u, other in heard.items() if other[: k + 1] == said[: k + 1]]
                assert len(before) < 2 or len(after) >= 2, (actions, t, said[: k + 1])
                told = json.loads(said[k]).get("hint", "")  # none once the round is over
                assert t not in numbers_in(module, told), (actions, t, told)


# --------------------------------------------------------------------------- give up, new round


async def test_end_game_reveals_the_number_and_ends_the_session(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    fake.push(call("end_game"), Reply("好的，不玩啦。"))
    replies = await ask(host, "message", "不玩了")
    result = tool_results(fake.requests[-1])[0]
    assert result["answer"] == TARGET
    assert result["already_said"] == ["我想的数是十三。"]
    assert [r.text for r in replies] == ["我想的数是十三。", "好的，不玩啦。"]
    assert replies[-1].session == "ended"
    assert not host.has_session("c")


async def test_start_game_starts_a_new_round_with_all_tries(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    await guess_in(host, hosts, 18)
    fake.push(call("start_game"), Reply("好，再来一局。"))
    replies = await ask(host, "message", "重新想一个数吧")  # not a line code recognises
    result = tool_results(fake.requests[-1])[0]
    assert result["outcome"] == "new_round"
    # the old number (TARGET) first, then the new rules, each at once
    assert [r.text for r in replies] == ["刚才我想的是十三。", OPENING, "好，再来一局。"]
    now = state(hosts)
    assert now["剩余机会"] == 5
    assert now["猜过的数"] == []
    assert now["已知范围"] == "1到20"
    assert now["第几局"] == 2
    won, _ = await guess_in(host, hosts, NEXT)  # the new number
    assert won["outcome"] == "win"
    assert won["tries"] == 1


@pytest.mark.parametrize("line", ["好呀", "开始吧", "我们来玩猜数字", "嗯嗯"])
async def test_a_start_the_model_calls_mid_round_neither_replaces_nor_reveals_it(hosts, fake, line) -> None:
    """Issue 54: a start is idempotent. The model calls start_game on a line that asks for
    no new round: the round goes on with its number, its guesses and its tries."""
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    before = state(hosts)
    fake.push(call("start_game"), Reply("好的，我们继续猜吧。"))
    replies = await ask(host, "message", line)
    result = tool_results(fake.requests[-1])[0]
    assert result["outcome"] == "already_started"
    assert not leaks(texts(replies))
    assert not leaks(json.dumps(result, ensure_ascii=False))
    assert state(hosts) == before
    won, _ = await guess_in(host, hosts, TARGET)  # still the number of this round
    assert won["outcome"] == "win"


async def test_a_start_called_twice_in_one_turn_opens_one_round_and_reveals_it_never(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    fake.push(call("start_game"), call("start_game"), Reply("好，再来一局。"))
    replies = await ask(host, "message", "重新想一个数吧")
    first, second = tool_results(fake.requests[-1])
    assert (first["outcome"], second["outcome"]) == ("new_round", "already_started")
    assert "七" not in texts(replies)  # the new number (NEXT) is never said
    won, _ = await guess_in(host, hosts, NEXT)
    assert won["outcome"] == "win"


# --------------------------------------------------------------------------- chit-chat


async def test_chit_chat_judges_nothing_and_changes_nothing(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    before = state(hosts)
    fake.push(Reply("我最喜欢的颜色是蓝色。我们接着猜吧。"))
    replies = await ask(host, "message", "你喜欢什么颜色")
    assert tool_results(fake.requests[-1]) == []
    assert directives(replies) == []
    assert "".join(r.text for r in replies) == "我最喜欢的颜色是蓝色。我们接着猜吧。"
    fake.push(Reply("好的。"))
    await ask(host, "message", "嗯")
    assert state(hosts) == before


async def test_a_verdict_the_model_makes_up_is_not_spoken(hosts, fake) -> None:
    host = await started(hosts, fake)
    fake.push(Reply("你猜对了！得三分。我们接着玩吧。"))
    replies = await ask(host, "message", "你好呀")
    assert texts(replies) == "我们接着玩吧。"


# --------------------------------------------------------------------------- end


async def test_end_while_the_model_hangs_interrupts_it_and_reveals_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    stuck, end = await end_while_the_model_hangs(host, fake, "你喜欢什么")
    assert [r.text for r in stuck] == [INTERRUPTED]
    assert [r.text for r in end] == ["我想的数是十三。你一共玩了一局，猜中了零局。"]
    assert end[-1].session == "ended"
    assert not host.has_session("c")


async def test_another_round_mid_round_says_the_old_number_then_the_new_rules_without_the_model(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    asked = len(fake.requests)
    replies = await ask(host, "message", "再玩一局")
    assert [r.text for r in replies] == ["刚才我想的是十三。" + OPENING]
    assert len(fake.requests) == asked
    assert state(hosts)["第几局"] == 2
    assert state(hosts)["剩余机会"] == 5


async def test_a_new_round_on_the_same_number_never_says_it_in_a_form_still_secret(loaded, monkeypatch, fake) -> None:
    fixed_numbers(monkeypatch, loaded, itertools.repeat(TARGET))  # chance: 1 in 20
    made = Hosts(loaded)
    try:
        host = made.make(fake)
        await ask(host, "start", "玩猜数字")
        said = texts(await ask(host, "message", "再玩一局"))
        assert said.startswith("刚才我想的是十三。")
        assert not [form for form in made.agents[-1].unrevealed() if form in said]
    finally:
        await made.aclose()


async def test_another_round_after_a_round_ended_judges_the_next_guess_in_the_new_round(hosts, fake) -> None:
    host = await started(hosts, fake)
    await ask(host, "message", "猜不出来")
    assert state(hosts)["这一局结束了"] is True
    replies = await ask(host, "message", "再来一局")
    assert [r.text for r in replies] == ["好，再来一局！" + OPENING]
    won, replies = await guess_in(host, hosts, NEXT)
    assert won["outcome"] == "win"
    assert "这一局已经结束了" not in texts(replies)


async def test_a_bare_yes_after_the_offer_starts_a_new_round(hosts, fake) -> None:
    host = await started(hosts, fake)
    assert "要不要再来一局" in texts(await ask(host, "message", "我放弃"))
    assert [r.text for r in await ask(host, "message", "好")] == ["好，再来一局！" + OPENING]
    assert state(hosts)["第几局"] == 2


async def test_say_it_again_repeats_the_range_and_tries_left_from_the_state(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, 5)
    replies = await ask(host, "message", "再说一遍")
    assert [r.text for r in replies] == ["我想的数在六到二十之间，你还有四次机会。"]
    assert state(hosts)["猜过的数"] == [5]


async def test_end_sums_up_rounds_and_wins(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, hosts, TARGET)
    await ask(host, "message", "再来一局")
    await guess_in(host, hosts, 3)
    fake.push(Reply("谢谢你的回答，这是一局有趣的游戏。"))  # what the weak model said instead
    requests = len(fake.requests)
    end = await ask(host, "end", "结束游戏")
    assert [r.text for r in end] == ["我想的数是七。你一共玩了两局，猜中了一局。"]
    assert len(fake.requests) == requests  # the game's own words: no model re-words them
    assert end[-1].session == "ended"


# --------------------------------------------------------------------------- guarantees


async def test_every_directive_is_valid_for_the_declared_capabilities(hosts, fake, game) -> None:
    host = await started(hosts, fake)
    replies: list[GameReply] = []
    for reply, text in [
        (None, "五"),
        (None, "提示"),
        (None, "二十五"),
        (None, "十三"),
        (None, "再来一局"),
        *[(None, str(n)) for n in (1, 2, 3, 4, 5)],
        (None, "提示"),
        (call("end_game"), "不玩了"),
    ]:
        if reply is not None:
            fake.push(reply, Reply("好的。"))
        replies += await ask(host, "message", text)
    sent = assert_valid_directives(replies, game)
    assert {ALLOWED_CALLS[d.call] for d in sent} == set(game.skill.required_capabilities)
    host = await started(hosts, fake)
    fake.push(Reply("再见。"))
    assert_valid_directives(await ask(host, "end", "结束游戏"), game)


async def test_no_unrevealed_number_reaches_the_model_or_an_early_reply(hosts, fake) -> None:
    host = await started(hosts, fake)
    said: list[GameReply] = []
    for text in ["我猜五", "给个提示", "再给个提示", "你几岁了", "二十五", "五", "十八", "还有提示吗"]:
        fake.push(Reply("好的。"))
        said += await ask(host, "message", text)
    assert not leaks(fake.all_text())
    assert not leaks(texts(said))
    for request in fake.requests:
        assert "answer" not in json.dumps(tool_results(request))
        now = state_of(request)
        assert TARGET not in now["猜过的数"]
        low, high = (int(n) for n in now["已知范围"].split("到"))
        assert low < high
    fake.push(Reply("再见。"))
    end = await ask(host, "end", "结束游戏")
    assert "十三" in texts(end)


async def test_an_offline_session_plays_start_message_end(hosts, game) -> None:
    host = hosts.make()  # no model configured: the offline model
    start = await ask(host, "start", "玩猜数字")
    assert OPENING in start[-1].text
    guessed = await ask(host, "message", "我猜十五")
    assert guessed[-1].text == "比十五还小一些，你还有四次机会。"
    end = await ask(host, "end", "结束游戏")
    assert texts(end).startswith("我想的数是十三。")
    assert "你一共玩了一局" in texts(end)
    assert end[-1].session == "ended"
    assert not host.has_session("c")
    assert_valid_directives(start + guessed + end, game)


async def test_one_utterance_is_one_guess(hosts, fake) -> None:
    """Regression (review): the model called submit_guess three times for "我猜七"."""
    host = await started(hosts, fake)
    fake.push(
        Reply(tool_calls=[("submit_guess", {"number": n}) for n in (7, 8, 9)]), Reply("嗯。")
    )
    await ask(host, "message", "七八九里面选一个")
    results = tool_results(fake.requests[-1])
    assert [r["outcome"] for r in results] == ["not_said", "not_said", "not_said"]
    assert state(hosts)["猜过的数"] == []
