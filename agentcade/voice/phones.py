"""The neural voice's text front end: Chinese text -> the Baker phone ids its model reads.

Pure functions (no I/O, no trio): numbers are spelled out in Chinese, the text is cut into
clauses at punctuation (each clause is synthesised on its own and followed by a pause whose
length follows the punctuation), and each clause becomes pinyin with tones (pypinyin, with
its phrase dictionary and tone sandhi, and our own table of polyphones it reads wrong in
games: 猜中 zhong4) and then Baker phones: an initial (``^`` where there is none) and a final
with its tone, ``#0`` between syllables, ``sil`` at both ends, ``eos`` last.

The Baker phone set (TensorFlowTTS's ``baker_mapper.json``) writes finals in their full
form: ``zhi`` is ``zh iii``, ``zi`` is ``z ii``, ``you`` is ``^ iou``, ``jun`` is ``j vn``,
``gui`` is ``g uei``. :func:`split_syllable` derives that from the spelling, so any syllable
pypinyin writes has phones (a test checks every one against the mapper).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pypinyin import Style, lazy_pinyin

from agentcade.core.judge import spell_number

__all__ = [
    "POLYPHONES",
    "Clause",
    "clauses",
    "first_clause",
    "normalize",
    "phones",
    "split_syllable",
    "to_ids",
]

_INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h",
             "j", "q", "x", "r", "z", "c", "s")

# Zero-initial spellings (y-, w-) and their full finals.
_ZERO = {
    "yi": "i", "ya": "ia", "yo": "iou", "ye": "ie", "yao": "iao", "you": "iou", "yan": "ian",
    "yin": "in", "yang": "iang", "ying": "ing", "yong": "iong", "yu": "v", "yue": "ve",
    "yuan": "van", "yun": "vn", "wu": "u", "wa": "ua", "wo": "uo", "wai": "uai", "wei": "uei",
    "wan": "uan", "wen": "uen", "wang": "uang", "weng": "ueng", "wong": "ueng", "n": "en", "ng": "en",
    "m": "en", "hm": "en",
}

POLYPHONES: Mapping[str, tuple[str, ...]] = {
    # Words pypinyin reads wrong where the games use them (its reading in the comment).
    "猜中": ("cai1", "zhong4"),  # zhong1
    "中了": ("zhong4", "le5"),  # zhong1
    "没猜中": ("mei2", "cai1", "zhong4"),
    "答对了": ("da2", "dui4", "le5"),
    "画好了": ("hua4", "hao3", "le5"),
    "好玩": ("hao3", "wan2"),
    "还有": ("hai2", "you3"),  # huan2 after some words
    "还差": ("hai2", "cha4"),
    "差一点": ("cha4", "yi4", "dian3"),
    "得分": ("de2", "fen1"),
    "一下": ("yi2", "xia4"),
}
"""Phrases read by this table instead of pypinyin, longest first wins."""

_PAUSES = {"，": 0.18, "、": 0.12, "；": 0.25, "：": 0.18, "。": 0.3, "！": 0.3, "？": 0.3,
           "…": 0.3, "—": 0.18, ",": 0.18, ";": 0.25, ":": 0.18, ".": 0.3, "!": 0.3, "?": 0.3}
_CLAUSE_END = re.compile(r"([，、；：。！？…—,;:.!?]+)")
_INNER_MARK = re.compile(r"[，、；：—]+|(?<!\d)[,;:]+(?!\d)")
"""Clause marks inside a sentence (a sentence's end is the sentence splitter's)."""
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MEASURE = "个只条次位本张把口块岁人天笔题轮局分"
_HAN = re.compile(r"[\u4e00-\u9fff]")
_POLY = re.compile("|".join(sorted(map(re.escape, POLYPHONES), key=len, reverse=True)))


@dataclass(frozen=True)
class Clause:
    """A stretch of speech between punctuation, and the silence after it."""

    text: str
    pause: float


def _spell(match: re.Match[str]) -> str:
    digits = match.group()
    if "." in digits:
        whole, fraction = digits.split(".")
        return spell_number(int(whole)) + "点" + "".join(spell_number(int(d)) for d in fraction)
    if (len(digits) > 1 and digits.startswith("0")) or len(digits) > 8:
        return "".join(spell_number(int(d)) for d in digits)  # a code or a phone number
    return spell_number(int(digits))


def normalize(text: str) -> str:
    """Numbers spelled in Chinese (``2个`` -> ``两个``, ``20`` -> ``二十``, ``3.5`` -> ``三点五``)."""
    def spell(match: re.Match[str]) -> str:
        spelled = _spell(match)
        after = text[match.end():match.end() + 1]
        if spelled == "二" and after and after in _MEASURE:
            return "两"
        return spelled
    return _NUMBER.sub(spell, text)


def clauses(text: str) -> list[Clause]:
    """``text`` cut at punctuation into clauses that hold Chinese, each with its pause."""
    parts = _CLAUSE_END.split(normalize(text))
    found: list[Clause] = []
    for body, mark in zip(parts[::2], [*parts[1::2], ""], strict=True):
        pause = max((_PAUSES.get(ch, 0.0) for ch in mark), default=0.0)
        if _HAN.search(body):
            found.append(Clause(body, pause))
        elif found and pause:  # punctuation after a non-Chinese stretch still pauses
            found[-1] = Clause(found[-1].text, max(found[-1].pause, pause))
    return found


def first_clause(text: str) -> tuple[str, str] | None:
    """``text`` cut after its first clause's punctuation inside the sentence (a comma, a
    colon...): (that clause with its mark, the rest), or None when either would hold no
    Chinese (nothing to say first)."""
    for mark in _INNER_MARK.finditer(text):
        head, rest = text[:mark.end()], text[mark.end():]
        if _HAN.search(head):
            return (head, rest) if _HAN.search(rest) else None
    return None


def _pinyin(text: str) -> list[str]:
    """Tone-numbered syllables of the Chinese characters in ``text`` (others dropped)."""
    out: list[str] = []
    start = 0
    for match in _POLY.finditer(text):
        out += _plain_pinyin(text[start:match.start()])
        out += POLYPHONES[match.group()]
        start = match.end()
    out += _plain_pinyin(text[start:])
    return out


def _plain_pinyin(text: str) -> list[str]:
    if not text:
        return []
    syllables = lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True,
                            tone_sandhi=True, errors="ignore")
    return [s for s in syllables if s and s[-1].isdigit()]


def split_syllable(syllable: str) -> tuple[str, str]:
    """A toneless pinyin syllable (``v`` for ü) as a Baker initial and final.

    Raises:
        ValueError: not a syllable.
    """
    s = syllable.replace("ü", "v")
    if s in _ZERO:
        return "^", _ZERO[s]
    initial = next((i for i in _INITIALS if s.startswith(i) and len(s) > len(i)), "")
    final = s[len(initial):]
    if not initial:
        if final[:1] in "aoe":
            return "^", final
        raise ValueError(f"not a pinyin syllable: {syllable!r}")
    if final == "i" and initial in ("zh", "ch", "sh", "r"):
        final = "iii"
    elif final == "i" and initial in ("z", "c", "s"):
        final = "ii"
    elif initial in ("j", "q", "x") and final.startswith("u"):
        final = "v" + final[1:]
    final = {"iu": "iou", "ui": "uei", "un": "uen", "ue": "ve"}.get(final, final)
    return initial, final


def phones(text: str) -> list[str]:
    """One clause as Baker phones (``sil c ai1 #0 sh u4 #0 z ii4 sil``); empty when it holds
    no syllable."""
    out = ["sil"]
    for syllable in _pinyin(text):
        tone = syllable[-1] if syllable[-1] in "12345" else "5"
        toneless = syllable.rstrip("012345")
        if toneless.endswith("r") and toneless not in ("er",) and len(toneless) > 1:
            try:  # 儿化: 玩儿 written as one syllable
                initial, final = split_syllable(toneless[:-1])
                out += [initial, final + tone, "er5", "#0"]
                continue
            except ValueError:
                pass
        try:
            initial, final = split_syllable(toneless)
        except ValueError:
            continue
        out += [initial, final + tone, "#0"]
    if len(out) == 1:
        return []
    out[-1] = "sil"
    return out


def to_ids(phone_list: list[str], symbol_to_id: Mapping[str, int]) -> list[int]:
    """Phone ids with ``eos`` last; a phone the mapper lacks is skipped (never raised)."""
    ids = [symbol_to_id[p] for p in phone_list if p in symbol_to_id]
    return [*ids, symbol_to_id["eos"]]
