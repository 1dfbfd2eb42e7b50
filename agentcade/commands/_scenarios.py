"""Scenario tests for game authors: load ``scenarios.yaml`` beside a game, play it, judge it.

A scenario is a list of steps, each one line said to the game (``start``, ``say`` or
``end``) and what must then be true of the turn::

    scenarios:
      - name: 猜一个数
        steps:
          - start: 玩猜数字
            spoken: ["一到二十"]          # regular expressions the turn's speech must match
          - say: 我猜十
            judged: true                  # the game's code judged the line (hook or tool)
            spoken: ["比十还[大小]|猜中了"]
            device: [motion.move_to]      # device calls that must be made ([]: none at all)
          - say: 不知道
            judged: false
            never: ["不对"]               # must not be said (regular expressions)
          - end: 不玩了
            session: ended

``{answer}`` in a line is replaced by the game's first unrevealed answer
(``SkillAgent.unrevealed``), so a scenario can say the right answer of a random question;
when there is none, the step fails saying so (it never says an empty line).
``seed:`` pins ``random`` for every run of its scenario, ``--repeat`` included.

The game runs in this process behind a ``GameHost``, with the model its settings name
(the offline model when no ``LLM_*`` is set). Every turn is also checked for what no game
may ever do: a verdict spoken in a turn where nothing judged ("made-up verdicts"), markup,
JSON or tool names spoken ("internal words") and an answer the game still keeps secret
(``SkillAgent.unrevealed``) spoken ("leaked answers"). Each of those fails the step too.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import yaml

from agentcade.a2a.card import endpoint_for
from agentcade.a2a.client import A2AClient, GameRemoteError, negotiate_protocol
from agentcade.core.claims import has_verdict
from agentcade.core.errors import InputError
from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.trace import Trace
from agentcade.game.host import GameHost
from agentcade.game.loader import LoadedGame
from agentcade.game.skill_agent import SkillAgent

__all__ = [
    "SCENARIO_FILE",
    "RemoteGame",
    "Run",
    "Scenario",
    "load_remote_scenarios",
    "load_scenario_file",
    "load_scenarios",
    "open_remote_game",
    "play_remote_scenario",
    "play_scenario",
]

SCENARIO_FILE = "scenarios.yaml"
_KINDS: dict[str, Literal["start", "message", "end"]] = {
    "start": "start",
    "say": "message",
    "end": "end",
}
_STEP_KEYS = {"start", "say", "end", "judged", "spoken", "never", "device", "session"}
_INTERNAL_RE = re.compile(r"[<>{}\[\]【】`]|\b[a-z]+_[a-z_]+\b|must_say|user_text|already_said|json", re.I)


@dataclass(frozen=True)
class Step:
    """One line said and what must be true of the turn it makes."""

    kind: Literal["start", "message", "end"]
    text: str
    judged: bool | None = None
    spoken: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    device: tuple[str, ...] | None = None
    session: str | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    steps: tuple[Step, ...]
    seed: int | None = None
    """``seed:`` of the scenario: every run starts ``random`` from it (runs are alike, under
    ``--repeat`` too). Without it each run has its own (runs vary, reproducibly)."""
    index: int = 1


@dataclass
class Run:
    """The outcome of one run of one scenario."""

    failures: list[str] = field(default_factory=list)
    made_up_verdicts: int = 0
    internal_words: int = 0
    leaked_answers: int = 0

    @property
    def passed(self) -> bool:
        return not self.failures


def load_scenarios(game_dir: Path) -> list[Scenario]:
    """The scenarios in ``game_dir/scenarios.yaml``.

    Raises:
        InputError: the file is missing or malformed; the message says what to fix.
    """
    return load_scenario_file(game_dir / SCENARIO_FILE)


def load_remote_scenarios(path: Path) -> list[Scenario]:
    """The scenarios of ``path`` for a remote game: no ``judged`` and no ``{answer}``, which
    need the game's own trace and ``unrevealed()`` (only a game folder has them).

    Raises:
        InputError: the file is missing or malformed, or a step needs what a remote game
            does not show; the message says what to fix.
    """
    scenarios = load_scenario_file(path)
    for scenario in scenarios:
        for number, step in enumerate(scenario.steps, 1):
            where = f"{path}: scenario {scenario.name!r}, step {number}"
            if step.judged is not None:
                raise InputError(f"{where}: 'judged' needs the game's own trace, which only a game "
                                 "folder has; remove it to test a remote game")
            if "{answer}" in step.text:
                raise InputError(f"{where}: {{answer}} needs the game's unrevealed(), which only a "
                                 "game folder has; say the answer's words instead")
    return scenarios


def load_scenario_file(path: Path) -> list[Scenario]:
    """The scenarios in the YAML file ``path`` (``load_scenarios``)."""
    if not path.is_file():
        raise InputError(f"{path}: missing; write the game's scenarios there (see the guide, 场景测试)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: cannot be read as YAML: {str(exc).splitlines()[0]}") from None
    items = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise InputError(f"{path}: needs a non-empty list under 'scenarios:'")
    return [_scenario(path, i, item) for i, item in enumerate(items, 1)]


def _scenario(path: Path, index: int, item: Any) -> Scenario:
    where = f"{path}: scenario {index}"
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise InputError(f"{where}: needs a 'name' and 'steps'")
    steps = item.get("steps")
    if not isinstance(steps, list) or not steps:
        raise InputError(f"{where} ({item['name']}): needs a non-empty list of 'steps'")
    seed = item.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise InputError(f"{where}: 'seed' must be a whole number")
    steps_read = tuple(_step(f"{where}, step {n}", s) for n, s in enumerate(steps, 1))
    return Scenario(item["name"], steps_read, seed, index)


def _step(where: str, item: Any) -> Step:
    if not isinstance(item, dict):
        raise InputError(f"{where}: must be a mapping like {{say: 我猜十, judged: true}}")
    unknown = set(item) - _STEP_KEYS
    if unknown:
        raise InputError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_STEP_KEYS)}")
    said = [k for k in _KINDS if k in item]
    if len(said) != 1:
        raise InputError(f"{where}: needs exactly one of start, say, end")
    text = item[said[0]]
    text = "" if text is None else str(text)

    def patterns(key: str) -> tuple[str, ...]:
        value = item.get(key, [])
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InputError(f"{where}: '{key}' must be a list of regular expressions")
        for v in values:
            try:
                re.compile(v)
            except re.error as exc:
                raise InputError(f"{where}: '{key}' pattern {v!r} is not valid: {exc}") from None
        return tuple(values)

    device = item.get("device")
    if device is not None and (
        not isinstance(device, list) or not all(isinstance(d, str) for d in device)
    ):
        raise InputError(f"{where}: 'device' must be a list of calls like motion.move_to")
    judged = item.get("judged")
    if judged is not None and not isinstance(judged, bool):
        raise InputError(f"{where}: 'judged' must be true or false")
    session = item.get("session")
    if session not in (None, "active", "ended"):
        raise InputError(f"{where}: 'session' must be active or ended")
    return Step(
        _KINDS[said[0]], text, judged, patterns("spoken"), patterns("never"),
        tuple(device) if device is not None else None, session,
    )  # fmt: skip


async def play_scenario(game: LoadedGame, scenario: Scenario, run: int) -> Run:
    """Play ``scenario`` once (run number ``run`` varies the game's random choices)."""
    records: list[dict[str, Any]] = []
    agents: list[SkillAgent] = []
    settings = game.load_settings()

    def new_agent() -> SkillAgent:
        agents.append(game.new_agent(settings))
        return agents[-1]

    random.seed(scenario.index * 1000 + run if scenario.seed is None else scenario.seed)
    host = GameHost(new_agent, trace=Trace(records.append))
    outcome = Run()
    try:
        for number, step in enumerate(scenario.steps, 1):
            replies: list[GameReply] = []
            emit = partial(_collect, replies)

            mark = len(records)
            text = step.text
            if "{answer}" in text:  # the game's current secret, e.g. to say the right answer
                hidden = list(agents[-1].unrevealed()) if agents else []
                if not hidden:
                    outcome.failures.append(
                        f"step {number} ({step.text}): {{answer}} has nothing to stand for: the "
                        "game's unrevealed() is empty here (no question in play, or its answer "
                        "was already said); put the step where a question is open"
                    )
                    break
                text = text.replace("{answer}", hidden[0])
            await host.handle("scenario", GameInput(kind=step.kind, text=text), emit)
            turns = [r for r in records[mark:] if r["type"] == "turn"]
            over = bool(replies) and replies[-1].session == "ended"
            secrets = list(agents[-1].unrevealed()) if agents and not over else []
            _judge(outcome, f"step {number} ({step.text or step.kind})", step, replies, turns, secrets)
    finally:
        await host.aclose()
    return outcome


@dataclass(frozen=True)
class RemoteGame:
    """A game at an address, as the scenarios play it: its card's name and id, where to
    send, and the protocol version both sides speak."""

    name: str
    game_id: str
    endpoint: str
    protocol: str
    client: A2AClient


async def open_remote_game(url: str, client: A2AClient) -> RemoteGame:
    """Read the card at ``url``.

    Raises:
        InputError: no usable card, or no protocol version in common.
    """
    try:
        _raw, card = await client.fetch_card(url)
    except GameRemoteError as exc:
        raise InputError(f"{url}: cannot read the agent card: {exc}") from None
    protocol = negotiate_protocol(card)
    if protocol is None:
        raise InputError(f"{url}: the card lists {', '.join(card.protocols)}; no version agentcade speaks")
    return RemoteGame(card.name, card.game_id, endpoint_for(url, card), protocol, client)


async def play_remote_scenario(game: RemoteGame, scenario: Scenario, run: int) -> Run:
    """Play ``scenario`` once against a remote game over A2A, as the robot's host would.

    The game's randomness is its own (``seed:`` cannot reach it), and what needs its trace
    (``judged``, made-up verdicts, leaked answers) is not checked: ``load_remote_scenarios``
    refuses such steps. The session is ended at the end unless a step ended it.
    """
    outcome = Run()
    context = f"agentcade-test-{uuid.uuid4().hex}"
    over = False
    for number, step in enumerate(scenario.steps, 1):
        replies: list[GameReply] = []
        where = f"step {number} ({step.text or step.kind})"
        try:
            async with game.client.stream(
                game.endpoint, context, GameInput(kind=step.kind, text=step.text), protocol=game.protocol
            ) as stream:
                async for reply, _final in stream:
                    replies.append(reply)
        except GameRemoteError as exc:
            outcome.failures.append(f"{where}: no reply: {exc}")
            return outcome
        _judge(outcome, where, step, replies, (), ())
        over = bool(replies) and replies[-1].session == "ended"
    if not over:
        try:
            async with game.client.stream(
                game.endpoint, context, GameInput(kind="end", text="结束游戏"), protocol=game.protocol
            ) as stream:
                async for _reply in stream:
                    pass
        except GameRemoteError:
            pass  # the scenario's verdict is in; a failing end is check's business
    return outcome


async def _collect(into: list[GameReply], reply: GameReply, final: bool) -> None:
    into.append(reply)


def _judge(
    run: Run,
    where: str,
    step: Step,
    replies: Sequence[GameReply],
    turns: Sequence[dict[str, Any]],
    secrets: Sequence[str],
) -> None:
    said = "".join(r.text for r in replies)
    judged = bool(turns and turns[-1].get("judged"))
    fail = run.failures.append
    if step.judged is not None and judged != step.judged:
        fail(f"{where}: expected {'a' if step.judged else 'no'} verdict by the game's code; heard 「{said}」")
    for pattern in step.spoken:
        if not re.search(pattern, said):
            fail(f"{where}: expected speech matching /{pattern}/; heard 「{said}」")
    for pattern in step.never:
        if re.search(pattern, said):
            fail(f"{where}: /{pattern}/ must not be said; heard 「{said}」")
    calls = [d.call for r in replies for d in r.directives]
    if step.device is not None:
        if not step.device and calls:
            fail(f"{where}: expected no device calls; got {calls}")
        for call in step.device:
            if call not in calls:
                fail(f"{where}: expected device call {call}; got {calls or 'none'}")
    if step.session is not None and replies and replies[-1].session != step.session:
        fail(f"{where}: expected the session {step.session}; it is {replies[-1].session}")
    # The rules and "我猜对了吗" are answered by code from the game's description and state
    # (``host_question`` in the trace): their 猜中, 猜对 are no verdict on the line.
    host_question = bool(turns and turns[-1].get("host_question"))
    if step.kind == "message" and not judged and not host_question and has_verdict(said) and step.judged is False:
        run.made_up_verdicts += 1
        fail(f"{where}: a verdict was spoken though nothing judged: 「{said}」")
    if _INTERNAL_RE.search(said):
        run.internal_words += 1
        fail(f"{where}: internal words spoken: 「{said}」")
    leaked = [s for s in secrets if s and s in said]
    if leaked:
        run.leaked_answers += 1
        fail(f"{where}: an unrevealed answer was spoken")
