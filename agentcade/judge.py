"""Judging what a child said, tolerant of speech-recognition errors: ``is_match``,
``parse_number``, ``help_request``, ``round_request`` (下一个 / 再来一局 / 再说一遍),
``asks_restart`` (重新想一个数吧: a start tool acts mid-round only then), ``small_talk`` (你叫什么名字: said to the host, never judged), ``rules_question``
(这个游戏怎么玩), ``asks_verdict`` (我猜对了吗), ``judge_guess``, and ``Deck``
(questions one at a time).

The guide's import path (``agentcade.judge``); the code lives in ``agentcade.core.judge``.
"""

from agentcade.core.judge import (
    Deck as Deck,
    RoundRequest as RoundRequest,
    Verdict as Verdict,
    asks_restart as asks_restart,
    asks_verdict as asks_verdict,
    fuzzy_syllable as fuzzy_syllable,
    help_request as help_request,
    is_match as is_match,
    judge_guess as judge_guess,
    looks_like_guess as looks_like_guess,
    normalize as normalize,
    parse_number as parse_number,
    round_request as round_request,
    rules_question as rules_question,
    small_talk as small_talk,
    spell_number as spell_number,
)

__all__ = [
    "Deck",
    "RoundRequest",
    "Verdict",
    "asks_restart",
    "asks_verdict",
    "fuzzy_syllable",
    "help_request",
    "is_match",
    "judge_guess",
    "looks_like_guess",
    "normalize",
    "parse_number",
    "round_request",
    "rules_question",
    "small_talk",
    "spell_number",
]
