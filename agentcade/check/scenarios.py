"""One scenario engine: ``scenarios.yaml`` loaded, checked and played by ``check``, ``test`` and ``e2e``.

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

``{answer}`` in a line is replaced by the first answer the game reports as unrevealed (its
``SkillAgent.unrevealed``, asked through the game client: ``ReportsUnrevealed``), so a
scenario can say the right answer of a random question; when there is none, the step fails
saying so (it never says an empty line). ``{wrong}`` is the first of the step's ``wrong:``
lines that is not that answer. ``seed:`` pins ``random`` for every run of its scenario,
``--repeat`` included.

The ``robot:`` list has scenarios of the same shape, said by voice to the robot by
``agentcade e2e`` (the guide's 真机测试): every step is a ``say:`` (the main agent routes it)
and may also expect ``route`` (start, forward, end), ``game`` (the id started), ``gesture``
(nod, shake, none), ``reveal`` (the hidden answer is said), ``standby`` (the screen is put
back after the game), ``drawn_before`` (every drawing frame ran before the sentence
matching it), ``during`` (said while the previous line is worked on), ``busy`` (answered as
busy), ``cancels`` (the turn in flight is cancelled) and ``session: ended`` (no game runs
after it).

A broken file is one ``InputError`` naming the file and the line: ``path:line: what to fix``.

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
from agentcade.core.under_test import UNREVEALED_EXTENSION
from agentcade.game.host import GameHost
from agentcade.game.loader import LoadedGame

__all__ = [
    "SCENARIO_FILE",
    "Gesture",
    "RemoteGame",
    "Run",
    "Scenario",
    "Step",
    "fill_line",
    "load_remote_scenarios",
    "load_robot_scenarios",
    "load_scenario_file",
    "load_scenarios",
    "open_remote_game",
    "play_remote_scenario",
    "play_scenario",
    "refuse_answer_steps",
    "said_and_run",
]

SCENARIO_FILE = "scenarios.yaml"
_KINDS: dict[str, Literal["start", "message", "end"]] = {
    "start": "start",
    "say": "message",
    "end": "end",
}
_STEP_KEYS = {"start", "say", "end", "name", "judged", "spoken", "never", "device", "session", "wrong", "answer"}
_ROBOT_KEYS = {"route", "game", "gesture", "reveal", "standby", "drawn_before", "during", "busy", "cancels"}
_INTERNAL_RE = re.compile(r"[<>{}\[\]【】`]|\b[a-z]+_[a-z_]+\b|must_say|user_text|already_said|json", re.I)

Gesture = Literal["nod", "shake", "none"]


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
    line: int = 0
    """Where the step is written in its file (1-based; 0: not from a file)."""
    name: str = ""
    """What the step tries (the e2e table's "step" column); the line when not given."""
    wrong: tuple[str, ...] = ()
    """Wrong answers ``{wrong}`` stands for: the first that is not the game's answer."""
    answer: str | None = None
    """A regular expression with one group: ``{answer}`` is that group of the first answer
    the game reports that matches it (the game says 数是八, the line wants 八)."""
    route: str | None = None
    """Robot steps: the main agent's route (start, forward, end)."""
    game: str | None = None
    """Robot steps: the game started."""
    gesture: Gesture | None = None
    reveal: bool = False
    """Robot steps: the game's hidden answer (reported before the line) is said."""
    standby: bool = False
    """Robot steps: the screen is put back to standby after the game (``session_reset``)."""
    drawn_before: str | None = None
    """Robot steps: all drawing frames ran before the sentence matching this was said."""
    during: bool = False
    """Robot steps: said while the previous line's turn is still being worked on (the robot
    has said its first sentence and is quiet): the game is busy."""
    busy: bool = False
    """Robot steps: the host answered that the game is still busy instead of forwarding."""
    cancels: bool = False
    """Robot steps: the turn in flight was cancelled: 结束游戏 took effect at once."""


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


class _Mapping(dict[Any, Any]):
    """A YAML mapping that remembers the line it starts on."""

    line = 0


class _LineLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` whose mappings know their line, for errors that point at it."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _Mapping:
    mapping = _Mapping(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_scenarios(game_dir: Path) -> list[Scenario]:
    """The scenarios in ``game_dir/scenarios.yaml``.

    Raises:
        InputError: the file is missing or malformed; the message says what to fix.
    """
    return load_scenario_file(game_dir / SCENARIO_FILE)


def load_remote_scenarios(path: Path, *, reports_unrevealed: bool = False) -> list[Scenario]:
    """The scenarios of ``path`` for a remote game: no ``judged``, which needs the game's own
    trace; ``{answer}`` and ``{wrong}`` only for a game that ``reports_unrevealed`` (served in
    test mode: its card declares the test extension, ``agentcade.core.under_test``).

    Raises:
        InputError: the file is missing or malformed, or a step needs what the remote game
            does not show; the message says what to fix.
    """
    scenarios = load_scenario_file(path)
    for scenario in scenarios:
        for step in scenario.steps:
            if step.judged is not None:
                raise InputError(f"{path}:{step.line}: scenario {scenario.name!r}: 'judged' needs the "
                                 "game's own trace, which only a game folder has; remove it to test "
                                 "a remote game")
    if not reports_unrevealed:
        refuse_answer_steps(path, scenarios)
    return scenarios


def refuse_answer_steps(path: Path, scenarios: Sequence[Scenario]) -> None:
    """Refuse the first step that says ``{answer}`` or ``{wrong}``: the game does not tell
    what it keeps unrevealed.

    Raises:
        InputError: such a step, with its line and what to do instead.
    """
    for scenario in scenarios:
        for step in scenario.steps:
            if "{answer}" in step.text or "{wrong}" in step.text:
                _text, why = fill_line(step, None)
                raise InputError(f"{path}:{step.line}: scenario {scenario.name!r}: {why} "
                                 "(or serve the game with `agentcade serve --test-mode`)")


def load_scenario_file(path: Path) -> list[Scenario]:
    """The scenarios under ``scenarios:`` in the YAML file ``path`` (the file is checked whole,
    its ``robot:`` list too)."""
    return _load(path)[0]


def load_robot_scenarios(path: Path) -> list[Scenario]:
    """The scenarios under ``robot:`` in ``path`` (``agentcade e2e``); [] when it has none.

    Raises:
        InputError: the file is missing or malformed (its ``scenarios:`` too).
    """
    return _load(path, robot_only=True)[1]


def _load(path: Path, *, robot_only: bool = False) -> tuple[list[Scenario], list[Scenario]]:
    if not path.is_file():
        raise InputError(f"{path}: missing; write the game's scenarios there (see the guide, 场景测试)")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LineLoader)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{where}: cannot be read as YAML: {problem}") from None
    if not isinstance(data, _Mapping):
        raise InputError(f"{path}:1: needs a non-empty list under 'scenarios:' (or 'robot:')")
    unknown = sorted(set(data) - {"scenarios", "robot"})
    if unknown:
        raise InputError(f"{path}:{data.line}: unknown keys {unknown}; allowed: robot, scenarios")
    items, robot = data.get("scenarios"), data.get("robot")
    if items is None and robot_only:
        items = []
    if not isinstance(items, list) or (not items and not robot_only):
        raise InputError(f"{path}:{data.line}: needs a non-empty list under 'scenarios:'")
    if robot is not None and (not isinstance(robot, list) or not robot):
        raise InputError(f"{path}:{data.line}: 'robot:' must be a non-empty list of scenarios")
    scenarios = [_scenario(path, i, item, robot=False) for i, item in enumerate(items, 1)]
    robots = [_scenario(path, i, item, robot=True) for i, item in enumerate(robot or [], 1)]
    return scenarios, robots


def _line(item: Any, default: int) -> int:
    return item.line if isinstance(item, _Mapping) else default


def _scenario(path: Path, index: int, item: Any, *, robot: bool) -> Scenario:
    line = _line(item, 1)
    where = f"{path}:{line}: {'robot ' if robot else ''}scenario {index}"
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise InputError(f"{where}: needs a 'name' and 'steps'")
    unknown = sorted(set(item) - {"name", "steps", "seed"})
    if unknown:
        raise InputError(f"{where} ({item['name']}): unknown keys {unknown}; allowed: name, seed, steps")
    steps = item.get("steps")
    if not isinstance(steps, list) or not steps:
        raise InputError(f"{where} ({item['name']}): needs a non-empty list of 'steps'")
    seed = item.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise InputError(f"{where}: 'seed' must be a whole number")
    steps_read = tuple(
        _step(path, f"{'robot ' if robot else ''}scenario {item['name']!r}, step {n}", s, line, robot=robot)
        for n, s in enumerate(steps, 1)
    )
    return Scenario(item["name"], steps_read, seed, index)


def _step(path: Path, what: str, item: Any, near: int, *, robot: bool) -> Step:
    line = _line(item, near)
    where = f"{path}:{line}: {what}"
    if not isinstance(item, dict):
        raise InputError(f"{where}: must be a mapping like {{say: 我猜十, judged: true}}")
    allowed = _STEP_KEYS | _ROBOT_KEYS if robot else _STEP_KEYS
    unknown = set(item) - allowed
    if unknown:
        robot_only = sorted(unknown & _ROBOT_KEYS)
        if robot_only:
            raise InputError(f"{where}: {robot_only} only a robot step can expect; move the "
                             "scenario under 'robot:'")
        raise InputError(f"{where}: unknown step kind or key {sorted(unknown)}; a step says one of "
                         f"start, say, end, and may have {sorted(allowed - set(_KINDS))}")
    said = [k for k in _KINDS if k in item]
    if len(said) != 1:
        raise InputError(f"{where}: needs exactly one of start, say, end")
    if robot and said[0] != "say":
        raise InputError(f"{where}: a robot step is said (say:); where it goes is its 'route' "
                         "(start, forward, end)")
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

    def flag(key: str) -> bool:
        value = item.get(key, False)
        if not isinstance(value, bool):
            raise InputError(f"{where}: '{key}' must be true or false")
        return value

    def choice(key: str, values: tuple[str, ...]) -> Any:
        value = item.get(key)
        if value is not None and value not in values:
            raise InputError(f"{where}: '{key}' must be one of {', '.join(values)}")
        return value

    device = item.get("device")
    if device is not None and (
        not isinstance(device, list) or not all(isinstance(d, str) for d in device)
    ):
        raise InputError(f"{where}: 'device' must be a list of calls like motion.move_to")
    judged = item.get("judged")
    if judged is not None and not isinstance(judged, bool):
        raise InputError(f"{where}: 'judged' must be true or false")
    wrong = item.get("wrong", [])
    wrong = [wrong] if isinstance(wrong, str) else wrong
    if not isinstance(wrong, list) or not all(isinstance(w, (str, int)) for w in wrong):
        raise InputError(f"{where}: 'wrong' must be a list of wrong answers")
    if "{wrong}" in text and not wrong:
        raise InputError(f"{where}: {{wrong}} needs the step's 'wrong:' list of wrong answers")
    name = item.get("name", "")
    game = item.get("game")
    answer = patterns("answer")
    if answer and re.compile(answer[0]).groups != 1:
        raise InputError(f"{where}: 'answer' must have one group, like 数是(.+)")
    drawn_before = patterns("drawn_before")
    return Step(
        _KINDS[said[0]], text, judged, patterns("spoken"), patterns("never"),
        tuple(device) if device is not None else None, choice("session", ("active", "ended")),
        line=line, name=str(name), wrong=tuple(str(w) for w in wrong), answer=answer[0] if answer else None,
        route=choice("route", ("start", "forward", "end")),
        game=str(game) if game is not None else None,
        gesture=choice("gesture", ("nod", "shake", "none")), reveal=flag("reveal"),
        standby=flag("standby"), drawn_before=drawn_before[0] if drawn_before else None,
        during=flag("during"), busy=flag("busy"), cancels=flag("cancels"),
    )  # fmt: skip


def fill_line(step: Step, hidden: Sequence[str] | None) -> tuple[str, str | None]:
    """The line ``step`` says, ``{answer}`` and ``{wrong}`` filled in from ``hidden`` (what
    the game reports as unrevealed before it; None: it reports nothing).

    Returns the line, or ``("", why)`` when a placeholder has nothing to stand for.
    """
    text = step.text
    if "{answer}" not in text and "{wrong}" not in text:
        return text, None
    if hidden is None:
        return "", ("{answer}/{wrong} needs the game's unrevealed answer, and "
                    "this game reports none (no game running, or a remote game); say the answer's "
                    "words instead")
    if not hidden:
        return "", ("{answer} has nothing to stand for: the game's "
                    "unrevealed() is empty here (no question in play, or its answer was already "
                    "said); put the step where a question is open")
    answer = hidden[0]
    if step.answer is not None:
        found = next((m for h in hidden if (m := re.search(step.answer, h))), None)
        if found is None:
            return "", f"no answer the game reports ({'、'.join(hidden)}) matches 'answer' /{step.answer}/"
        answer = found.group(1)
    if "{wrong}" in text:
        wrong = next((w for w in step.wrong if w not in answer and answer not in w), None)
        if wrong is None:
            return "", f"every 'wrong:' answer is like the answer {answer}; add another"
        text = text.replace("{wrong}", wrong)
    return text.replace("{answer}", answer), None


async def play_scenario(game: LoadedGame, scenario: Scenario, run: int) -> Run:
    """Play ``scenario`` once (run number ``run`` varies the game's random choices)."""
    records: list[dict[str, Any]] = []
    settings = game.load_settings()
    random.seed(scenario.index * 1000 + run if scenario.seed is None else scenario.seed)
    host = GameHost(lambda: game.new_agent(settings), trace=Trace(records.append))
    outcome = Run()
    try:
        for number, step in enumerate(scenario.steps, 1):
            replies: list[GameReply] = []
            emit = partial(_collect, replies)
            where = _where(step, number)
            mark = len(records)
            # {answer}: the game's current secret, e.g. to say the right answer
            text, why = fill_line(step, host.unrevealed(SESSION) or [])
            if why is not None:
                outcome.failures.append(f"{where}: {why}")
                break
            await host.handle(SESSION, GameInput(kind=step.kind, text=text), emit)
            turns = [r for r in records[mark:] if r["type"] == "turn"]
            over = bool(replies) and replies[-1].session == "ended"
            secrets = (host.unrevealed(SESSION) or []) if not over else []
            _judge(outcome, where, step, replies, turns, secrets)
    finally:
        await host.aclose()
    return outcome


SESSION = "scenario"
"""The context id of the one session a scenario plays in."""


def _where(step: Step, number: int) -> str:
    """How a failure names its step: the file's line, the step's number and what it says."""
    at = f"line {step.line}: " if step.line else ""
    return f"{at}step {number} ({step.text or step.kind})"


@dataclass(frozen=True)
class RemoteGame:
    """A game at an address, as the scenarios play it: its card's name and id, where to
    send, and the protocol version both sides speak."""

    name: str
    game_id: str
    endpoint: str
    protocol: str
    client: A2AClient
    reports_unrevealed: bool = False
    """The card declares the test extension: the game tells what it keeps unrevealed."""


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
    return RemoteGame(card.name, card.game_id, endpoint_for(url, card), protocol, client,
                      reports_unrevealed=UNREVEALED_EXTENSION in card.extensions)


async def play_remote_scenario(game: RemoteGame, scenario: Scenario, run: int) -> Run:
    """Play ``scenario`` once against a remote game over A2A, as the robot's host would.

    The game's randomness is its own (``seed:`` cannot reach it), and what needs its trace
    (``judged``, made-up verdicts) is not checked: ``load_remote_scenarios`` refuses such
    steps. A game that reports what it keeps unrevealed (test mode) gets ``{answer}`` and
    ``{wrong}`` filled in and its leaked answers checked, as a game folder does. The session
    is ended at the end unless a step ended it.
    """
    outcome = Run()
    context = f"agentcade-test-{uuid.uuid4().hex}"
    over = False

    async def unrevealed() -> list[str] | None:
        if not game.reports_unrevealed:
            return None
        return await game.client.unrevealed(game.endpoint, context)

    for number, step in enumerate(scenario.steps, 1):
        replies: list[GameReply] = []
        where = _where(step, number)
        try:
            text = step.text
            if "{answer}" in text or "{wrong}" in text:
                text, why = fill_line(step, await unrevealed())
                if why is not None:
                    outcome.failures.append(f"{where}: {why}")
                    return outcome
            async with game.client.stream(
                game.endpoint, context, GameInput(kind=step.kind, text=text), protocol=game.protocol
            ) as stream:
                async for reply, _final in stream:
                    replies.append(reply)
            over = bool(replies) and replies[-1].session == "ended"
            secrets = (await unrevealed() or []) if not over else []
        except GameRemoteError as exc:
            outcome.failures.append(f"{where}: no reply: {exc}")
            return outcome
        _judge(outcome, where, step, replies, (), secrets)
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


def said_and_run(step: Step, said: str, calls: Sequence[str]) -> list[str]:
    """What ``step`` expected of the words said (``spoken``, ``never``) and the device calls
    run (``device``) and did not get, a message each: one wording for ``agentcade test``,
    ``check`` and ``e2e``."""
    problems = [f"expected speech matching /{pattern}/; heard 「{said}」"
                for pattern in step.spoken if not re.search(pattern, said)]
    problems += [f"/{pattern}/ must not be said; heard 「{said}」"
                 for pattern in step.never if re.search(pattern, said)]
    if step.device is not None:
        if not step.device and calls:
            problems.append(f"expected no device calls; got {list(calls)}")
        problems += [f"expected device call {call}; got {list(calls) or 'none'}"
                     for call in step.device if call not in calls]
    return problems


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
    for problem in said_and_run(step, said, [d.call for r in replies for d in r.directives]):
        fail(f"{where}: {problem}")
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
