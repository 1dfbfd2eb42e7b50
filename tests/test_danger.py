"""A child's dangerous statement is found in code (issue 40): labelled lines both ways.

The dangerous lines are what a child says of themselves; the near misses are the words a
game and a family use every day (火车, 火锅, a riddle's answer, a 海龟汤 story's question,
a parent's advice) and must stay quiet: the game hears them, not a safety lecture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcade.core import guard
from agentcade.core.danger import DANGER_ANSWERS, danger
from tests import labelled

DANGEROUS = {
    "我想把手指伸进插座里试试": "electricity",
    "我要拿钥匙捅插座": "electricity",
    "我去摸一下电线": "electricity",
    "等一下，我想把发夹插到插座里": "electricity",
    "我想玩火": "fire",
    "我要玩打火机": "fire",
    "我拿火柴点一下纸": "fire",
    "我想烧纸玩": "fire",
    "我想吃妈妈的药": "medicine",
    "药像糖一样，我想吃好多药": "medicine",
    "我偷偷吃了抽屉里的药": "medicine",
    "我想尝一口洗洁精": "chemical",
    "我要爬到窗台上去": "heights",
    "我想从阳台上跳下去": "heights",
    "我站到栏杆上了": "heights",
    "有个不认识的叔叔叫我跟他走": "stranger",
    "陌生人给我糖吃": "stranger",
    "我想跟那个陌生人走": "stranger",
    "有人敲门，我去开门": "door",
    "我想玩菜刀": "knife",
    "我要一个人去河边玩": "water",
    "我想一个人出门": "outside",
    "我想开煤气": "gas",
    "我把塑料袋套在头上": "plastic_bag",
}

SAFE = [
    "我喜欢坐火车",
    "我们晚上吃火锅",
    "火龙果好吃",
    "消防员会灭火",
    "是火吗",
    "我猜是火柴",
    "谜底是药",
    "是不是他吃了药",
    "他是不是被电死了",
    "那个男人是不是从窗户跳下去了",
    "他为什么要跟陌生人走",
    "妈妈说不能摸插座",
    "我不会玩火的",
    "千万不要把手指伸进插座",
    "我感冒了，妈妈让我吃药",
    "我不想吃药",
    "我在阳台上看星星",
    "我用剪刀剪纸",
    "我们家有插座",
    "插座是干什么用的",
    "我会自己穿衣服",
    "我画了一个小动物",
    "打火机是什么",
    "陌生人是什么意思",
    "我想吃蛋糕",
    "十",
    "下一个",
    "我猜是打火机",
    "火车的",
]


@pytest.mark.parametrize(("line", "topic"), DANGEROUS.items())
def test_a_dangerous_statement_is_found_with_its_topic(line: str, topic: str) -> None:
    found = danger(line)
    assert found is not None
    assert found.topic == topic


@pytest.mark.parametrize("line", SAFE)
def test_a_near_miss_is_not_danger(line: str) -> None:
    assert danger(line) is None


def test_every_topic_has_a_labelled_line() -> None:
    assert set(DANGEROUS.values()) == set(DANGER_ANSWERS)


@pytest.mark.parametrize("topic", sorted(DANGER_ANSWERS))
def test_every_answer_passes_the_speech_guard(topic: str) -> None:
    """The caring answer is advice, not a request: the host's own guard lets it through."""
    assert guard.screen(DANGER_ANSWERS[topic], host=True) is None


def test_no_line_of_the_labelled_game_sets_is_taken_for_danger() -> None:
    """The lines families say in the games (guesses, 海龟汤 questions, hints, chat, switches:
    every labelled set in tests/data) never get a safety answer instead of the game's."""
    data = Path(__file__).parent / "data"
    lines = {
        field
        for path in sorted(data.glob("*.tsv"))
        for _, fields in labelled.rows(path)
        for field in fields
        if any("\u4e00" <= ch <= "\u9fff" for ch in field)
    }
    assert len(lines) >= 1500
    assert [(line, found.topic) for line in sorted(lines) if (found := danger(line))] == []
