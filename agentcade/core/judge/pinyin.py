"""Readings of characters, folded over the confusions of regional speech and recognisers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

_INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h",
             "j", "q", "x", "r", "z", "c", "s")  # fmt: skip
_FUZZY_INITIAL = {"zh": "z", "ch": "c", "sh": "s", "n": "l", "r": "l", "f": "h"}
_FUZZY_FINAL = (("ang", "an"), ("eng", "en"), ("ing", "in"))


_GLIDE_FINALS = {"iou": "iu", "uei": "ui", "uen": "un", "ueng": "ong"}


def _split(syl: str) -> tuple[str, str]:
    """Initial and final of a toneless syllable; y/w spellings give their true final."""
    if syl[:1] in ("y", "w") and len(syl) > 1:
        head, rest = syl[0], syl[1:]
        if head == "y" and rest.startswith("u"):
            fin = "v" + rest[1:]  # yu, yue, yuan, yun
        elif head == "y":
            fin = rest if rest.startswith("i") else "i" + rest  # yi, ying; ya → ia
        else:
            fin = rest if rest.startswith("u") else "u" + rest  # wu; wo → uo, weng → ueng
        return "", _GLIDE_FINALS.get(fin, fin)
    for ini in _INITIALS:
        if syl.startswith(ini) and len(syl) > len(ini):
            fin = syl[len(ini) :]
            if ini in ("j", "q", "x") and fin.startswith("u"):
                fin = "v" + fin[1:]  # ju = jü
            return ini, fin
    return "", syl


def _fuzzy_parts(syl: str) -> tuple[str, str]:
    ini, fin = _split(syl)
    ini = _FUZZY_INITIAL.get(ini, ini)
    for long, short in _FUZZY_FINAL:
        if fin.endswith(long):
            fin = fin[: -len(long)] + short
            break
    return ini, fin


def fuzzy_syllable(syllable: str) -> str:
    """Fold a toneless pinyin syllable over common ASR/accent confusions.

    zh→z, ch→c, sh→s, n→l, r→l, f→h; ang→an, eng→en, ing→in (also iang, uang).
    ``fuzzy_syllable('jing') == fuzzy_syllable('jin')``; ``fuzzy_syllable('nan') == 'lan'``.
    """
    ini, fin = _fuzzy_parts(syllable.lower().rstrip("012345"))
    return ini + fin


@dataclass(frozen=True, slots=True)
class _Han:
    """The readings of one character, folded several ways for the comparisons."""

    char: str
    plain: frozenset[str]  # folded, toneless
    toned: frozenset[str]  # folded + tone digit
    initials: frozenset[str]
    finals: frozenset[str]
    primary: str  # folded toneless reading used for the ratio gate
    exact: frozenset[tuple[str, str, str]]  # (folded, raw toneless, tone)


def _make_han(char: str, readings: Sequence[str]) -> _Han:
    plain, toned, inits, fins, exact = set(), set(), set(), set(), set()
    for reading in readings:
        tone = reading[-1] if reading[-1:].isdigit() else "5"
        raw = reading.rstrip("012345")
        ini, fin = _fuzzy_parts(raw)
        plain.add(ini + fin)
        toned.add(ini + fin + tone)
        exact.add((ini + fin, raw, tone))
        if ini:
            inits.add(ini)
        fins.add(fin)
    primary = "".join(_fuzzy_parts(readings[0].rstrip("012345"))) if readings else char
    return _Han(
        char,
        frozenset(plain),
        frozenset(toned),
        frozenset(inits),
        frozenset(fins),
        primary,
        frozenset(exact),
    )


def _imperfection(heard: _Han, want: _Han) -> int:
    """For agreeing characters: 0 same sound, +1 a folded confusion, +1 another tone.

    The neutral tone (5) never counts as another tone.
    """
    best = 3
    for folded, raw, tone in heard.exact:
        for w_folded, w_raw, w_tone in want.exact:
            if folded == w_folded:
                cost = (raw != w_raw) + (tone != w_tone and "5" not in (tone, w_tone))
                best = min(best, cost)
    return best


@lru_cache(maxsize=8192)
def _heard_han(char: str) -> _Han:
    """An utterance character: every reading it may have."""
    from pypinyin import Style, pinyin  # at the first sound match (see matching._tokens_plain)

    readings = pinyin(char, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True)[0]
    readings = [r for r in readings if r and r[0].isalpha() and r.isascii()]
    return _make_han(char, readings)
