"""The rule table of ``check`` and the records it fills: ``Finding``, ``CheckResult``.

``RULES`` lists every rule ID ``check`` can report with its level; the guide's "合规检查"
table is the contract. Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from agentcade.a2a.card import CardInfo
from agentcade.core.protocol import DEFAULT_START
from agentcade.core.skill import RULES as SKILL_RULES, Skill

__all__ = [
    "DEFAULT_SAY",
    "DEFAULT_START",
    "DEFAULT_TIMEOUT",
    "FIRST_REPLY_SLOW",
    "RULES",
    "CheckResult",
    "Finding",
    "Level",
    "Status",
]

Level = Literal["fail", "warn"]
Status = Literal["pass", "fail", "warn", "skip"]

DEFAULT_SAY = "我猜是水"
DEFAULT_TIMEOUT = 60.0
FIRST_REPLY_SLOW = 8.0
"""Seconds: a game that says nothing for longer should ``turn.say("稍等")`` first."""

_OWN_RULES: dict[str, tuple[Level, str]] = {
    # rule: (level, what passing means — the ✓ line)
    "GAME-LOAD": ("fail", "the game folder loads"),
    "TOOLS-DEFINITION": ("fail", "every @tool declaration is valid"),
    "SKILL-TOOL-MISSING": ("fail", 'every "调用 X" in SKILL.md names an existing tool'),
    "TOOLS-UNMENTIONED": ("warn", "every tool is mentioned in SKILL.md"),
    "SETTINGS-UNDECLARED": ("warn", "every setting config.py reads is listed in settings.yaml"),
    "TOOLS-BLOCKING": ("warn", "no tool or hook calls something that blocks (time.sleep, requests)"),
    "SETTINGS-ENV-EXAMPLE": ("warn", ".env.example lists what settings.yaml says"),
    "SCENARIOS-FILE": ("fail", "scenarios.yaml, when there is one, loads"),
    "CATALOG-ID-BUILTIN": ("fail", "the id is not a built-in game's"),
    "CATALOG-ID-DUPLICATE": ("fail", "the id is not another catalog game's"),
    "CARD-READABLE": ("fail", "the agent card is readable"),
    "CARD-STREAMING": ("fail", "the card declares capabilities.streaming"),
    "CARD-PROTOCOL": ("fail", "the card lists a protocol version agentcade speaks"),
    "CARD-URL-MISMATCH": ("warn", "the card's JSON-RPC URL matches the address"),
    "URL-HTTPS": ("warn", "the address uses https (or is local)"),
    "PROTOCOL-SUNSET": ("warn", "the negotiated protocol version has no sunset date"),
    "SESSION-START-REPLY": ("fail", "start got replies ending with speakable text"),
    "SESSION-MESSAGE-REPLY": ("fail", "message got replies ending with speakable text"),
    "SESSION-END-REPLY": ("fail", "end got replies ending with speakable text"),
    "REPLY-FORMAT": ("fail", "every reply is a valid GameReply"),
    "REPLY-PROTOCOL": ("fail", "every reply speaks the negotiated protocol version"),
    "REPLY-UNKNOWN-FIELD": ("warn", "replies carry only protocol fields"),
    "REPLY-ENDED-EARLY": ("fail", "only final replies say session ended"),
    "REPLY-FIRST-SLOW": ("warn", f"the first reply came within {FIRST_REPLY_SLOW:g} s"),
    "SESSION-END-ENDED": ("fail", "after end the session is ended"),
    "SESSION-MISSING-ENDED": ("fail", "a message to an unknown session answers ended"),
    "SESSION-TIMEOUT": ("fail", "every request got its final reply in time"),
    "DIRECTIVE-INVALID": ("fail", "every directive is an open SDK call with valid arguments"),
    "DIRECTIVE-UNDECLARED": ("fail", "every directive's capability is declared"),
    "SAFETY-PERSONAL-DATA": ("fail", "no reply asks the child for personal data"),
    "SAFETY-UNSAFE-ACT": ("fail", "no reply tells the child to do something unsafe"),
    "SAFETY-IMPERSONATION": ("warn", "no reply claims to be a real person, the system or another assistant"),
}

RULES: MappingProxyType[str, Level] = MappingProxyType(
    {**dict(SKILL_RULES), **{rule: level for rule, (level, _) in _OWN_RULES.items()}}
)
"""Every rule ID ``check`` can report -> its level. Stable: CI and docs refer to them."""

_GAME_RULES = (
    "GAME-LOAD", "TOOLS-DEFINITION", "SKILL-TOOL-MISSING", "TOOLS-UNMENTIONED", "SETTINGS-UNDECLARED",
    "TOOLS-BLOCKING",
)
_SESSION_RULES = tuple(
    r for r in _OWN_RULES if r.startswith(("SESSION-", "REPLY-", "DIRECTIVE-", "SAFETY-"))
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule's outcome: ``pass``, ``skip`` (not exercised: nothing the check did reached
    it, or it could not run), or a ``fail``/``warn`` problem."""

    rule: str
    level: Level
    status: Status
    message: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class CheckResult:
    """Everything one ``check`` run found about ``target``."""

    target: str
    findings: list[Finding] = field(default_factory=list)
    card: CardInfo | None = None
    url: str | None = None
    """The address checked (the served address for a folder)."""
    skill: Skill | None = None
    offline: bool = False
    """The folder's game ran on the offline model (no model configured)."""

    @property
    def passed(self) -> bool:
        return not any(f.status == "fail" for f in self.findings)

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "warn": 0, "skip": 0}
        for f in self.findings:
            out[f.status] += 1
        return out

    def statuses(self, rule: str) -> list[Status]:
        return [f.status for f in self.findings if f.rule == rule]

    def problems(self) -> list[str]:
        """Rule IDs that failed or warned, sorted (for tests and summaries)."""
        return sorted({f.rule for f in self.findings if f.status in ("fail", "warn")})

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "passed": self.passed,
            "findings": [f.to_json() for f in self.findings],
        }

    # recording

    def problem(self, rule: str, message: str, fix: str) -> None:
        level = RULES[rule]
        if any(f.rule == rule and f.message == message for f in self.findings):
            return  # the same problem from another request of the same kind
        self.findings = [f for f in self.findings if f.rule != rule or f.status in ("fail", "warn")]
        self.findings.append(Finding(rule, level, level, message, fix))

    def ok(self, rule: str, message: str | None = None) -> None:
        """Record a pass unless the rule already has a problem."""
        if any(f.rule == rule for f in self.findings):
            return
        self.findings.append(Finding(rule, RULES[rule], "pass", message or _OWN_RULES[rule][1]))

    def skip(self, rule: str, why: str) -> None:
        if any(f.rule == rule for f in self.findings):
            return
        self.findings.append(Finding(rule, RULES[rule], "skip", why))

