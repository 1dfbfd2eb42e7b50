"""SKILL.md: a game's declaration (YAML frontmatter) and its host prompt (the body).

A game folder's ``SKILL.md`` starts with a ``---`` frontmatter block that declares the
game (the guide's SKILL.md field table); everything after the closing ``---`` is the
prompt the model hosts the game with. This module turns that text into a ``Skill`` and
checks it against the guide's rules.

Why the rules are collected rather than raised one at a time: ``check`` shows a game
author every problem in one run, each with a stable rule ID, a message that says what is
wrong and a fix that says what to write instead. ``Skill.load``/``Skill.parse`` use the
same checks and raise ``SkillError`` (carrying the whole list) when any of them fails, so
a built-in game with a broken SKILL.md never starts half-declared.

Two levels: ``fail`` breaks the guide's rules (the game must not load); ``warn`` is legal
but probably a mistake (an unknown field is usually a typo) or blocks catalog submission
(no ``author``). Warnings stay on the loaded ``Skill`` so ``check`` can print them later.
The rules and the checker that walks the file are :mod:`agentcade.core.skill_rules`; this
module is the declaration (``Declaration``, ``Skill``) and :func:`check_skill`.

``Skill`` also finds the tools the body mentions ("调用 X"), so ``check`` can verify that
every mentioned tool exists.

Pure: reads one file at most, imports no trio / h11.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agentcade.core.errors import SkillError
from agentcade.core.skill_rules import (
    DEFAULT_VERSION as DEFAULT_VERSION,
    KNOWN_FIELDS as KNOWN_FIELDS,
    MAX_SUMMARY as MAX_SUMMARY,
    RULES as RULES,
    SkillChecker,
    SkillProblem as SkillProblem,
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

# "调用 X", "调用 `X`", "调用X": tool names are Python identifiers (ASCII, so the Chinese
# text right after a name is not swallowed). Spaces may be ASCII or full-width, not newlines.
_TOOL_REF_RE = re.compile(r"调用[ \t\u3000]*`?([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Declaration:
    """What a game says about itself: the one record of it.

    ``Skill`` (from SKILL.md), ``CardInfo`` (from an agent card) and ``GameInfo`` (what
    the main agent knows of a game) are each a ``Declaration`` plus what their source adds.
    """

    id: str
    name: str
    description: str
    summary: str
    aliases: tuple[str, ...] = ()
    required_capabilities: tuple[str, ...] = ()
    version: str = DEFAULT_VERSION
    author: str | None = None
    homepage: str | None = None
    vocabulary: tuple[str, ...] = ()
    """Words and short lines a player says in this game (every answer of its deck, never
    the current one alone): the embedded recogniser is biased towards them while the game
    runs, so they are heard right. Optional; a remote game's are its card's examples."""

    def declared(self) -> dict[str, Any]:
        """The declaration's fields alone, e.g. to build another record from them."""
        return {f.name: getattr(self, f.name) for f in fields(Declaration)}


@dataclass(frozen=True)
class Skill(Declaration):
    """A game's declaration plus its host prompt, as read from SKILL.md.

    Build one with ``Skill.load`` (a file) or ``Skill.parse`` (text); both validate. The
    constructor does not, so other sources (an agent card) can build one directly.
    """

    body: str = ""
    """The markdown after the frontmatter, verbatim: the host prompt."""
    source: str = "SKILL.md"
    """Where it came from, for messages."""
    _warnings: tuple[SkillProblem, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        # Callers building a Skill by hand may pass lists; keep the instance hashable.
        for name in ("aliases", "required_capabilities", "vocabulary", "_warnings"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, expect_id: str | None = None) -> Skill:
        """Read and validate a SKILL.md file; raise ``SkillError`` if any rule fails.

        ``expect_id`` is the folder name for built-in games. It is not inferred from
        ``path``: only the game loader knows whether the folder name is meaningful.
        OSError (missing file, ...) propagates unchanged: it is not a content problem.
        """
        source = os.fspath(path)
        data = Path(path).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem = SkillProblem(
                "SKILL-ENCODING",
                "fail",
                "file",
                f"the file is not valid UTF-8 (byte {exc.start})",
                "save SKILL.md as UTF-8",
            )
            raise SkillError([problem], source) from None
        return cls.parse(text, source=source, expect_id=expect_id)

    @classmethod
    def parse(cls, text: str, *, source: str = "SKILL.md", expect_id: str | None = None) -> Skill:
        """Validate SKILL.md text; raise ``SkillError`` (with every problem) if any rule fails."""
        skill, problems = check_skill(text, source=source, expect_id=expect_id)
        if skill is None:
            raise SkillError(problems, source)
        return skill

    @property
    def tool_references(self) -> tuple[str, ...]:
        """Tool names the body mentions as "调用 X", in order of first mention.

        ``check`` fails a game whose body mentions a tool it does not have (usually a
        tool renamed in code but not in the prompt).
        """
        return tuple(dict.fromkeys(_TOOL_REF_RE.findall(self.body)))

    @property
    def warnings(self) -> tuple[SkillProblem, ...]:
        """The ``warn`` problems found when this Skill was loaded."""
        return self._warnings


# --- checking ---------------------------------------------------------------------------


def check_skill(
    text: str, *, source: str = "SKILL.md", expect_id: str | None = None
) -> tuple[Skill | None, list[SkillProblem]]:
    """Check SKILL.md text against every rule; never raises for content problems.

    Returns the Skill (None if any problem is a ``fail``) and every problem found, in
    the order of the guide's field table, so ``check`` can list them all in one run.
    """
    checker = SkillChecker()
    if text.startswith("\ufeff"):  # editors on Windows add a BOM; it is not content
        text = text[1:]
    split = checker.split(text)
    if split is None:
        return None, checker.problems
    front_text, body = split
    front = checker.frontmatter(front_text)
    values: dict[str, Any] = {}
    if front is not None:
        values = checker.fields(front, expect_id)
    checker.body(body)
    if front is None or any(p.level == "fail" for p in checker.problems):
        return None, checker.problems
    warnings = tuple(p for p in checker.problems if p.level == "warn")
    skill = Skill(**values, body=body, source=source, _warnings=warnings)
    return skill, checker.problems

