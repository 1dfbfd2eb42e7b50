"""The 你画我猜 animal library: enough animals, fair hints, drawings the robot accepts."""

from __future__ import annotations

import math

import pytest
from pypinyin import lazy_pinyin
from watcherobot.robot import _expression_custom_vector_path

from agentcade.core.vector import (
    CANVAS,
    MAX_POINTS,
    MAX_STROKE_POINTS,
    MAX_STROKES,
    MAX_WIDTH,
    decode_vector,
    encode_vector,
)
from agentcade.games.draw_guess.drawings import ANIMALS, CENTER, SAFE_RADIUS, Animal

REQUIRED = (
    "猫", "狗", "老虎", "狮子", "大象", "长颈鹿", "熊猫", "猴子", "兔子", "斑马",
    "企鹅", "海豚", "鲸鱼", "蝴蝶", "乌龟", "蜗牛", "孔雀", "袋鼠", "骆驼", "刺猬",
    "松鼠", "蛇", "鸭子", "鸡", "猪", "牛", "羊", "马", "老鼠", "青蛙",
    "螃蟹", "章鱼", "鳄鱼", "河马", "犀牛", "狐狸", "鹦鹉", "猫头鹰", "蜜蜂", "鱼",
)  # fmt: skip


def _ids(animal: Animal) -> str:
    return "".join(lazy_pinyin(animal.answer))


def test_at_least_forty_animals_with_unique_answers() -> None:
    answers = [a.answer for a in ANIMALS]
    assert len(ANIMALS) >= 40
    assert len(set(answers)) == len(answers)
    assert set(REQUIRED) <= set(answers)


def test_aliases_are_short_and_name_no_other_animal() -> None:
    answers = {a.answer for a in ANIMALS}
    for animal in ANIMALS:
        for alias in animal.aliases:
            assert 1 <= len(alias) <= 4, (animal.answer, alias)
            assert alias != animal.answer
            assert alias not in answers, (animal.answer, alias)


@pytest.mark.parametrize("animal", ANIMALS, ids=_ids)
def test_drawing_fits_the_device(animal: Animal) -> None:
    strokes = animal.strokes
    assert 1 <= len(strokes) <= MAX_STROKES
    assert sum(len(s.points) for s in strokes) <= MAX_POINTS
    for stroke in strokes:
        assert 1 <= len(stroke.points) <= MAX_STROKE_POINTS
        assert 1 <= stroke.width <= MAX_WIDTH
        for x, y in stroke.points:
            assert 0 <= x < CANVAS
            assert 0 <= y < CANVAS
    path = encode_vector(strokes)
    assert _expression_custom_vector_path(path) == path
    assert decode_vector(path) == list(strokes)


@pytest.mark.parametrize("animal", ANIMALS, ids=_ids)
def test_drawing_stays_inside_the_round_screen(animal: Animal) -> None:
    for stroke in animal.strokes:
        for x, y in stroke.points:
            reach = math.hypot(x - CENTER, y - CENTER) + stroke.width / 2
            assert reach <= SAFE_RADIUS, (animal.answer, (x, y), stroke.width)


@pytest.mark.parametrize("animal", ANIMALS, ids=_ids)
def test_three_hints_that_never_give_the_answer_away(animal: Animal) -> None:
    assert len(animal.hints) == 3
    assert len(set(animal.hints)) == 3
    forbidden = set(animal.answer).union(*animal.aliases)
    for hint in animal.hints:
        assert hint
        assert hint.strip() == hint
        leaked = forbidden & set(hint)
        assert not leaked, (animal.answer, hint, leaked)


def test_the_drawings_are_deterministic() -> None:
    import importlib

    import agentcade.games.draw_guess.drawings as module

    before = [a.strokes for a in module.ANIMALS]
    again = importlib.reload(module)
    assert [a.strokes for a in again.ANIMALS] == before
