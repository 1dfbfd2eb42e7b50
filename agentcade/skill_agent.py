"""``SkillAgent``, the base class of every game agent, and ``Turn``, what its hooks get.

The guide's import path (``agentcade.skill_agent``); the code lives in ``agentcade.game.skill_agent``.
"""

from agentcade.game.skill_agent import (
    COMMON_PROMPT as COMMON_PROMPT,
    SkillAgent as SkillAgent,
    Turn as Turn,
    claims_progress as claims_progress,
    has_verdict as has_verdict,
)

__all__ = [
    "COMMON_PROMPT",
    "SkillAgent",
    "Turn",
    "claims_progress",
    "has_verdict",
]
