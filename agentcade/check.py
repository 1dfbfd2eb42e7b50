"""Compliance check of a game: a folder (declaration, tools, then a served session) or a URL.

``run_check(target)`` returns a ``CheckResult``: one ``Finding`` per rule that ran (``pass``),
or one per problem found (``fail``/``warn``), each with a stable rule ID, a message and a
one-line fix. ``agentcade check`` prints it, writes the JSON / JUnit reports, and exits 1
when anything fails. The guide's "合规检查" table is the contract; ``RULES`` lists every ID.

For a folder: SKILL.md (``check_skill``; its own rule IDs), the game import
(``GAME-LOAD``), the tools (``TOOLS-*``, ``SKILL-TOOL-MISSING``), then the folder is served
on a free 127.0.0.1 port and checked like a URL. For a URL (or the served folder): the card,
then a real session — ``start``, one ``message``, ``end`` — plus a ``message`` to a context
that does not exist. Replies are read with ``A2AClient``; the raw JSON-RPC results it keeps
(``ReplyStream.results``) give the DataParts for ``REPLY-FORMAT`` / ``REPLY-UNKNOWN-FIELD``.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

import trio

from agentcade.a2a.card import CardInfo
from agentcade.a2a.client import A2AClient, GameRemoteError, negotiate_protocol
from agentcade.a2a.remote import endpoint_for
from agentcade.device.allowlist import KNOWN_CAPABILITIES
from agentcade.device.validate import DirectiveError, validate_directive
from agentcade.protocol import (
    SUPPORTED_VERSIONS,
    GameInput,
    GameReply,
    ProtocolError,
    parse_reply,
    sunset_of,
    unknown_fields,
)
from agentcade.settings import AgentSettings
from agentcade.skill import RULES as SKILL_RULES, Skill, check_skill

__all__ = [
    "DEFAULT_SAY",
    "DEFAULT_START",
    "DEFAULT_TIMEOUT",
    "FIRST_REPLY_SLOW",
    "RULES",
    "CheckResult",
    "Finding",
    "catalog_entry",
    "check_session",
    "format_text",
    "run_check",
    "to_junit",
]

Level = Literal["fail", "warn"]
Status = Literal["pass", "fail", "warn", "skip"]

DEFAULT_START = "我们来玩吧"
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
    "REPLY-UNKNOWN-FIELD": ("warn", "replies carry only protocol fields"),
    "REPLY-ENDED-EARLY": ("fail", "only final replies say session ended"),
    "REPLY-FIRST-SLOW": ("warn", f"the first reply came within {FIRST_REPLY_SLOW:g} s"),
    "SESSION-END-ENDED": ("fail", "after end the session is ended"),
    "SESSION-MISSING-ENDED": ("fail", "a message to an unknown session answers ended"),
    "SESSION-TIMEOUT": ("fail", "every request got its final reply in time"),
    "DIRECTIVE-INVALID": ("fail", "every directive is an open SDK call with valid arguments"),
    "DIRECTIVE-UNDECLARED": ("fail", "every directive's capability is declared"),
}

RULES: MappingProxyType[str, Level] = MappingProxyType(
    {**dict(SKILL_RULES), **{rule: level for rule, (level, _) in _OWN_RULES.items()}}
)
"""Every rule ID ``check`` can report -> its level. Stable: CI and docs refer to them."""

_GAME_RULES = ("GAME-LOAD", "TOOLS-DEFINITION", "SKILL-TOOL-MISSING", "TOOLS-UNMENTIONED", "SETTINGS-UNDECLARED")
_SESSION_RULES = tuple(r for r in _OWN_RULES if r.startswith(("SESSION-", "REPLY-", "DIRECTIVE-")))


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule's outcome: ``pass``, ``skip`` (could not run), or a ``fail``/``warn`` problem."""

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


# --- folders ------------------------------------------------------------------------------


async def run_check(
    target: str,
    *,
    say: str = DEFAULT_SAY,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - per request, not for the whole check
    client: A2AClient | None = None,
) -> CheckResult:
    """Check a game folder (or built-in id) or an http(s) URL; never raises for game problems."""
    from agentcade.game.open import is_url

    if is_url(target):
        result = CheckResult(target)
        await check_session(result, target, say=say, timeout=timeout, client=client)
        return result
    return await _check_folder(target, say=say, timeout=timeout, client=client)


