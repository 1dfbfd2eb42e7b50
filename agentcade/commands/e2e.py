"""``agentcade e2e``: the guide's robot test (5. 真机测试), spoken for the user and judged.

Each game's robot steps are the ``robot:`` list of its ``scenarios.yaml``, played by the one
scenario engine (``agentcade.check.scenarios``): a built-in game's own file, or with
``--game DIR|URL`` a game of the author's (an address takes ``--scenarios FILE``). Each
line is *spoken*, and judged from the trace of what the host did with it: routed right
(the main agent's route and game), judged by the game's code or not, nod or shake, what was
said (and that no hidden answer was said too early), the answer revealed, the screen back
to standby after the game, a drawing complete before a sentence. ``{answer}`` is the answer
the game itself reports unrevealed through its client (``ReportsUnrevealed``), asked when
the line is said; a game that reports none (an address) cannot be asked it. A table of
steps is printed; the exit code is 1 when a step failed.

``--robot sim`` (CI): the child's voice speaks each line into the simulated robot's
microphone (in ``--room`` when given), the rest is ``run``'s path: Silero detection, the
recogniser (the scripted one when ``ASR_PROVIDER=scripted``: it knows the line and checks
the audio fits it), the main agent, the games, the robot's voice on the simulated speaker.
``--robot ws://…`` or ``app``: a real robot next to this computer; the lines are played
through the computer's speaker (the ``sounddevice`` package) for the robot's microphone and
the configured speech recognition.
``--robot daemon``: agentcade as the robot SDK's real Daemon's Application, the simulated
robot paired to it, in a private network namespace made for the run (Linux, root;
``commands._e2e_daemon``): the Application hears with its own recogniser and speaks with its
own voice; it is another process, so it is asked over its test-only endpoint (test mode)
what its game keeps unrevealed, and seeded again (``--seed``) before each game's steps.

Each step is played on a :class:`Stage` (this process's pipeline, or the Application); the
table has what was heard and voice to voice (the end of the line to the reply's first
audio) per step.

Exit codes: 0 every step passed; 1 a step failed (or the voice is missing, or the
Application under the Daemon did not start); 2 options that do not go together, an unknown
game, a scenarios file that does not load, no speech recognition or no ``sounddevice`` for a
real robot; 3 the robot cannot be reached; 4 ``--robot daemon`` where no private network
namespace can be made (the Daemon's pairing broadcasts: it never runs on this machine's
network).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio

from agentcade.check.robot_steps import judge_robot_step
from agentcade.check.scenarios import (
    SCENARIO_FILE,
    Scenario,
    Step,
    fill_line,
    load_robot_scenarios,
)
from agentcade.commands._e2e_daemon import ApplicationEnded, app_missing, open_daemon_stage
from agentcade.commands.run import SIM_ECHO
from agentcade.core.errors import DeviceError, InputError, VoiceError
from agentcade.core.settings import SettingsError
from agentcade.core.trace import Trace
from agentcade.core.under_test import HostState
from agentcade.device.robots import DEFAULT_DESKTOP_URL, SdkRobot
from agentcade.game.client import is_url
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import MainAgent
from agentcade.sim.child import child_voice
from agentcade.sim.netns import NotPrivate, namespace_unavailable
from agentcade.sim.room import RoomError, parse_room
from agentcade.voice.asr import Recognizer
from agentcade.voice.config import SCRIPTED, load_voice_settings
from agentcade.voice.models import ModelMissing
from agentcade.voice.pcm import resample
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import Synthesizer
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.robot import open_robot
from agentcade.wiring.test_control import TestControl
from agentcade.wiring.voice import SCENARIO_SILENCE_BYTES, VoiceLoop, running
from agentcade.wiring.voice_services import VoiceServices

SEED = 3
"""The games draw from Python's shared random generator, seeded once before the first game
(the games play in the order of their ids): every run says the same lines as long as every
step goes the same way. What the robot hears of a line still differs a little from run to
run (where the line falls in the microphone's frames, as the simulated robot's timing
decides), and a one-syllable answer is fragile: 鸡 said alone was heard 5 times in 8 (as 丁,
请, 骑 otherwise). So the built-in drawing's answer is asked as a guess, 是X吗, which the
recogniser hears best (34 of the 43 animals; 26 said alone; 是鸡吗 11 times in 12).
tests/bench/bench_recognise.py prints the figures."""
FAILED = 1
USAGE = 2
UNREACHABLE = 3
NO_NAMESPACE = 4
SIM_SPEED = {"sim": 4.0, "daemon": 2.0}
"""How much faster than real time the simulated robot runs by default: under the Daemon the
Application does not know (``commands._e2e_daemon``), so less."""
LINE_TIMEOUT = 90.0

@dataclass(frozen=True)
class GamePlan:
    """One game's robot steps: the label of its rows and its ``robot:`` scenarios."""

    game: str
    scenarios: tuple[Scenario, ...]

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(step for scenario in self.scenarios for step in scenario.steps)


