"""Judging what a child said, tolerant of speech-recognition errors: ``is_match``,
``parse_number``, ``help_request``, ``judge_guess``, and ``Deck`` (questions one at a time).

The guide's import path (``agentcade.judge``); the code lives in ``agentcade.core.judge``.
"""

from agentcade.core.judge import (
    Deck as Deck,
    Verdict as Verdict,
    fuzzy_syllable as fuzzy_syllable,
    help_request as help_request,
    is_match as is_match,
    judge_guess as judge_guess,
    looks_like_guess as looks_like_guess,
    normalize as normalize,
    parse_number as parse_number,
    spell_number as spell_number,
)

__all__ = [
    "Deck",
    "Verdict",
    "fuzzy_syllable",
    "help_request",
    "is_match",
    "judge_guess",
    "looks_like_guess",
    "normalize",
    "parse_number",
    "spell_number",
]
