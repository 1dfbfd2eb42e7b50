"""猜数字 (games/guess_number) through GameHost, with the fake OpenAI server as the model.

The fake model is scripted per test (which tool it calls, what it says), so these tests pin
down what the game's code guarantees whatever the model does: the rules are said, guesses
are answered bigger/smaller and cost a try only when they count, five misses lose and
reveal, hints narrow the range without ever giving the number away, and the number reaches
neither the model nor the family before it is revealed.

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
from agentcade.allowlist import ALLOWED_CALLS, FRONT_PAN, FRONT_TILT
from agentcade.game.host import INTERRUPTED, GameHost
from agentcade.game.loader import LoadedGame, load_game
from agentcade.game.turn import Turn
from agentcade.protocol import GameReply
from agentcade.vector import encode_vector
from tests.fake_openai import FakeOpenAI, Reply
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
    user_events,
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
    fake.push(Reply(OPENING))
    host = hosts.make(fake)
    await ask(host, "start", "玩猜数字")
    return host


def guess(number: int) -> Reply:
    return call("submit_guess", number=number)


async def guess_in(host: GameHost, fake: FakeOpenAI, number: int, text: str = "") -> Any:
    """The user says a number; returns (the tool result, the replies)."""
    fake.push(guess(number), Reply("嗯。"))
    replies = await ask(host, "message", text or f"我猜{number}")
    (result,) = tool_results(fake.requests[-1])
    return result, replies


def moves(replies: list[GameReply]) -> list[tuple[Any, Any]]:
    return [
        (d.kwargs["pan_deg"], d.kwargs["tilt_deg"])
        for d in directives(replies)
        if d.call == "motion.move_to"
    ]


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


# --------------------------------------------------------------------------- start


async def test_start_says_the_rules_even_when_the_model_leaves_them_out(hosts, fake) -> None:
    fake.push(Reply("好呀，我们来玩猜数字。"))
    replies = await ask(hosts.make(fake), "start", "玩猜数字")
    assert replies[-1].text == f"好呀，我们来玩猜数字。{OPENING}"
    assert replies[-1].session == "active"
    assert directives(replies) == []
    result = user_events(fake.requests[0])[-1]["result"]
    assert result["outcome"] == "new_round"
    assert result["message"] == OPENING
    assert state_of(fake.requests[0]) == {
        "已知范围": "1到20",
        "猜过的数": [],
        "剩余机会": 5,
        "这一局结束了": False,
        "第几局": 1,
        "猜中的局数": 0,
    }
    assert not leaks(fake.all_text())


async def test_rules_the_model_says_itself_are_not_said_twice(hosts, fake) -> None:
    fake.push(Reply(f"来玩吧！{OPENING}"))
    replies = await ask(hosts.make(fake), "start", "玩猜数字")
    assert replies[-1].text == f"来玩吧！{OPENING}"


# --------------------------------------------------------------------------- guesses


@pytest.mark.parametrize("said", ["十三", "13", "我猜十三吧"])
async def test_right_guess_wins_with_a_nod_and_a_happy_face(hosts, fake, said) -> None:
    host = await started(hosts, fake)
    fake.push(guess(TARGET), Reply("猜中啦！"))
    replies = await ask(host, "message", said)
    assert tool_results(fake.requests[-1]) == [
        {
            "outcome": "win",
            "answer": TARGET,
            "tries": 1,
            "message": "猜中了！就是十三，你用了一次。",
            "must_say": ["猜中了！就是十三。"],
        }
    ]
    assert calls(replies) == [
        "expression_runtime.start",
        *["motion.move_to"] * 5,
        "expression_runtime.update",
    ]
    assert directives(replies)[0].kwargs["custom_vector_path"] == FACES["happy"]
    assert directives(replies)[-1].kwargs["accessory"] == "none"  # back to the eyes
    assert {pan for pan, _ in moves(replies)} == {FRONT_PAN}  # a nod
    assert state_of(fake.requests[-1])["这一局结束了"] is True
    assert state_of(fake.requests[-1])["猜中的局数"] == 1
    assert replies[-1].session == "active"


async def test_wrong_guess_says_bigger_or_smaller_shakes_and_keeps_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    result, replies = await guess_in(host, fake, 5)
    assert result == {
        "outcome": "higher",
        "tries_left": 4,
        "message": "比五还大不少，你还有四次机会。",
    }
    assert calls(replies) == ["motion.move_to"] * 5  # a head shake, no face
    assert {tilt for _, tilt in moves(replies)} == {FRONT_TILT}
    assert moves(replies)[-1] == (FRONT_PAN, FRONT_TILT)
    result, _ = await guess_in(host, fake, 15)
    assert result == {
        "outcome": "lower",
        "tries_left": 3,
        "message": "比十五还小一些，你还有三次机会。",
    }
    state = state_of(fake.requests[-1])
    assert state["已知范围"] == "6到14"
    assert state["猜过的数"] == [5, 15]
    assert state["剩余机会"] == 3
    assert state["这一局结束了"] is False
    assert not leaks(fake.all_text())


async def test_out_of_range_and_repeated_guesses_cost_no_try(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, fake, 5)
    out, replies = await guess_in(host, fake, 25, "二十五")
    assert out == {"outcome": "out_of_range", "message": "要猜一到二十之间的数哦。"}
    assert directives(replies) == []
    zero, _ = await guess_in(host, fake, 0, "零")
    assert zero["outcome"] == "out_of_range"
    again, replies = await guess_in(host, fake, 5, "五")
    assert again == {"outcome": "repeated", "message": "五已经猜过啦，换一个吧。"}
    assert directives(replies) == []
    state = state_of(fake.requests[-1])
    assert state["剩余机会"] == 4
    assert state["猜过的数"] == [5]


async def test_five_wrong_guesses_lose_and_reveal_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    for number in (1, 2, 3, 4):
        result, _ = await guess_in(host, fake, number)
        assert result["outcome"] == "higher"
    fake.push(guess(5), Reply("很遗憾，机会用完了。"))
    replies = await ask(host, "message", "五")
    result = tool_results(fake.requests[-1])[0]
    assert result["outcome"] == "lose"
    assert result["answer"] == TARGET
    assert "十三" in result["message"]
    assert "十三" in replies[-1].text  # said even though the model left it out
    assert calls(replies) == [
        "expression_runtime.start",
        *["motion.move_to"] * 5,
        "expression_runtime.update",
    ]
    assert directives(replies)[0].kwargs["custom_vector_path"] == FACES["sorry"]
    assert {tilt for _, tilt in moves(replies)} == {FRONT_TILT}  # a shake
    state = state_of(fake.requests[-1])
    assert state["这一局结束了"] is True
    assert state["剩余机会"] == 0
    assert state["猜中的局数"] == 0
    # the round is over: a sixth guess is not judged, the end does not reveal again
    over, _ = await guess_in(host, fake, TARGET)
    assert over["outcome"] == "round_over"
    fake.push(Reply("再见。"))
    end = await ask(host, "end", "结束游戏")
    assert "answer" not in user_events(fake.requests[-1])[-1]["result"]
    assert end[-1].text == "再见。"


# --------------------------------------------------------------------------- hints


async def test_hints_never_name_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, fake, 5)  # 6..20 left; 13 sits in the middle of it
    before = state_of(fake.requests[-1])
    said: list[GameReply] = []
    for _ in range(4):
        fake.push(call("get_hint"), Reply("给你一个提示。"))
        said += await ask(host, "message", "给个提示")
        (hint,) = tool_results(fake.requests[-1])
        assert set(hint) == {"hint"}
        assert not leaks(hint["hint"]), hint
    assert not leaks(texts(said))
    assert not leaks(fake.all_text())
    assert directives(said) == []
    after = state_of(fake.requests[-1])
    assert after == before  # hints cost no try


_NUMERAL_RUN = re.compile(r"[零一二三四五六七八九十]+|\d+")
_SPOKEN = {}  # filled from the game's own spoken() in numbers_in()


def numbers_in(module: Any, text: str) -> set[int]:
    """The numbers a text names (一个/一些/一样 are words, not numbers)."""
    if not _SPOKEN:
        _SPOKEN.update({module.spoken(n): n for n in range(100)})
    for word in ("一个", "一些", "一样"):
        text = text.replace(word, "")
    return {int(r) if r.isdigit() else _SPOKEN.get(r, -1) for r in _NUMERAL_RUN.findall(text)}


async def _transcript(agent: Any, actions: tuple[int | str, ...]) -> list[str]:
    """A new round (``start_game``), then the actions; every tool result as JSON text."""

    async def emit(reply: GameReply, final: bool) -> None:
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
    await guess_in(host, fake, 5)
    fake.push(call("end_game"), Reply("好的，不玩啦。"))
    replies = await ask(host, "message", "不玩了，告诉我答案吧")
    result = tool_results(fake.requests[-1])[0]
    assert result["answer"] == TARGET
    assert result["must_say"] == ["我想的数是十三。"]
    assert replies[-1].text.startswith("好的，不玩啦。")
    assert "我想的数是十三。" in replies[-1].text
    assert replies[-1].session == "ended"
    assert not host.has_session("c")


async def test_start_game_starts_a_new_round_with_all_tries(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, fake, 5)
    await guess_in(host, fake, 18)
    fake.push(call("start_game"), Reply("好，再来一局。"))
    replies = await ask(host, "message", "再来一局")
    result = tool_results(fake.requests[-1])[0]
    assert result["outcome"] == "new_round"
    assert OPENING in replies[-1].text
    assert result["must_say"][0] == "刚才我想的数是十三。"  # the old number (TARGET), first
    assert replies[-1].text.index("十三") < replies[-1].text.index(OPENING)
    state = state_of(fake.requests[-1])
    assert state["剩余机会"] == 5
    assert state["猜过的数"] == []
    assert state["已知范围"] == "1到20"
    assert state["第几局"] == 2
    won, _ = await guess_in(host, fake, NEXT)  # the new number
    assert won["outcome"] == "win"
    assert won["tries"] == 1


# --------------------------------------------------------------------------- chit-chat


async def test_chit_chat_judges_nothing_and_changes_nothing(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, fake, 5)
    fake.push(Reply("我最喜欢的颜色是蓝色。我们接着猜吧。"))
    replies = await ask(host, "message", "你喜欢什么颜色")
    assert tool_results(fake.requests[-1]) == []
    assert directives(replies) == []
    assert replies[-1].text == "我最喜欢的颜色是蓝色。我们接着猜吧。"
    fake.push(Reply("好的。"))
    await ask(host, "message", "嗯")
    assert state_of(fake.requests[-1]) == state_of(fake.requests[-3])


# --------------------------------------------------------------------------- end


async def test_end_while_the_model_hangs_interrupts_it_and_reveals_the_number(hosts, fake) -> None:
    host = await started(hosts, fake)
    stuck, end = await end_while_the_model_hangs(host, fake, "我猜八")
    assert [r.text for r in stuck] == [INTERRUPTED]
    result = user_events(fake.requests[-1])[-1]["result"]
    assert result["answer"] == TARGET
    assert result["must_say"] == ["我想的数是十三。"]
    assert end[-1].text == "再见。我想的数是十三。"
    assert end[-1].session == "ended"
    assert not host.has_session("c")


async def test_end_sums_up_rounds_and_wins(hosts, fake) -> None:
    host = await started(hosts, fake)
    await guess_in(host, fake, TARGET)
    fake.push(call("start_game"), Reply("再来一局。"))
    await ask(host, "message", "再来一局")
    await guess_in(host, fake, 3)
    fake.push(Reply("今天就到这里。"))
    end = await ask(host, "end", "结束游戏")
    assert user_events(fake.requests[-1])[-1]["result"] == {
        "rounds": 2,
        "wins": 1,
        "message": "你一共玩了两局，猜中了一局。",
        "answer": NEXT,
        "must_say": ["我想的数是七。"],
    }
    assert end[-1].text == "今天就到这里。我想的数是七。"
    assert end[-1].session == "ended"


# --------------------------------------------------------------------------- guarantees


async def test_every_directive_is_valid_for_the_declared_capabilities(hosts, fake, game) -> None:
    host = await started(hosts, fake)
    replies: list[GameReply] = []
    for reply, text in [
        (guess(5), "五"),
        (call("get_hint"), "提示"),
        (guess(25), "二十五"),
        (guess(TARGET), "十三"),
        (call("start_game"), "再来一局"),
        *[(guess(n), str(n)) for n in (1, 2, 3, 4, 5)],
        (call("get_hint"), "提示"),
        (call("end_game"), "不玩了"),
    ]:
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
    for reply, text in [
        (guess(5), "我猜五"),
        (call("get_hint"), "给个提示"),
        (call("get_hint"), "再给个提示"),
        (None, "你几岁了"),
        (guess(25), "二十五"),
        (guess(5), "五"),
        (guess(18), "十八"),
        (call("get_hint"), "还有提示吗"),
    ]:
        fake.push(*([reply] if reply else []), Reply("好的。"))
        said += await ask(host, "message", text)
    assert not leaks(fake.all_text())
    assert not leaks(texts(said))
    for request in fake.requests:
        assert "answer" not in json.dumps(tool_results(request))
        state = state_of(request)
        assert TARGET not in state["猜过的数"]
        low, high = (int(n) for n in state["已知范围"].split("到"))
        assert low < high
    fake.push(Reply("再见。"))
    end = await ask(host, "end", "结束游戏")
    assert "十三" in end[-1].text


async def test_an_offline_session_plays_start_message_end(hosts, game) -> None:
    host = hosts.make()  # no model configured: the offline model
    start = await ask(host, "start", "玩猜数字")
    assert OPENING in start[-1].text
    guessed = await ask(host, "message", "我猜十五")
    assert guessed[-1].text == "比十五还小一些，你还有四次机会。"
    end = await ask(host, "end", "结束游戏")
    assert end[-1].text.startswith("你一共玩了一局")
    assert end[-1].text.endswith("我想的数是十三。")
    assert end[-1].session == "ended"
    assert not host.has_session("c")
    assert_valid_directives(start + guessed + end, game)


async def test_one_utterance_is_one_guess(hosts, fake) -> None:
    """Regression (review): the model called submit_guess three times for "我猜七"."""
    host = await started(hosts, fake)
    fake.push(
        Reply(tool_calls=[("submit_guess", {"number": n}) for n in (7, 8, 9)]), Reply("嗯。")
    )
    await ask(host, "message", "我猜七")
    results = tool_results(fake.requests[-1])
    assert [r["outcome"] for r in results] == ["higher", "already_judged", "already_judged"]
    assert state_of(fake.requests[-1])["猜过的数"] == [7]