async def _check_folder(
    target: str, *, say: str, timeout: float, client: A2AClient | None  # noqa: ASYNC109
) -> CheckResult:
    from agentcade.commands.serve import serve_game
    from agentcade.game.loader import GameLoadError, load_game, resolve_game
    from agentcade.game.open import open_local_game
    from agentcade.settings import SettingsError
    from agentcade.tools import BUILTIN_TOOL_NAMES, ToolDefinitionError, collect_tools

    result = CheckResult(target)
    try:
        path = resolve_game(target)
    except GameLoadError as exc:
        result.problem("GAME-LOAD", str(exc), "give the path of a game folder (with SKILL.md and agent.py)")
        return result
    builtin = path.parent.name == "games"  # the same rule as open_local_game

    skill_ok = _check_skill_file(result, path, expect_id=path.name if builtin else None)
    if not skill_ok:
        for rule in _GAME_RULES:
            result.skip(rule, "not checked: SKILL.md has errors")
        _skip_session(result, "not checked: the game did not load")
        return result
    try:
        game = load_game(path, builtin=builtin)
        tools = collect_tools(game.agent_cls)
    except (GameLoadError, ToolDefinitionError) as exc:
        cause = exc if isinstance(exc, ToolDefinitionError) else exc.__cause__
        if isinstance(cause, ToolDefinitionError):
            result.problem("TOOLS-DEFINITION", str(cause), "fix the @tool declaration as the message says")
            result.ok("GAME-LOAD", "the game folder loads apart from its tools")
        else:
            result.problem("GAME-LOAD", str(exc), "fix the file named in the message, then run check again")
            result.skip("TOOLS-DEFINITION", "not checked: the game did not load")
        for rule in _GAME_RULES[2:]:
            result.skip(rule, "not checked: the game did not load")
        _skip_session(result, "not checked: the game did not load")
        return result
    result.skill = game.skill
    result.ok("GAME-LOAD")
    result.ok("TOOLS-DEFINITION")
    _check_tool_mentions(result, game.skill, set(tools), BUILTIN_TOOL_NAMES)
    _check_settings_declared(result, path, game.agent_cls.config)

    try:
        async with open_local_game(str(path), builtin=builtin) as local:
            result.offline = bool(local.settings.llm.offline)
            async with trio.open_nursery() as nursery:
                _port, _card_url = await nursery.start(
                    lambda task_status: serve_game(
                        local, port=0, host="127.0.0.1", url=None, task_status=task_status
                    )
                )
                served = f"http://127.0.0.1:{_port}/"
                await check_session(
                    result, served, say=say, timeout=timeout, client=client, local=True
                )
                nursery.cancel_scope.cancel()
    except (SettingsError, GameLoadError, OSError) as exc:  # settings, start-up
        result.problem(
            "GAME-LOAD",
            f"the game could not be served: {type(exc).__name__}: {exc}",
            "fix settings.yaml / .env as the message says",
        )
        _skip_session(result, "not checked: the game could not be served")
    return result


def _check_skill_file(result: CheckResult, path: Path, *, expect_id: str | None) -> bool:
    """SKILL.md rules; returns whether it has no ``fail`` problem (so the game can load)."""
    skill_path = path / "SKILL.md"
    if not skill_path.is_file():
        return True  # load_game reports the missing file as GAME-LOAD
    data = skill_path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        result.problem(
            "SKILL-ENCODING", f"SKILL.md is not valid UTF-8 (byte {exc.start})", "save SKILL.md as UTF-8"
        )
        return False
    _skill, problems = check_skill(text, source=str(skill_path), expect_id=expect_id)
    for p in problems:
        result.problem(p.rule, f"SKILL.md: {p.field}: {p.message}", p.fix)
    for rule in SKILL_RULES:
        if rule == "SKILL-ID-FOLDER" and expect_id is None:
            continue
        result.ok(rule, "SKILL.md follows this rule")
    return not any(p.level == "fail" for p in problems)


