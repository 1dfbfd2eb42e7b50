"""Content checks for the spoken game data: 海龟汤 puzzles and children's riddles.

These files are read aloud by the robot to a family with young children, so besides the
shape of the data the tests guard three things: the puzzle text does not give its answer
away, the text is plain speakable Chinese (no markdown, emoji or Latin letters), and no
word from a family-safety list appears anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pypinyin import Style, lazy_pinyin

ROOT = Path(__file__).resolve().parent.parent
PUZZLES_PATH = ROOT / "games" / "turtle_soup" / "puzzles.yaml"
RIDDLES_PATH = ROOT / "games" / "riddle" / "riddles.yaml"

MIN_PUZZLES = 32
MIN_RIDDLES = 40

TITLE_MAX = 12
SURFACE_MAX = 80
BOTTOM_MAX = 150
KEY_POINT_MAX = 20
PUZZLE_HINT_MAX = 40
QUESTION_MAX = 60
RIDDLE_HINT_MAX = 40
MAX_SENTENCES = 3

ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
SENTENCE_END_RE = re.compile(r"[。！？!?]+")

# Words that must not appear in any text a child hears. Single characters are chosen so
# that they have no common innocent use in this kind of content (刀 rules out 剪刀 too,
# which is a deliberate, cautious choice).
FORBIDDEN_WORDS = tuple(
    " ".join(
        (
            # death and injury
            "死 尸 葬 坟 棺 遗体 遗书 骨灰 血 自杀 上吊",
            # violence, weapons, crime
            "杀 凶 谋 毒 枪 刀 炸弹 爆炸 绑架 偷 抢 犯罪 罪犯 监狱 打架 殴打",
            # horror and the supernatural
            "鬼 恐怖 吓人 可怕 地狱 恶魔 妖怪 灵魂 僵",
            # romance and sexual content
            "色情 裸 恋爱 约会 亲吻 接吻 男朋友 女朋友 情人",
            # gambling, alcohol, tobacco
            "赌 彩票 下注 酒 香烟 抽烟 吸烟",
        )
    ).split()
)

# Spoken text must be plain: no Latin letters (TTS reads them letter by letter), no
# markdown punctuation, no emoji or pictographic symbols, no line breaks.
LATIN_RE = re.compile(r"[A-Za-z]")
MARKDOWN_RE = re.compile(r"[*#`_\[\]<>|~^\\{}]")
EMOJI_RE = re.compile(
    "[\U0001f000-\U0001faff\U00002600-\U000027bf\U00002b00-\U00002bff\U0000fe0f\U0000200d]"
)


def _load(path: Path, key: str) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert isinstance(data, dict), f"{path.name}: top level must be a mapping"
    items = data.get(key)
    assert isinstance(items, list), f"{path.name}: '{key}' must be a list"
    return items


PUZZLES = _load(PUZZLES_PATH, "puzzles")
RIDDLES = _load(RIDDLES_PATH, "riddles")


def _puzzle_id(p: object) -> str:
    return str(p.get("id")) if isinstance(p, dict) else repr(p)


def _riddle_id(r: object) -> str:
    # pytest escapes non-ASCII test ids, so name riddles by the pinyin of their answer.
    if isinstance(r, dict) and isinstance(r.get("answer"), str):
        return "_".join(lazy_pinyin(r["answer"], style=Style.TONE3))
    return repr(r)


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _str_list(value: object) -> bool:
    return isinstance(value, list) and all(_nonempty_str(v) for v in value)


def _sentences(text: str) -> int:
    return len([s for s in SENTENCE_END_RE.split(text) if s.strip()])


def _puzzle_texts(p: dict) -> list[str]:
    return [p["title"], p["surface"], p["bottom"], *p["key_points"], *p["hints"]]


def _riddle_texts(r: dict) -> list[str]:
    return [r["question"], r["answer"], *r["aliases"], r["hint"]]


# --------------------------------------------------------------------------- 海龟汤


def test_puzzle_count() -> None:
    assert len(PUZZLES) >= MIN_PUZZLES


def test_puzzle_ids_unique() -> None:
    ids = [_puzzle_id(p) for p in PUZZLES]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert not dupes, f"duplicate puzzle ids: {dupes}"


def test_puzzle_titles_and_surfaces_unique() -> None:
    titles = [p["title"] for p in PUZZLES]
    surfaces = [p["surface"] for p in PUZZLES]
    assert len(set(titles)) == len(titles), "duplicate puzzle titles"
    assert len(set(surfaces)) == len(surfaces), "duplicate puzzle surfaces"


@pytest.mark.parametrize("puzzle", PUZZLES, ids=_puzzle_id)
def test_puzzle_shape(puzzle: dict) -> None:
    assert isinstance(puzzle, dict)
    assert set(puzzle) == {"id", "title", "surface", "bottom", "key_points", "said_as", "hints"}
    assert isinstance(puzzle["id"], str)
    assert ID_RE.match(puzzle["id"]), puzzle["id"]
    for field in ("title", "surface", "bottom"):
        assert _nonempty_str(puzzle[field]), field
    assert _str_list(puzzle["key_points"])
    assert _str_list(puzzle["hints"])
    assert 2 <= len(puzzle["key_points"]) <= 4
    assert 2 <= len(puzzle["hints"]) <= 3
    # how a child says each key point (the referee's data, issue 54): one entry per point,
    # ideas apart by spaces, each idea's ways apart by |
    assert _str_list(puzzle["said_as"])
    assert len(puzzle["said_as"]) == len(puzzle["key_points"])
    for entry in puzzle["said_as"]:
        assert all(way for idea in entry.split() for way in idea.split("|")), entry


@pytest.mark.parametrize("puzzle", PUZZLES, ids=_puzzle_id)
def test_puzzle_lengths(puzzle: dict) -> None:
    assert len(puzzle["title"]) <= TITLE_MAX
    assert len(puzzle["surface"]) <= SURFACE_MAX, len(puzzle["surface"])
    assert len(puzzle["bottom"]) <= BOTTOM_MAX, len(puzzle["bottom"])
    assert 1 <= _sentences(puzzle["surface"]) <= MAX_SENTENCES
    assert 1 <= _sentences(puzzle["bottom"]) <= MAX_SENTENCES
    for point in puzzle["key_points"]:
        assert len(point) <= KEY_POINT_MAX, point
    for hint in puzzle["hints"]:
        assert len(hint) <= PUZZLE_HINT_MAX, hint


@pytest.mark.parametrize("puzzle", PUZZLES, ids=_puzzle_id)
def test_puzzle_does_not_give_itself_away(puzzle: dict) -> None:
    bottom = puzzle["bottom"]
    told = [puzzle["surface"], *puzzle["hints"]]
    for text in told:
        assert bottom not in text, text
        # A key point is what the player has to find out; saying one outright solves it.
        for point in puzzle["key_points"]:
            assert point not in text, f"{point!r} revealed in {text!r}"
    # The bottom has to add something to the surface.
    assert bottom != puzzle["surface"]
    assert len(bottom) > len(puzzle["key_points"][0])


# --------------------------------------------------------------------------- 谜语


def test_riddle_count() -> None:
    assert len(RIDDLES) >= MIN_RIDDLES


@pytest.mark.parametrize("riddle", RIDDLES, ids=_riddle_id)
def test_riddle_shape(riddle: dict) -> None:
    assert isinstance(riddle, dict)
    assert set(riddle) == {"question", "answer", "aliases", "hint"}
    for field in ("question", "answer", "hint"):
        assert _nonempty_str(riddle[field]), field
    assert isinstance(riddle["aliases"], list)
    assert _str_list(riddle["aliases"])
    assert riddle["answer"] not in riddle["aliases"]
    assert len(set(riddle["aliases"])) == len(riddle["aliases"])


@pytest.mark.parametrize("riddle", RIDDLES, ids=_riddle_id)
def test_riddle_lengths(riddle: dict) -> None:
    assert len(riddle["question"]) <= QUESTION_MAX, len(riddle["question"])
    assert len(riddle["hint"]) <= RIDDLE_HINT_MAX, len(riddle["hint"])
    assert len(riddle["answer"]) <= 6, riddle["answer"]


@pytest.mark.parametrize("riddle", RIDDLES, ids=_riddle_id)
def test_riddle_does_not_give_itself_away(riddle: dict) -> None:
    answers = [riddle["answer"], *riddle["aliases"]]
    for text in (riddle["question"], riddle["hint"]):
        for answer in answers:
            assert answer not in text, f"{answer!r} appears in {text!r}"
    # The hint may not even use a character of the answer (雨伞 -> no 雨, no 伞).
    leaked = sorted(set(riddle["answer"]) & set(riddle["hint"]))
    assert not leaked, f"hint uses answer characters {leaked}: {riddle['hint']!r}"


def test_riddle_answers_unique() -> None:
    seen: dict[str, str] = {}
    for riddle in RIDDLES:
        for name in [riddle["answer"], *riddle["aliases"]]:
            assert name not in seen, (
                f"{name!r} is accepted for both {seen[name]!r} and {riddle['answer']!r}"
            )
            seen[name] = riddle["answer"]


def test_riddle_questions_unique() -> None:
    questions = [r["question"] for r in RIDDLES]
    assert len(set(questions)) == len(questions)


# --------------------------------------------------------------------------- both


ALL_TEXTS = [(f"puzzle:{p['id']}", t) for p in PUZZLES for t in _puzzle_texts(p)] + [
    (f"riddle:{r['answer']}", t) for r in RIDDLES for t in _riddle_texts(r)
]


def test_no_forbidden_words() -> None:
    hits = [
        f"{word} in {where}: {text}"
        for where, text in ALL_TEXTS
        for word in FORBIDDEN_WORDS
        if word in text
    ]
    assert not hits, "\n".join(hits)


def test_spoken_style() -> None:
    bad = []
    for where, text in ALL_TEXTS:
        if text != text.strip() or "\n" in text:
            bad.append((where, "whitespace", text))
        for name, pattern in (("latin", LATIN_RE), ("markdown", MARKDOWN_RE), ("emoji", EMOJI_RE)):
            if pattern.search(text):
                bad.append((where, name, text))
    assert not bad, bad


def test_forbidden_check_catches_a_bad_text() -> None:
    """Guard the guard: the list really matches what it is meant to catch."""
    sample = "他在夜里看见了一个鬼"
    assert any(word in sample for word in FORBIDDEN_WORDS)
