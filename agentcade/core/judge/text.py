"""Normalisation: traditional → simplified, full-width → half-width, lowercase."""

from __future__ import annotations

import unicodedata

from agentcade.core.judge._traditional import TS_PAIRS

_T2S = {pair[0]: pair[1] for pair in TS_PAIRS.split() if len(pair) == 2 and pair[0] != pair[1]}
_T2S_TABLE = str.maketrans(_T2S)


def _prenormalize(text: str) -> str:
    """Simplified, half-width, lowercase; punctuation and spaces are kept (separators)."""
    return unicodedata.normalize("NFKC", text).translate(_T2S_TABLE).lower()


def _is_hanzi(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch == "〇"


def normalize(text: str) -> str:
    """Traditional → simplified, full-width → half-width, lowercase; drop punctuation/space."""
    return "".join(
        ch for ch in _prenormalize(text) if (ch.isascii() and ch.isalnum()) or _is_hanzi(ch)
    )