@dataclass
class Outcome:
    game: str
    step: Step
    line: str
    """The line said (``{answer}`` filled in)."""
    problems: list[str] = field(default_factory=list)
    heard: str = ""
    """What the recogniser made of the line (the real recogniser may hear it otherwise)."""
    spoke: str = ""
    """What the robot said after it."""
    v2v: int | None = None
    """Voice to voice, ms: the end of the line's speech to the reply's first audio."""

    @property
    def what(self) -> str:
        return self.step.name or self.step.text


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade e2e``."""
    p.add_argument("games", nargs="*", metavar="GAME",
                   help="built-in game ids (default: every built-in game with robot steps)")
    p.add_argument("--game", action="append", default=[], metavar="DIR|URL", dest="extra",
                   help="a game of your own: its scenarios.yaml's robot steps (may repeat); "
                        "without GAME ids only the games given so are offered and played")
    p.add_argument("--scenarios", metavar="FILE", type=Path,
                   help="with --game URL: the scenarios file with its robot steps")
    p.add_argument("--robot", default="sim",
                   help=f"sim (default: the simulated robot), daemon (agentcade as the real "
                        f"Daemon's Application, the simulated robot paired to it; Linux as root, "
                        f"in a private network namespace), app, or ws://HOST:PORT "
                        f"(a real robot next to this computer; e.g. {DEFAULT_DESKTOP_URL})")
    p.add_argument("--room", metavar="SPEC", help="with --robot sim: the simulated room (see run)")
    p.add_argument("--sim-speed", type=float, default=None, metavar="N",
                   help="with --robot sim or daemon: how much faster than real time the simulated "
                        "robot runs (default 4; 2 under the Daemon)")
    p.add_argument("--seed", type=int, default=SEED, metavar="N",
                   help=f"the games' random choices (which question each draws; "
                        f"default {SEED}): the same lines every run")


def builtin_plans(ids: Sequence[str]) -> list[GamePlan]:
    """The robot steps of the built-in games ``ids`` (all that have some, by id, when empty).

    Raises:
        InputError: an unknown id, a game without robot steps, or a file that does not load.
    """
    root = builtin_games_dir()
    known = sorted(p.name for p in root.iterdir() if (p / "SKILL.md").is_file())
    unknown = [g for g in ids if g not in known]
    if unknown:
        raise InputError(f"no built-in game {', '.join(unknown)} (games: {', '.join(known)})")
    plans = []
    for game in ids or known:
        path = root / game / SCENARIO_FILE
        scenarios = load_robot_scenarios(path) if path.is_file() else []
        if scenarios:
            plans.append(GamePlan(game, tuple(scenarios)))
        elif ids:
            raise InputError(f"{path}: no robot steps (a 'robot:' list) for {game}")
    return plans


def extra_plan(location: str, scenarios_file: Path | None) -> GamePlan:
    """The robot steps of the game at ``location`` (a folder, or an address with ``scenarios_file``).

    Raises:
        InputError: no scenarios file, no robot steps in it, or one that does not load.
    """
    if is_url(location):
        if scenarios_file is None:
            raise InputError(f"{location}: a game at an address needs --scenarios FILE with its robot steps")
        path, label = scenarios_file, location
    else:
        path, label = scenarios_file or Path(location) / SCENARIO_FILE, Path(location).resolve().name
    scenarios = load_robot_scenarios(path)
    if not scenarios:
        raise InputError(f"{path}: no robot steps: add a 'robot:' list (see the guide, 真机测试)")
    started = [step.game for scenario in scenarios for step in scenario.steps if step.game]
    return GamePlan(started[0] if started else label, tuple(scenarios))


def _run_under_daemon(args: argparse.Namespace, plans: Sequence[GamePlan]) -> int:
    """``--robot daemon``: refused outside a private network namespace (exit 4)."""
    if args.extra:
        print("agentcade e2e: --robot daemon plays the built-in games (the Application takes "
              "no --game); try a game of your own with --robot sim", file=sys.stderr)
        return USAGE
    why = app_missing()
    if why is not None:
        print(f"agentcade e2e: {why}", file=sys.stderr)
        return USAGE
    try:
        settings = load_voice_settings()
    except SettingsError as exc:
        print(f"agentcade e2e: {exc}", file=sys.stderr)
        return USAGE
    if settings.asr.provider == SCRIPTED:
        print("agentcade e2e: ASR_PROVIDER=scripted cannot hear an Application in another "
              "process; under the Daemon it hears with its own recogniser (local, the default)",
              file=sys.stderr)
        return USAGE
    reason = namespace_unavailable()
    if reason is not None:
        print(f"agentcade e2e: --robot daemon runs the SDK's real Daemon only inside a private "
              f"network namespace, and none can be made here: {reason}", file=sys.stderr)
        return NO_NAMESPACE
    try:
        outcomes = trio.run(_run_daemon, args, plans)
    except NotPrivate as exc:
        print(f"agentcade e2e: --robot daemon runs the SDK's real Daemon only inside a private "
              f"network namespace: {exc}", file=sys.stderr)
        return NO_NAMESPACE
    except (ModelMissing, VoiceError, ApplicationEnded) as exc:
        print(f"agentcade e2e: {exc}", file=sys.stderr)
        return FAILED
    return _report(outcomes)


def _report(outcomes: Sequence[Outcome]) -> int:
    print(_table(outcomes))
    failed = [o for o in outcomes if o.problems]
    print(f"—— {len(outcomes) - len(failed)}/{len(outcomes)} steps passed"
          + (f"; {len(failed)} failed" if failed else ""))
    return FAILED if failed else 0


def run(args: argparse.Namespace) -> int:
    """Play every chosen game's robot steps by voice and print the table."""
    if len(args.extra) > 1 and args.scenarios is not None:
        print("agentcade e2e: --scenarios goes with one --game", file=sys.stderr)
        return USAGE
    try:
        plans = builtin_plans(args.games) if args.games or not args.extra else []
        plans += [extra_plan(location, args.scenarios) for location in args.extra]
    except InputError as exc:
        print(f"agentcade e2e: {exc}", file=sys.stderr)
        return USAGE
    sim = args.robot == "sim"
    daemon = args.robot == "daemon"
    if not sim and args.room:
        print("agentcade e2e: --room needs --robot sim", file=sys.stderr)
        return USAGE
    if args.sim_speed is None:
        args.sim_speed = SIM_SPEED.get(args.robot, 1.0)
    elif not (sim or daemon):
        print("agentcade e2e: --sim-speed needs --robot sim or daemon", file=sys.stderr)
        return USAGE
    if daemon:
        return _run_under_daemon(args, plans)
    try:
        room = parse_room(args.room or "")
        if sim and "echo" not in (args.room or ""):  # the robot hears its own voice
            room = dataclasses.replace(room, echo=SIM_ECHO)
        settings = load_voice_settings()
    except (RoomError, SettingsError) as exc:
        print(f"agentcade e2e: {exc}", file=sys.stderr)
        return USAGE
    if not sim and settings.missing_asr is not None:
        print(f"agentcade e2e: a real robot needs speech recognition: {settings.missing_asr}",
              file=sys.stderr)
        return USAGE
    if not sim and settings.asr.provider == SCRIPTED:
        print("agentcade e2e: ASR_PROVIDER=scripted only hears the simulated robot's scenario; "
              "a real robot needs a real recogniser (local, the default, or a service)",
              file=sys.stderr)
        return USAGE
    if not sim:
        try:
            import sounddevice  # type: ignore[import-not-found]  # noqa: F401
        except (ImportError, OSError):
            print("agentcade e2e: speaking through the computer's speaker needs sounddevice "
                  "(pip install 'agentcade[e2e]')", file=sys.stderr)
            return USAGE
    random.seed(args.seed)
    try:
        outcomes = trio.run(_run_all, args, plans, room, settings, sim)
    except VoiceError as exc:
        print(f"agentcade e2e: {exc}", file=sys.stderr)
        return FAILED
    except DeviceError as exc:
        print(f"agentcade e2e: 连不上机器人（{args.robot}）：{exc.reason}", file=sys.stderr)
        return UNREACHABLE
    return _report(outcomes)