def _check_tool_mentions(
    result: CheckResult, skill: Skill, tools: set[str], builtins: frozenset[str]
) -> None:
    for name in skill.tool_references:
        if name not in tools and name not in builtins:
            close = sorted(tools)
            result.problem(
                "SKILL-TOOL-MISSING",
                f'SKILL.md says "调用 {name}" but the game has no tool {name!r}'
                + (f" (tools: {', '.join(close)})" if close else ""),
                "rename the mention in SKILL.md to the tool's name, or add the tool",
            )
    result.ok("SKILL-TOOL-MISSING")
    for name in sorted(tools):
        if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", skill.body):
            result.problem(
                "TOOLS-UNMENTIONED",
                f"the tool {name!r} is never mentioned in SKILL.md",
                f'say when to use it in the flow, e.g. "调用 {name}", or remove the tool',
            )
    result.ok("TOOLS-UNMENTIONED")


def _check_settings_declared(result: CheckResult, folder: Path, config_cls: type[AgentSettings]) -> None:
    """A field of config.py that settings.yaml does not list is still read, but nobody
    learns it exists: no description, no default, nothing in a generated .env example."""
    from agentcade.settings import LLM_KEYS, SettingsError, load_settings_spec

    spec = folder / "settings.yaml"
    try:
        declared = {s.key for s in load_settings_spec(spec)} if spec.is_file() else set()
    except SettingsError:
        result.skip("SETTINGS-UNDECLARED", "not checked: settings.yaml does not load (see GAME-LOAD)")
        return
    missing = [k for k in config_cls.setting_keys() if k not in declared and k not in LLM_KEYS]
    if missing:
        result.problem(
            "SETTINGS-UNDECLARED",
            f"config.py reads {', '.join(missing)}, which settings.yaml does not list",
            "add an item (key, description, default) for each to settings.yaml",
        )
    else:
        result.ok("SETTINGS-UNDECLARED")


def _skip_session(result: CheckResult, why: str) -> None:
    for rule in ("CARD-READABLE", "CARD-STREAMING", "CARD-PROTOCOL", "CARD-URL-MISMATCH",
                 "URL-HTTPS", "PROTOCOL-SUNSET", *_SESSION_RULES):
        result.skip(rule, why)


# --- card and session ---------------------------------------------------------------------


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_port(url: str) -> tuple[str, int | None]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return (parts.hostname or "").lower(), parts.port or default


async def check_session(
    result: CheckResult,
    url: str,
    *,
    say: str = DEFAULT_SAY,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - per request
    client: A2AClient | None = None,
    local: bool = False,
) -> None:
    """The card and session checks against ``url``; findings go into ``result``.

    ``local``: ``url`` is a folder served by ``check`` itself (SKILL.md rules already ran,
    so the card's author/capabilities are not checked again).
    """
    result.url = url
    a2a = client or A2AClient(reply_timeout=timeout)
    parts = urlsplit(url)
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        result.problem(
            "URL-HTTPS",
            f"{url} uses http: what users say travels unencrypted",
            "serve the game over https (a reverse proxy with a certificate, or a hosted Space)",
        )
    result.ok("URL-HTTPS")

    try:
        _raw, card = await a2a.fetch_card(url)
    except GameRemoteError as exc:
        result.problem(
            "CARD-READABLE",
            f"cannot read the agent card: {exc}",
            "serve the card at /.well-known/agent-card.json (see the guide's 不用 Python 写)",
        )
        for rule in ("CARD-STREAMING", "CARD-PROTOCOL", "CARD-URL-MISMATCH", "PROTOCOL-SUNSET",
                     *_SESSION_RULES):
            result.skip(rule, "not checked: no usable agent card")
        return
    result.card = card
    result.ok("CARD-READABLE", f"the agent card is readable ({card.name}, {card.game_id} {card.version})")
    if not card.streaming:
        result.problem(
            "CARD-STREAMING",
            "the card does not declare capabilities.streaming = true",
            'add "capabilities": {"streaming": true} to the card and answer SendStreamingMessage with SSE',
        )
    result.ok("CARD-STREAMING")
    if _host_port(card.url) != _host_port(url):
        result.problem(
            "CARD-URL-MISMATCH",
            f"the card's JSON-RPC URL {card.url} is not on the checked address {url}",
            "set PUBLIC_URL (or --public-url) to the address users enter",
        )
    result.ok("CARD-URL-MISMATCH")
    if not local:
        _check_card_declaration(result, card)

    protocol = negotiate_protocol(card)
    if protocol is None:
        ours = ", ".join(v.name for v in SUPPORTED_VERSIONS)
        result.problem(
            "CARD-PROTOCOL",
            f"the card's skill lists {', '.join(card.protocols)}; agentcade speaks {ours}",
            f"tag the game's skill with {SUPPORTED_VERSIONS[0].name!r} and speak it",
        )
        result.skip("PROTOCOL-SUNSET", "not checked: no common protocol version")
        for rule in _SESSION_RULES:
            result.skip(rule, "not checked: no common protocol version")
        return
    result.ok("CARD-PROTOCOL", f"the card lists {protocol}")
    sunset = sunset_of(protocol)
    if sunset is not None:
        result.problem(
            "PROTOCOL-SUNSET",
            f"support for {protocol} ends on {sunset.isoformat()}",
            f"move the game to {SUPPORTED_VERSIONS[0].name} before then",
        )
    result.ok("PROTOCOL-SUNSET")

    session = _Session(result, a2a, endpoint_for(url, card), protocol, card, timeout)
    await session.run(say)


