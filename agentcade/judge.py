"""Judging what a child said, tolerant of speech-recognition errors: ``is_match``, ``parse_number``, ``help_request``.

The guide's import path (``agentcade.judge``); the code lives in ``agentcade.core.judge``.
"""

from agentcade.core.judge import (
    fuzzy_syllable as fuzzy_syllable,
    help_request as help_request,
    is_match as is_match,
    normalize as normalize,
    parse_number as parse_number,
)

__all__ = [
    "fuzzy_syllable",
    "help_request",
    "is_match",
    "normalize",
    "parse_number",
]