class Stage(Protocol):
    """Where the robot steps are played: agentcade in this process (``sim``, a real robot)
    or the Application under the real Daemon (``daemon``: ``commands._e2e_daemon``)."""

    async def begin_game(self, seed: int) -> None:
        """A game's steps begin (the Application is seeded again: ``commands._e2e_daemon``)."""

    async def ready(self) -> None:
        """Wait until the robot listens, nothing is pending and it is quiet."""

    async def quiet(self) -> None:
        """Wait until the robot says nothing (its echo tail passed)."""

    async def state(self) -> HostState:
        """The game in play, busy or not, what it reports unrevealed, utterances heard."""

    async def say(self, line: str, pcm: bytes) -> None:
        """Speak ``line`` (``pcm``: it in the child's voice, 16 kHz) to the robot."""

    async def wait_heard(self, count: int) -> None:
        """Wait until ``count`` utterances were recognised."""

    def records(self) -> list[dict[str, Any]]:
        """The host's trace records so far (only ever appended to)."""


class InProcessStage:
    """agentcade's pipeline in this process, on the simulated robot or a real one."""

    def __init__(self, agent: MainAgent, loop: VoiceLoop, voice: VoiceRobot, recognizer: Recognizer,
                 robot: SdkRobot, records: list[dict[str, Any]]) -> None:
        self.loop = loop
        self.voice = voice
        self.recognizer = recognizer
        self.device = getattr(robot, "device", None)
        self._records = records
        # What the game reports unrevealed, asked through its client: the same answer the
        # test-only endpoint gives about an Application.
        self._control = TestControl(agent)
        self._control.loop = loop

    async def begin_game(self, seed: int) -> None:
        """Nothing: this process was seeded once before the first game (``SEED``)."""

    async def ready(self) -> None:
        await self.loop.wait_ready_for_speech()

    async def quiet(self) -> None:
        await self.voice.wait_quiet()

    async def state(self) -> HostState:
        return await self._control.state()

    async def say(self, line: str, pcm: bytes) -> None:
        if isinstance(self.recognizer, ScriptedRecognizer):
            self.recognizer.expect(line)
        if self.device is not None:
            self.device.audio.microphone.feed(pcm + bytes(SCENARIO_SILENCE_BYTES))
        else:
            await _play_on_speaker(pcm)

    async def wait_heard(self, count: int) -> None:
        await self.loop.wait_heard(count)

    def records(self) -> list[dict[str, Any]]:
        return self._records


