"""``Turn``: what a request says, including the ``must_say`` guarantee at the 500 limit."""

from __future__ import annotations

from agentcade.core.protocol import MAX_TEXT, GameReply
from agentcade.game.turn import Turn


async def _nowhere(reply: GameReply, final: bool) -> None:
    raise AssertionError("no intermediate replies here")


def test_must_say_fallback_is_appended_once_when_missing() -> None:
    turn = Turn("message", "x", _nowhere)
    turn.must_say("雪", fallback="谜底是雪。")
    turn.must_say("雪", fallback="谜底是雪。")
    assert turn.final_reply("猜得不错").text == "猜得不错。谜底是雪。"


def test_must_say_survives_a_long_answer_that_must_be_clipped() -> None:
    """Regression (review): the required text sat at the end of a 498-character answer;
    clipping the answer to make room for another fallback cut it off unnoticed."""
    turn = Turn("message", "x", _nowhere)
    question = "什么东西越洗越脏？"
    turn.must_say("牙刷", fallback="上一个的谜底是牙刷。")
    turn.must_say(question)
    text = "好" * (498 - len(question)) + question
    final = turn.final_reply(text).text
    assert len(final) <= MAX_TEXT
    assert "上一个的谜底是牙刷。" in final
    assert question in final


def test_the_final_reply_never_exceeds_500_characters() -> None:
    turn = Turn("message", "x", _nowhere)
    turn.must_say("甲" * 300)
    turn.must_say("乙" * 300)
    final = turn.final_reply("丙" * 400).text
    assert 0 < len(final) <= MAX_TEXT


def test_end_turns_always_end_the_session() -> None:
    assert Turn("end", "", _nowhere).final_reply("再见").session == "ended"
    turn = Turn("message", "", _nowhere)
    turn.end_session()
    assert turn.final_reply("五题都答完了").session == "ended"
    assert Turn("message", "", _nowhere).final_reply("好").session == "active"


def test_lines_the_game_may_say_next_ride_on_the_final_reply_unless_the_session_ends() -> None:
    turn = Turn("message", "五", _nowhere)
    turn.may_say_next(["比六还大一些，你还有三次机会。", "  "])
    turn.may_say_next(["猜中了！就是六，你用了两次。"])
    assert turn.final_reply("比五还大一些。").ahead == [
        "比六还大一些，你还有三次机会。", "猜中了！就是六，你用了两次。"]
    ending = Turn("message", "五", _nowhere)
    ending.may_say_next(["比六还大一些。"])
    ending.end_session()
    assert ending.final_reply("好，不玩了。").ahead == []