def _check_card_declaration(result: CheckResult, card: CardInfo) -> None:
    """The declaration warnings that a card can show (a URL has no SKILL.md to read)."""
    if not card.author:
        result.problem(
            "SKILL-AUTHOR-MISSING",
            "the card has no provider.organization (author)",
            'add "provider": {"organization": "<you>", "url": "<homepage>"}; the catalog needs it',
        )
    result.ok("SKILL-AUTHOR-MISSING", f"the card names its author ({card.author})")
    for cap in card.capabilities:
        if cap not in KNOWN_CAPABILITIES:
            result.problem(
                "SKILL-CAPABILITY-UNKNOWN",
                f"the card declares the unknown capability {cap!r}",
                f"remove capability:{cap}; known: {', '.join(sorted(KNOWN_CAPABILITIES))}",
            )
    result.ok("SKILL-CAPABILITY-UNKNOWN", "every declared capability is known")


@dataclass
class _Outcome:
    """One request's replies, how long the first took, and what went wrong."""

    kind: str
    replies: list[tuple[GameReply, bool]] = field(default_factory=list)
    first_after: float | None = None
    error: GameRemoteError | None = None
    timed_out: bool = False

    @property
    def final(self) -> GameReply | None:
        if self.replies and self.replies[-1][1]:
            return self.replies[-1][0]
        return None


_REQUEST_RULE = {
    "start": "SESSION-START-REPLY",
    "message": "SESSION-MESSAGE-REPLY",
    "end": "SESSION-END-REPLY",
}


