"""Checking a served game (a URL, or a folder once served): the card, then a real session.

The card, then ``start``, one ``message``, ``end`` — plus a ``message`` to a context that
does not exist. Every reply's text goes through the speech guard (``agentcade.core.guard``): a request for the
child's personal data fails ``SAFETY-PERSONAL-DATA``, an unsafe instruction
``SAFETY-UNSAFE-ACT``, a claim to be a real person, the system or another brand's
assistant warns ``SAFETY-IMPERSONATION``. Replies are read with ``A2AClient``; the raw JSON-RPC results it keeps
(``A2AReplyStream.results``) give the DataParts for ``REPLY-FORMAT`` / ``REPLY-UNKNOWN-FIELD``.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import trio

from agentcade.a2a.card import CardInfo, endpoint_for
from agentcade.a2a.client import A2AClient, GameRemoteError, negotiate_protocol
from agentcade.check.ids import ID_RULES, check_id
from agentcade.check.rules import (
    _SESSION_RULES,
    DEFAULT_SAY,
    DEFAULT_START,
    DEFAULT_TIMEOUT,
    FIRST_REPLY_SLOW,
    CheckResult,
)
from agentcade.core import guard
from agentcade.core.allowlist import KNOWN_CAPABILITIES
from agentcade.core.errors import DirectiveError, DirectiveErrorKind, RemoteErrorKind, ReplyCutShort
from agentcade.core.protocol import (
    SUPPORTED_VERSIONS,
    GameInput,
    GameReply,
    ProtocolError,
    parse_reply,
    sunset_of,
    unknown_fields,
)
from agentcade.core.speech import speakable
from agentcade.device.validate import validate_directive
from agentcade.game.skill_agent import HOOKS

__all__ = ["PROBE_LINES", "GameCalls", "ScenarioLines", "check_session"]

PROBE_LINES = ("再说一遍", "给我一个提示", "下一个", "我放弃", "再来一局")
"""Said after the probe line in the same session, so the paths of round control, a hint and
a give-up run too (their hooks, their tools, their directives)."""


@dataclass(frozen=True)
class ScenarioLines:
    """One scenario of ``scenarios.yaml`` as ``check`` plays it: (kind, text) per step."""

    name: str
    steps: tuple[tuple[str, str], ...]


class GameCalls:
    """The robot calls a local game was refused, from its trace (a ``Trace`` sink).

    A local game's refused calls never reach a reply: an undeclared one is skipped and an
    invalid one raised inside the tool (the model gets the error). The game's robot proxy
    traces each as ``directive_skipped``; ``check`` serves the folder in its own process,
    so it listens to that trace and fails ``DIRECTIVE-UNDECLARED`` / ``DIRECTIVE-INVALID``
    for every one, naming the tool and the call.
    """

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []

    def __call__(self, record: dict[str, Any]) -> None:
        if record.get("type") == "directive_skipped":
            self._records.append(record)

    def drain(self) -> list[dict[str, Any]]:
        """The records since the last drain."""
        out, self._records = self._records, []
        return out


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
    game_calls: GameCalls | None = None,
    scenarios: Sequence[ScenarioLines] = (),
) -> None:
    """The card and session checks against ``url``; findings go into ``result``.

    ``local``: ``url`` is a folder served by ``check`` itself (SKILL.md rules already ran,
    so the card's author/capabilities are not checked again). ``game_calls``: that game's
    refused robot calls, read after each request. ``scenarios``: the lines of the folder's
    ``scenarios.yaml``, each scenario played in a session of its own after the probe.
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
                     *_SESSION_RULES, *([] if local else ID_RULES)):
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
        check_id(result, card.game_id, url=url, author=card.author)

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

    session = _Session(result, a2a, endpoint_for(url, card), protocol, card, timeout, game_calls)
    await session.run(say, scenarios)


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
    text: str = ""
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
        game_calls: GameCalls | None = None,
    ) -> None:
        self.result = result
        self.game_calls = game_calls
        self.seen_refused: set[tuple[str | None, str]] = set()
        self.client = client
        self.endpoint = endpoint
        self.protocol = protocol
        self.card = card
        self.timeout = timeout
        self.seen_unknown: set[str] = set()
        self.seen_protocols: set[str] = set()
        self.seen_unsafe: set[tuple[str, str]] = set()
        # what the session exercised: a rule nothing exercised is "not exercised", never ✓
        self.directives = 0
        self.intermediate = 0
        self.payloads = 0
        self.scenarios = 0

    async def run(self, say: str, scenarios: Sequence[ScenarioLines] = ()) -> None:
        r = self.result
        probe = await self.play([("start", DEFAULT_START), ("message", say),
                                 *(("message", line) for line in PROBE_LINES), ("end", "结束游戏")])
        played = [*probe]
        for scenario in scenarios:
            steps = [(kind, text) for kind, text in scenario.steps if "{answer}" not in text]
            if not steps or steps[0][0] != "start":
                steps.insert(0, ("start", DEFAULT_START))
            if steps[-1][0] != "end":
                steps.append(("end", "结束游戏"))
            played.extend(await self.play(steps))
        self.scenarios = len(scenarios)
        missing = await self.request(
            f"agentcade-check-missing-{uuid.uuid4().hex}", GameInput(kind="message", text=say)
        )
        for outcome in played:
            self.judge_request(outcome)
        end = probe[-1]
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
        for outcome in [*played, missing]:
            if outcome.first_after is not None and outcome.first_after > FIRST_REPLY_SLOW:
                r.problem(
                    "REPLY-FIRST-SLOW",
                    f"the first spoken reply to {outcome.kind} came after {outcome.first_after:.1f} s",
                    'say something first (turn.say("稍等")) and show effects.Progress',
                )
        self.conclude([*played, missing])

    async def play(self, steps: Sequence[tuple[str, str]]) -> list[_Outcome]:
        """Say ``steps`` in one session; a line after the game ended it opens a new one."""
        context = f"agentcade-check-{uuid.uuid4().hex}"
        outcomes: list[_Outcome] = []
        for kind, text in steps:
            ended = bool(outcomes) and outcomes[-1].final is not None and outcomes[-1].final.session == "ended"
            if ended and kind == "message":
                context = f"agentcade-check-{uuid.uuid4().hex}"
                outcomes.append(await self.request(context, GameInput(kind="start", text=DEFAULT_START)))
            outcomes.append(await self.request(context, GameInput(kind=kind, text=text)))  # type: ignore[arg-type]
        return outcomes

    def conclude(self, outcomes: Sequence[_Outcome]) -> None:
        """Every session rule without a problem: passed when the session exercised it, else
        "not exercised" with what it would have needed. Never a ✓ for what nothing tested."""
        r = self.result
        requests = len(outcomes)
        replies = sum(len(o.replies) for o in outcomes)
        lines = "、".join(dict.fromkeys(o.text for o in outcomes if o.kind == "message"))
        scenarios = f" and the {self.scenarios} scenarios of scenarios.yaml" if self.scenarios else ""
        said = f"{requests} requests (lines: {lines}){scenarios}"
        directives = f"{self.directives} robot directives in {requests} requests" + (
            f", the probe lines and {self.scenarios} scenarios" if self.scenarios else ""
        )
        exercised: dict[str, tuple[bool, str, str]] = {
            # rule: (exercised, the pass message, why not exercised)
            "REPLY-FIRST-SLOW": (any(o.first_after is not None for o in outcomes), "",
                                 "no reply spoke"),
            "REPLY-FORMAT": (self.payloads > 0, f"{self.payloads} replies are valid GameReplies",
                             "no reply carried a GameReply"),
            "REPLY-PROTOCOL": (self.payloads > 0, "", "no reply carried a GameReply"),
            "REPLY-UNKNOWN-FIELD": (self.payloads > 0, "", "no reply carried a GameReply"),
            "REPLY-ENDED-EARLY": (self.intermediate > 0,
                                  f"{self.intermediate} intermediate replies keep the session active",
                                  "every reply was final: no intermediate reply to look at"),
            "SESSION-TIMEOUT": (requests > 0, f"each of {requests} requests got its final reply in time",
                                "no request was made"),
            "DIRECTIVE-INVALID": (self.directives > 0, f"every directive is valid ({directives})",
                                  f"no robot directive was sent or tried in {said}; a scenario in "
                                  "scenarios.yaml that reaches the game's directives exercises them"),
            "DIRECTIVE-UNDECLARED": (self.directives > 0,
                                     f"every directive's capability is declared ({directives})",
                                     f"no robot directive was sent or tried in {said}; a scenario "
                                     "in scenarios.yaml that reaches the game's directives "
                                     "exercises them"),
            "SAFETY-PERSONAL-DATA": (replies > 0, f"no reply asks for personal data ({replies} replies)",
                                     "no reply to read"),
            "SAFETY-UNSAFE-ACT": (replies > 0, f"no reply tells the child to do something unsafe "
                                  f"({replies} replies)", "no reply to read"),
            "SAFETY-IMPERSONATION": (replies > 0, "", "no reply to read"),
        }
        for rule, (ran, passed, why) in exercised.items():
            if ran:
                r.ok(rule, passed or None)
            else:
                r.skip(rule, f"not exercised: {why}")

    async def request(self, context: str, game_input: GameInput) -> _Outcome:
        outcome = _Outcome(game_input.kind, game_input.text)
        started = trio.current_time()
        results: list[object] = []
        with trio.move_on_after(self.timeout) as scope:
            try:
                async with self.client.stream(
                    self.endpoint, context, game_input, protocol=self.protocol
                ) as replies:
                    results = replies.results
                    async for reply, is_final in replies:
                        if outcome.first_after is None and speakable(reply.text):
                            # a progress bar or a drawing is not an answer the family hears
                            outcome.first_after = trio.current_time() - started
                        outcome.replies.append((reply, is_final))
                        self.intermediate += not is_final
                        self.check_directives(game_input.kind, reply)
                        self.check_safety(game_input, reply)
            except GameRemoteError as exc:
                outcome.error = exc
        raw_problem = self.inspect_raw(game_input.kind, results)
        if self.game_calls is not None:
            self.report_refused(game_input.kind, self.game_calls.drain())
        timed_out = outcome.error is not None and outcome.error.kind == RemoteErrorKind.TIMEOUT
        if scope.cancelled_caught or timed_out:
            outcome.timed_out = True
            self.result.problem(
                "SESSION-TIMEOUT",
                f"no final reply to {game_input.kind} within {self.timeout:g} s",
                "answer every request; say something within 8 s and finish well before the timeout",
            )
        elif (
            outcome.error is not None
            and outcome.error.kind == RemoteErrorKind.PROTOCOL
            and not isinstance(outcome.error, ReplyCutShort)
            and not raw_problem  # the client stopped at a reply already reported
            and not any(f.rule == "REPLY-FORMAT" for f in self.result.findings)
        ):
            self.result.problem(
                "REPLY-FORMAT",
                f"the reply to {game_input.kind} cannot be read: {outcome.error.message}",
                "send each reply as a DataPart GameReply (see the guide's 不用 Python 写)",
            )
        return outcome

    def inspect_raw(self, kind: str, results: list[object]) -> bool:
        """REPLY-FORMAT, REPLY-PROTOCOL and REPLY-UNKNOWN-FIELD from the raw DataParts;
        returns whether a reply failed REPLY-FORMAT or REPLY-PROTOCOL."""
        failed = False
        for data in _reply_payloads(results):
            self.payloads += 1
            try:
                reply = parse_reply(data)
            except ProtocolError as exc:
                failed = True
                self.result.problem(
                    "REPLY-FORMAT",
                    f"a reply to {kind} is not a valid GameReply: {exc}",
                    'send {"protocol": "agentcade/1", "text": ..., "directives": [...], '
                    '"session": "active|ended"} in a DataPart',
                )
                continue
            if reply.protocol != self.protocol:
                failed = True
            if reply.protocol != self.protocol and reply.protocol not in self.seen_protocols:
                self.seen_protocols.add(reply.protocol)  # once per version, not once per reply
                self.result.problem(
                    "REPLY-PROTOCOL",
                    f"a reply to {kind} speaks {reply.protocol!r}, but the request (and the "
                    f"version both sides share) is {self.protocol!r}",
                    f'answer in the version of the request (GameInput.protocol): '
                    f'"protocol": "{self.protocol}"',
                )
            for name in unknown_fields(data):
                if name in self.seen_unknown:
                    continue
                self.seen_unknown.add(name)
                self.result.problem(
                    "REPLY-UNKNOWN-FIELD",
                    f"a reply to {kind} has the field {name!r}, which the protocol does not define",
                    "check the spelling (text, directives, session, protocol; call, args, kwargs)",
                )
        return failed

    def check_directives(self, kind: str, reply: GameReply) -> None:
        for directive in reply.directives:
            self.directives += 1
            try:
                validate_directive(directive, self.card.capabilities)
            except DirectiveError as exc:
                undeclared = exc.kind == DirectiveErrorKind.UNDECLARED
                rule = "DIRECTIVE-UNDECLARED" if undeclared else "DIRECTIVE-INVALID"
                fix = exc.hint or "use only the open SDK calls with the SDK's arguments"
                self.result.problem(rule, f"a reply to {kind} has {directive.describe()}: {exc.reason}", fix)

    def check_safety(self, game_input: GameInput, reply: GameReply) -> None:
        """The speech guard on one reply's text: each (rule, topic) reported once."""
        said = f"the reply to {game_input.kind} “{_clip(game_input.text, 20)}”"
        hit = guard.screen(reply.text)
        if hit is not None:
            rule = "SAFETY-PERSONAL-DATA" if hit.kind is guard.GuardKind.PERSONAL_DATA else "SAFETY-UNSAFE-ACT"
            if (rule, hit.topic) not in self.seen_unsafe:
                self.seen_unsafe.add((rule, hit.topic))
                self.result.problem(
                    rule,
                    f"{said} {hit.reason}: “{_clip(hit.clause)}” (agentcade says a neutral line "
                    "instead, and marks a remote game on the games page)",
                    "never ask a child for an address, phone number, school, full name, password, "
                    "photo or to meet, and never tell them to do something unsafe (the guide's "
                    "内容适合在家里玩)",
                )
        claim = guard.impersonation(reply.text)
        if claim is not None and ("SAFETY-IMPERSONATION", claim.topic) not in self.seen_unsafe:
            self.seen_unsafe.add(("SAFETY-IMPERSONATION", claim.topic))
            self.result.problem(
                "SAFETY-IMPERSONATION",
                f"{said} {claim.reason}: “{_clip(claim.clause)}”",
                "speak as the game's host 小懒 (or a character that is clearly part of the game), "
                "never as a real person, the system or another brand's assistant",
            )

    def report_refused(self, kind: str, records: list[dict[str, Any]]) -> None:
        """A local game's refused robot calls (``GameCalls``), each (tool, call) once."""
        for record in records:
            self.directives += 1
            tool = record.get("tool")
            described = str(record.get("directive") or record.get("call"))
            if (tool, described) in self.seen_refused:
                continue
            self.seen_refused.add((tool, described))
            undeclared = record.get("kind") == DirectiveErrorKind.UNDECLARED
            rule = "DIRECTIVE-UNDECLARED" if undeclared else "DIRECTIVE-INVALID"
            what = "hook" if tool in HOOKS else "tool"
            who = f"the {what} {tool!r}" if tool else "the game"
            outcome = "skipped" if undeclared else "raised DirectiveError"
            self.result.problem(
                rule,
                f"during {kind}, {who} calls {described}: {record.get('reason')} ({outcome})",
                str(record.get("hint") or "use only the open SDK calls with the SDK's arguments"),
            )

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

