"""``SkillAgent``, the base class of every game agent.

The guide's import path (``agentcade.skill_agent``); the code lives in ``agentcade.game.skill_agent``.
"""

from agentcade.game.skill_agent import (
    COMMON_PROMPT as COMMON_PROMPT,
    SkillAgent as SkillAgent,
    claims_progress as claims_progress,
    has_verdict as has_verdict,
)

__all__ = [
    "COMMON_PROMPT",
    "SkillAgent",
    "claims_progress",
    "has_verdict",
]