class _Session:
    def __init__(
        self,
        result: CheckResult,
        client: A2AClient,
        endpoint: str,
        protocol: str,
        card: CardInfo,
        timeout: float,
    ) -> None:
        self.result = result
        self.client = client
        self.endpoint = endpoint
        self.protocol = protocol
        self.card = card
        self.timeout = timeout
        self.seen_unknown: set[str] = set()

    async def run(self, say: str) -> None:
        r = self.result
        context = f"agentcade-check-{uuid.uuid4().hex}"
        outcomes = [
            await self.request(context, GameInput(kind="start", text=DEFAULT_START)),
            await self.request(context, GameInput(kind="message", text=say)),
            await self.request(context, GameInput(kind="end", text="结束游戏")),
        ]
        missing = await self.request(
            f"agentcade-check-missing-{uuid.uuid4().hex}", GameInput(kind="message", text=say)
        )
        for outcome in outcomes:
            self.judge_request(outcome)
        end = outcomes[2]
        if end.final is not None and end.final.session != "ended":
            r.problem(
                "SESSION-END-ENDED",
                "the final reply to end says session 'active'",
                "answer end with session 'ended' (SkillAgent does it; otherwise set it yourself)",
            )
        elif end.final is None:
            r.skip("SESSION-END-ENDED", "not checked: end got no final reply")
        r.ok("SESSION-END-ENDED")
        if missing.final is None:
            r.problem(
                "SESSION-MISSING-ENDED",
                f"a message to a session that does not exist got no final reply ({_why(missing)})",
                "answer message/end for an unknown context_id with a final reply, session 'ended'",
            )
        elif missing.final.session != "ended":
            r.problem(
                "SESSION-MISSING-ENDED",
                "a message to a session that does not exist answered session 'active'",
                "answer message/end for an unknown context_id with session 'ended' "
                "(the main agent then knows the game is over)",
            )
        r.ok("SESSION-MISSING-ENDED")
        for outcome in [*outcomes, missing]:
            if outcome.first_after is not None and outcome.first_after > FIRST_REPLY_SLOW:
                r.problem(
                    "REPLY-FIRST-SLOW",
                    f"the first reply to {outcome.kind} came after {outcome.first_after:.1f} s",
                    'say something first (turn.say("稍等")) and show effects.Progress',
                )
        for rule in ("REPLY-FIRST-SLOW", "REPLY-FORMAT", "REPLY-UNKNOWN-FIELD",
                     "REPLY-ENDED-EARLY", "SESSION-TIMEOUT", "DIRECTIVE-INVALID",
                     "DIRECTIVE-UNDECLARED"):
            r.ok(rule)

    async def request(self, context: str, game_input: GameInput) -> _Outcome:
        outcome = _Outcome(game_input.kind)
        started = trio.current_time()
        results: list[object] = []
        with trio.move_on_after(self.timeout) as scope:
            try:
                async with self.client.stream(
                    self.endpoint, context, game_input, protocol=self.protocol
                ) as replies:
                    results = replies.results
                    async for reply, is_final in replies:
                        if outcome.first_after is None:
                            outcome.first_after = trio.current_time() - started
                        outcome.replies.append((reply, is_final))
                        self.check_directives(game_input.kind, reply)
            except GameRemoteError as exc:
                outcome.error = exc
        self.inspect_raw(game_input.kind, results)
        if scope.cancelled_caught or (outcome.error is not None and outcome.error.kind == "timeout"):
            outcome.timed_out = True
            self.result.problem(
                "SESSION-TIMEOUT",
                f"no final reply to {game_input.kind} within {self.timeout:g} s",
                "answer every request; say something within 8 s and finish well before the timeout",
            )
        elif (
            outcome.error is not None
            and outcome.error.kind == "protocol"
            and "before its final reply" not in outcome.error.message
            and not any(f.rule == "REPLY-FORMAT" for f in self.result.findings)
        ):
            self.result.problem(
                "REPLY-FORMAT",
                f"the reply to {game_input.kind} cannot be read: {outcome.error.message}",
                "send each reply as a DataPart GameReply (see the guide's 不用 Python 写)",
            )
        return outcome

    def inspect_raw(self, kind: str, results: list[object]) -> None:
        """REPLY-FORMAT and REPLY-UNKNOWN-FIELD from the raw DataParts."""
        for data in _reply_payloads(results):
            try:
                parse_reply(data)
            except ProtocolError as exc:
                self.result.problem(
                    "REPLY-FORMAT",
                    f"a reply to {kind} is not a valid GameReply: {exc}",
                    'send {"protocol": "agentcade/1", "text": ..., "directives": [...], '
                    '"session": "active|ended"} in a DataPart',
                )
                continue
            for name in unknown_fields(data):
                if name in self.seen_unknown:
                    continue
                self.seen_unknown.add(name)
                self.result.problem(
                    "REPLY-UNKNOWN-FIELD",
                    f"a reply to {kind} has the field {name!r}, which the protocol does not define",
                    "check the spelling (text, directives, session, protocol; call, args, kwargs)",
                )

    def check_directives(self, kind: str, reply: GameReply) -> None:
        for directive in reply.directives:
            try:
                validate_directive(directive, self.card.capabilities)
            except DirectiveError as exc:
                rule = "DIRECTIVE-UNDECLARED" if exc.kind == "undeclared" else "DIRECTIVE-INVALID"
                fix = exc.hint or "use only the open SDK calls with the SDK's arguments"
                self.result.problem(rule, f"a reply to {kind} has {directive.describe()}: {exc.reason}", fix)

    def judge_request(self, outcome: _Outcome) -> None:
        r = self.result
        rule = _REQUEST_RULE[outcome.kind]
        final = outcome.final
        if final is None:
            r.problem(rule, f"{outcome.kind} got no final reply ({_why(outcome)})",
                      "end every request with a final (completed) reply that has text")
        elif not final.text.strip():
            r.problem(rule, f"the final reply to {outcome.kind} has no text",
                      "give the final reply 1..500 characters of speakable text")
        else:
            r.ok(rule, f"{outcome.kind} got {len(outcome.replies)} replies; the last says “{_clip(final.text)}”")
        for reply, is_final in outcome.replies:
            if not is_final and reply.session == "ended":
                r.problem(
                    "REPLY-ENDED-EARLY",
                    f"an intermediate reply to {outcome.kind} says session 'ended'",
                    "say 'ended' only in the final (completed) reply",
                )


