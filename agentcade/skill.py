"""SKILL.md loading and validation: ``Skill.load(path)``, the game's declaration.

The guide's import path (``agentcade.skill``); the code lives in ``agentcade.core.skill``.
"""

from agentcade.core.skill import (
    DEFAULT_VERSION as DEFAULT_VERSION,
    KNOWN_FIELDS as KNOWN_FIELDS,
    MAX_SUMMARY as MAX_SUMMARY,
    RULES as RULES,
    Declaration as Declaration,
    Skill as Skill,
    SkillError as SkillError,
    SkillProblem as SkillProblem,
    check_skill as check_skill,
    is_game_id as is_game_id,
    is_semver as is_semver,
)

__all__ = [
    "DEFAULT_VERSION",
    "KNOWN_FIELDS",
    "MAX_SUMMARY",
    "RULES",
    "Declaration",
    "Skill",
    "SkillError",
    "SkillProblem",
    "check_skill",
    "is_game_id",
    "is_semver",
]
