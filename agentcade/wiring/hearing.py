"""What the robot may hear now, and when a line can be answered before the silence window ends.

The embedded recogniser (:mod:`agentcade.voice.local_asr`) is biased with :func:`phrases`:
outside a game, the games' names (as 玩…) and aliases and the round words;
inside one, that game's declared ``vocabulary`` (SKILL.md; every answer of its deck, never
the current answer alone, so the bias reveals nothing and favours no answer), its name and
the round words. The listener ends an utterance early (:mod:`agentcade.voice.listener`) when
:func:`actionable` says code will act on the text at once: a start, end, switch or list
request the router decides; inside a game, a number, a hint, give-up or round request, or
one of the game's vocabulary words said alone or in a guess's frame (是不是彩虹).

Pure reads of the main agent's state; no I/O.
"""

from __future__ import annotations

from agentcade.core.judge import help_request, is_match, normalize, parse_number, round_request
from agentcade.core.lifecycle.current_game import CurrentState
from agentcade.main.agent import MainAgent
from agentcade.main.router import route

__all__ = ["ROUND_WORDS", "actionable", "phrases"]

ROUND_WORDS = ("给我一点提示", "我不知道", "猜不出来", "我不猜了", "下一个", "下一题", "再说一遍",
               "再来一局", "不玩了", "有什么游戏", "结束游戏")
"""What a family says in any game, or to pick one (what they mean is the judge's and the
router's to decide: ``help_request``, ``round_request``, ``is_end_request``)."""


def _playing(agent: MainAgent) -> str | None:
    current = agent.current
    if current is None or current.state is CurrentState.ENDING:
        return None
    return current.info.id


def phrases(agent: MainAgent) -> list[str]:
    """The phrases the recogniser is told the family may say now."""
    current = agent.current
    if _playing(agent) is not None and current is not None:
        info = current.info
        return [info.name, *info.vocabulary, *ROUND_WORDS]
    games = agent.registry.games
    return [*(f"玩{g.name}" for g in games), *(a for g in games for a in g.aliases),
            *ROUND_WORDS]


def actionable(agent: MainAgent, text: str) -> bool:
    """Whether code acts on ``text`` at once, so its utterance need not wait for more."""
    said = text.strip()
    bare = normalize(said)
    if not bare:
        return False
    playing = _playing(agent)
    decision = route(said, agent.registry.games, playing)
    if decision.kind in ("start", "end", "change", "list", "no_game"):
        return True
    current = agent.current
    if playing is None or current is None:
        return False
    if parse_number(said) is not None or help_request(said) or round_request(said):
        return True
    # A word of the game said alone or in a guess's frame (是X吗, 是不是X, 我猜是X): at most
    # three characters around it (is_match takes nothing else but padding).
    return any(is_match(said, word) for word in current.info.vocabulary
               if len(bare) <= len(normalize(word)) + 3)