def _why(outcome: _Outcome) -> str:
    if outcome.timed_out:
        return "timed out"
    if outcome.error is not None:
        return str(outcome.error)
    if not outcome.replies:
        return "no reply at all"
    return "the stream ended without a final reply"


def _clip(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _messages(result: object) -> Iterator[dict[str, Any]]:
    """The agent messages in one JSON-RPC result (status updates, tasks, messages)."""
    if not isinstance(result, dict):
        return
    if isinstance(result.get("statusUpdate"), dict):
        status = result["statusUpdate"].get("status")
    elif isinstance(result.get("task"), dict) or "status" in result:
        task = result.get("task", result)
        status = task.get("status") if isinstance(task, dict) else None
    elif isinstance(result.get("message"), dict):
        yield result["message"]
        return
    else:
        return
    if isinstance(status, dict) and isinstance(status.get("message"), dict):
        yield status["message"]


def _reply_payloads(results: list[object]) -> Iterator[object]:
    for result in results:
        for message in _messages(result):
            parts = message.get("parts")
            if not isinstance(parts, list):
                continue
            for part in parts:
                if isinstance(part, dict) and "data" in part:
                    yield part["data"]
                    break


# --- output -------------------------------------------------------------------------------

_MARK = {"pass": "✓", "fail": "✗", "warn": "!", "skip": "-"}


def format_text(result: CheckResult) -> list[str]:
    """The readable report: problems first (with fixes), then passes, then a summary line."""
    lines = [f"agentcade check {result.target}"]
    order = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
    for f in sorted(result.findings, key=lambda f: order[f.status]):
        lines.append(f"{_MARK[f.status]} {f.rule}: {f.message}")
        if f.status in ("fail", "warn") and f.fix:
            lines.append(f"    fix: {f.fix}")
    c = result.counts()
    verdict = "PASSED" if result.passed else "FAILED"
    lines.append(
        f"{verdict}: {c['fail']} failed, {c['warn']} warnings, {c['pass']} passed, {c['skip']} skipped"
    )
    return lines


def to_junit(result: CheckResult) -> str:
    """JUnit XML: one testcase per rule; failures as <failure>, warnings in <system-out>,
    rules that could not run as <skipped>."""
    by_rule: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_rule.setdefault(f.rule, []).append(f)
    c = {"failures": 0, "skipped": 0}
    suite = ET.Element("testsuite", name=f"agentcade check {result.target}")
    for rule, findings in by_rule.items():
        case = ET.SubElement(suite, "testcase", classname="agentcade.check", name=rule)
        fails = [f for f in findings if f.status == "fail"]
        warns = [f for f in findings if f.status == "warn"]
        skips = [f for f in findings if f.status == "skip"]
        if fails:
            c["failures"] += 1
            node = ET.SubElement(case, "failure", message=fails[0].message, type=rule)
            node.text = "\n".join(f"{f.message}\nfix: {f.fix}" for f in fails)
        elif skips and not warns:
            c["skipped"] += 1
            ET.SubElement(case, "skipped", message=skips[0].message)
        if warns:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(f"warning: {f.message}\nfix: {f.fix}" for f in warns)
    suite.set("tests", str(len(by_rule)))
    suite.set("failures", str(c["failures"]))
    suite.set("errors", "0")
    suite.set("skipped", str(c["skipped"]))
    root = ET.Element("testsuites", name="agentcade check", tests=str(len(by_rule)),
                      failures=str(c["failures"]), errors="0", skipped=str(c["skipped"]))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def catalog_entry(result: CheckResult) -> dict[str, Any] | None:
    """The game's catalog entry (``games/catalog.json`` schema), from the card or SKILL.md."""
    card = result.card
    if card is None:
        return None
    url = result.target if result.target.startswith("https://") else "https://your-game.example/"
    skill = result.skill
    return {
        "id": card.game_id,
        "name": card.name,
        "summary": card.summary,
        "url": url,
        "version": card.version,
        "author": card.author or (skill.author if skill else None),
        "required_capabilities": list(card.capabilities),
        "homepage": card.homepage or (skill.homepage if skill else None),
        "reviewed_version": card.version,
    }