async def _run_all(
    args: argparse.Namespace, plans: Sequence[GamePlan], room: Any, settings: Any, sim: bool
) -> list[Outcome]:
    records: list[dict[str, Any]] = []
    trace = Trace(records.append)
    mouth = await child_voice(room)
    # run's own services: the recogniser and voice the settings name (an SDK provider gets
    # its bridge); on the sim without ASR_PROVIDER the scripted one, told each line as said.
    services = VoiceServices([] if sim else None)
    await services.open(settings)
    recognizer, synthesizer = services.recognizer, services.synthesizer
    assert recognizer is not None  # a real robot without ASR is refused in run()
    assert synthesizer is not None
    try:
        async with open_robot(args.robot, trace=trace, room=room, own_process=True,
                              sim_speed=args.sim_speed if sim else 1.0) as robot:
            if not isinstance(robot, SdkRobot):
                raise DeviceError("unavailable", "connect", f"{args.robot} is not a robot with a voice")
            voice = VoiceRobot(robot, synthesizer, trace=trace, print_speech=False)
            builtins = bool(args.games or not args.extra)  # --game alone: only the game under test
            async with open_pipeline(voice, games=args.extra, builtins=builtins, remote=[],
                                     trace=trace) as (agent, _registry):
                loop = VoiceLoop(agent, voice, recognizer, vad=settings.vad, trace=trace, greet=False,
                                 barge_in=settings.barge_in, speed=args.sim_speed if sim else 1.0)
                async with running(loop):
                    stage = InProcessStage(agent, loop, voice, recognizer, robot, records)
                    return await _play_plans(plans, stage, mouth, trace, args.seed)
    finally:
        with trio.CancelScope(shield=True):
            await services.aclose()


async def _run_daemon(args: argparse.Namespace, plans: Sequence[GamePlan]) -> list[Outcome]:
    """The steps played against agentcade as the real Daemon's Application."""
    mouth = await child_voice(parse_room(""))
    async with open_daemon_stage(speed=args.sim_speed, seed=args.seed) as stage:
        return await _play_plans(plans, stage, mouth, Trace(), args.seed)


