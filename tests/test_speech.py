"""Speech hygiene and sentence cutting (agentcade.core.speech), and asking for help (judge)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcade.core.judge import help_request
from agentcade.core.speech import SentenceSplitter, speakable, split_sentences
from agentcade.game.turn import Turn
from tests import labelled


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ('<tool_response>{"ok": true}</tool_response>好的，再猜一次。', "好的，再猜一次。"),
        ("<tools></tools>", ""),
        ("【猜数字】大了！你再猜一次", "大了！你再猜一次"),
        ('{"event": "message", "user_text": "是老鼠", "result": {}}不对哦。', "不对哦。"),
        ('<tool_call>\n{"name": "say", "arguments": {"text": "稍等', ""),
        ("我先 submit_guess(13) 一下", "我先 一下"),
        ("**太棒了**！", "太棒了！"),
        ("猜中了！就是十五。", "猜中了！就是十五。"),
    ],
    ids=[
        "tool-response",
        "tools",
        "speaker-tag",
        "envelope",
        "open-tool-call",
        "call",
        "markdown",
        "plain",
    ],
)
def test_speakable_removes_what_must_never_be_spoken(raw, spoken) -> None:
    assert speakable(raw) == spoken


def test_the_splitter_cuts_after_each_sentence_and_holds_markup_whole() -> None:
    splitter = SentenceSplitter()
    out: list[str] = []
    for delta in ["你好", "呀！我", '们开始{"a": "。', '"}吧。', "再来", "一次。", "最后"]:
        out += splitter.feed(delta)
    assert out == ["你好呀！", '我们开始{"a": "。"}吧。', "再来一次。"]
    assert splitter.rest() == "最后"


def test_the_splitter_waits_for_a_run_of_stops_to_end() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("真的吗？") == []  # "？！" may follow
    assert splitter.feed("！太好了") == ["真的吗？！"]


def test_a_whole_text_is_cut_by_the_streaming_rule() -> None:
    text = '你好呀！“对了！”我们开始{"a": "。"}吧。最后'
    assert split_sentences(text) == ["你好呀！", "“对了！”", '我们开始{"a": "。"}吧。', "最后"]
    assert split_sentences("  ") == []


@pytest.mark.parametrize(
    "said", ["不知道", "我不知道", "我不会", "嗯我不知道呀", "给我一个提示", "好难啊"]
)
def test_not_knowing_asks_for_a_hint(said) -> None:
    assert help_request(said) == "hint"


@pytest.mark.parametrize("said", ["猜不出来", "我猜不出来了", "我放弃", "告诉我答案吧"])
def test_not_managing_gives_up(said) -> None:
    assert help_request(said) == "give_up"


@pytest.mark.parametrize("said", ["是猫吗", "你知道吗", "不会吧", "我不会玩", "十五"])
def test_a_guess_or_a_question_is_no_help_request(said) -> None:
    assert help_request(said) is None


async def _ignore(reply, final) -> None:
    pass


async def test_a_required_text_spoken_at_once_is_not_repeated_by_the_final_reply() -> None:
    turn = Turn("message", "", _ignore)
    turn.must_say("十五", fallback="猜中了！就是十五。")
    turn.must_say("我想好了一个一到二十之间的数，你有五次机会。")
    assert await turn.speak_required() == [
        "猜中了！就是十五。",
        "我想好了一个一到二十之间的数，你有五次机会。",
    ]
    final = turn.final_reply(
        "太棒了，就是十五！好呀，我想好了一个一到二十之间的数，你有五次机会。加油！"
    )
    assert final.text == "好呀，加油！"


def test_model_words_keep_each_sentence_once_and_stop_at_the_limit() -> None:
    from agentcade.core.speech import MODEL_WORDS_LIMIT, model_words

    joke = "我问他：“你好吗？”他说：“挺好的。”"
    said = model_words(joke * 4 + "哈哈哈哈。" + "今天天气真好呀。" * 60)
    assert said == "我问他：“你好吗？”他说：“挺好的。”哈哈哈哈。今天天气真好呀。"
    long = "".join(f"第{i}句话说给你听呀。" for i in range(100))
    assert 0 < len(model_words(long)) <= MODEL_WORDS_LIMIT


_HELP_CASES = Path(__file__).parent / "data" / "help_cases.tsv"


@pytest.mark.parametrize(
    ("expected", "said", "what"),
    [tuple(row) for _, row in labelled.rows(_HELP_CASES)],
    ids=lambda v: str(v),
)
def test_a_line_is_the_help_request_it_was_labelled(expected: str, said: str, what: str) -> None:
    assert help_request(said) == (None if expected == "-" else expected), what


def test_the_help_set_has_hints_give_ups_and_other_lines() -> None:
    expected = [row[0] for _, row in labelled.rows(_HELP_CASES)]
    assert {"hint", "give_up", "-"} == set(expected)
    assert expected.count("-") >= 10