async def _play_plans(
    plans: Sequence[GamePlan], stage: Stage, mouth: Synthesizer, trace: Trace, seed: int
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for plan in plans:
        await stage.begin_game(seed)
        steps = plan.steps
        voiced: bytes | None = None
        for i, step in enumerate(steps):
            following = steps[i + 1] if i + 1 < len(steps) else None
            early, voiced = voiced, None
            if early is None and "{" not in step.text:
                early = await mouth.synthesize(step.text)  # (the lines voiced in their order)
            if following is not None and following.during and "{" not in following.text:
                # Voiced now: said while this line's turn is worked on, it must not wait
                # for the voice (a game drawing in real time is done within seconds).
                voiced = await mouth.synthesize(following.text)
            outcome = await _play_step(plan, step, stage, mouth, trace, early=early,
                                       wait_idle=following is None or not following.during)
            outcomes.append(outcome)
            mark = "✓" if not outcome.problems else "✗ " + "; ".join(outcome.problems)
            print(f"  {plan.game:13} {outcome.what:18} {outcome.line:10} {mark}",
                  file=sys.stderr, flush=True)
    return outcomes


async def _play_step(
    plan: GamePlan,
    step: Step,
    stage: Stage,
    mouth: Synthesizer,
    trace: Trace,
    *,
    wait_idle: bool,
    early: bytes | None = None,
) -> Outcome:
    """Say one line and judge what followed (until the host is idle again, or, when the
    next line is said while this one is worked on, until the robot's first sentence)."""
    # A line without placeholders is voiced before waiting (``early``: before the line
    # before it), so it is said the moment the robot is ready.
    if early is None and "{" not in step.text:
        early = await mouth.synthesize(step.text)
    if step.during:
        await stage.quiet()
        before = await stage.state()
        if before.game is None or not before.busy:
            return Outcome(plan.game, step, step.text, ["the game was no longer busy when it was said"])
    else:
        await stage.ready()
        before = await stage.state()
    line, why = fill_line(step, before.unrevealed)
    if why is not None:
        return Outcome(plan.game, step, step.text, [f"line {step.line}: {why}"])
    mark = len(stage.records())
    with trio.move_on_after(LINE_TIMEOUT):
        pcm = early if early is not None else await mouth.synthesize(line)
        trace.record("scenario_line", text=line, audio_ms=round(len(pcm) / 32),
                     at=round(time.time(), 3), during=step.during)
        await stage.say(line, pcm)
        await stage.wait_heard(before.heard + 1)
        if wait_idle:
            await stage.ready()
        else:  # the next line comes while this one is worked on: after the first sentence
            await _first_sentence_said(stage, mark)
            await stage.quiet()
    # Still kept after the line, in the same session (the game's own phrases of it, as
    # ``agentcade test`` checks):
    after = await stage.state()
    records = stage.records()
    starts = [i for i, r in enumerate(records[:mark]) if r["type"] == "game_start"]
    shown = any(r["type"] == "directive_executed" and not r.get("reset")
                for r in records[starts[-1] if starts else mark:])
    said = records[mark:]
    recognised = [str(r["text"]) for r in said if r["type"] == "asr_final"]
    same_session = after.session is not None and after.session == before.session
    problems = judge_robot_step(
        step, said,
        revealed=before.unrevealed[0] if step.reveal and before.unrevealed else None,
        secrets=(after.unrevealed or []) if same_session and not step.reveal else [],
        heard=after.heard > before.heard, shown=shown, playing=after.game is not None,
    )
    spoke = "".join(str(r["text"]) for r in said if r["type"] == "speech_text")
    v2v = next((r["reply_ms"] for r in said if r["type"] == "utterance" and r.get("reply_ms") is not None), None)
    return Outcome(plan.game, step, line, problems, " / ".join(recognised), spoke, v2v)


async def _first_sentence_said(stage: Stage, mark: int) -> None:
    while not any(r["type"] == "speech_end" for r in stage.records()[mark:]):  # noqa: ASYNC110 - the trace is a list
        await trio.sleep(0.02)


async def _play_on_speaker(pcm: bytes) -> None:
    """Play 16 kHz ``pcm`` on this computer's speaker, for a real robot's microphone."""
    import sounddevice

    data = resample(pcm, 16000, 48000)

    def play() -> None:
        from array import array

        samples = array("h", data)
        sounddevice.play(samples, 48000, blocking=True)

    await trio.to_thread.run_sync(play)


def _table(outcomes: Sequence[Outcome]) -> str:
    rows = [("game", "step", "line", "heard", "v2v ms", "result")]
    for o in outcomes:
        rows.append((o.game, o.what, o.line, o.heard, "" if o.v2v is None else str(o.v2v),
                     "ok" if not o.problems else "FAILED: " + "; ".join(o.problems)))
    widths = [max(_width(r[i]) for r in rows) for i in range(5)]
    lines = []
    for r in rows:
        cells = [r[i] + " " * (widths[i] - _width(r[i])) for i in range(5)]
        lines.append("| " + " | ".join([*cells, r[5]]) + " |")
    lines.insert(1, "| " + " | ".join("-" * w for w in [*widths, 6]) + " |")
    return "\n".join(lines)


def _width(text: str) -> int:
    return sum(2 if ord(ch) > 0x2E7F else 1 for ch in text)
