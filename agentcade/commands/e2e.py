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

Exit codes: 0 every step passed; 1 a step failed (or the voice is missing); 2 options that
do not go together, an unknown game, a scenarios file that does not load, no speech
recognition or no ``sounddevice`` for a real robot; 3 the robot cannot be reached.
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
from typing import Any

import trio

from agentcade.check.robot_steps import judge_robot_step
from agentcade.check.scenarios import (
    SCENARIO_FILE,
    Scenario,
    Step,
    fill_line,
    load_robot_scenarios,
)
from agentcade.commands.run import SIM_ECHO
from agentcade.core.errors import DeviceError, InputError, VoiceError
from agentcade.core.settings import SettingsError
from agentcade.core.trace import Trace
from agentcade.device.robots import DEFAULT_DESKTOP_URL, SdkRobot
from agentcade.game.client import ReportsUnrevealed, is_url
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import MainAgent
from agentcade.sim.child import child_voice
from agentcade.sim.room import RoomError, parse_room
from agentcade.voice.asr import Recognizer
from agentcade.voice.config import SCRIPTED, load_voice_settings
from agentcade.voice.pcm import resample
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import Synthesizer
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.robot import open_robot
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
                   help=f"sim (default: the simulated robot), app, or ws://HOST:PORT "
                        f"(a real robot next to this computer; e.g. {DEFAULT_DESKTOP_URL})")
    p.add_argument("--room", metavar="SPEC", help="with --robot sim: the simulated room (see run)")
    p.add_argument("--sim-speed", type=float, default=4.0, metavar="N",
                   help="with --robot sim: how much faster than real time it runs (default 4)")
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
    if not sim and args.room:
        print("agentcade e2e: --room needs --robot sim", file=sys.stderr)
        return USAGE
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
    print(_table(outcomes))
    failed = [o for o in outcomes if o.problems]
    print(f"—— {len(outcomes) - len(failed)}/{len(outcomes)} steps passed"
          + (f"; {len(failed)} failed" if failed else ""))
    return FAILED if failed else 0


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
    outcomes: list[Outcome] = []
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
                    for plan in plans:
                        steps = plan.steps
                        for i, step in enumerate(steps):
                            following = steps[i + 1] if i + 1 < len(steps) else None
                            outcome = await _play_step(
                                plan, step, agent, loop, recognizer, robot, voice, mouth,
                                records, trace, wait_idle=following is None or not following.during,
                            )
                            outcomes.append(outcome)
                            mark = "✓" if not outcome.problems else "✗ " + "; ".join(outcome.problems)
                            print(f"  {plan.game:13} {outcome.what:18} {outcome.line:10} {mark}",
                                  file=sys.stderr, flush=True)
    finally:
        with trio.CancelScope(shield=True):
            await services.aclose()
    return outcomes


async def _unrevealed(agent: MainAgent) -> tuple[object, list[str] | None]:
    """The session in play (or None) and what its game reports as unrevealed (None: no game
    runs, or its client reports nothing)."""
    current = agent.current
    if current is None:
        return None, None
    if not isinstance(current.client, ReportsUnrevealed):
        return current, None
    return current, await current.client.unrevealed(current.context_id)


async def _play_step(
    plan: GamePlan,
    step: Step,
    agent: MainAgent,
    loop: VoiceLoop,
    recognizer: Recognizer,
    robot: SdkRobot,
    voice: VoiceRobot,
    mouth: Synthesizer,
    records: list[dict[str, Any]],
    trace: Trace,
    *,
    wait_idle: bool,
) -> Outcome:
    """Say one line and judge what followed (until the host is idle again, or, when the
    next line is said while this one is worked on, until the robot's first sentence)."""
    if step.during:
        await voice.wait_quiet()
        current = agent.current
        if current is None or not current.busy:
            return Outcome(plan.game, step, step.text, ["the game was no longer busy when it was said"])
    else:
        await loop.wait_ready_for_speech()
    session, hidden = await _unrevealed(agent)
    line, why = fill_line(step, hidden)
    if why is not None:
        return Outcome(plan.game, step, step.text, [f"line {step.line}: {why}"])
    if isinstance(recognizer, ScriptedRecognizer):
        recognizer.expect(line)
    mark = len(records)
    heard = len(loop.heard)
    device = getattr(robot, "device", None)
    with trio.move_on_after(LINE_TIMEOUT):
        pcm = await mouth.synthesize(line)
        trace.record("scenario_line", text=line, audio_ms=round(len(pcm) / 32),
                     at=round(time.time(), 3), during=step.during)
        if device is not None:
            device.audio.microphone.feed(pcm + bytes(SCENARIO_SILENCE_BYTES))
        else:
            await _play_on_speaker(pcm)
        await loop.wait_heard(heard + 1)
        if wait_idle:
            await loop.wait_ready_for_speech()
        else:  # the next line comes while this one is worked on: after the first sentence
            await _first_sentence_said(records, mark)
            await voice.wait_quiet()
    # Still kept after the line, in the same session (the game's own phrases of it, as
    # ``agentcade test`` checks):
    after, kept = await _unrevealed(agent)
    starts = [i for i, r in enumerate(records[:mark]) if r["type"] == "game_start"]
    shown = any(r["type"] == "directive_executed" and not r.get("reset")
                for r in records[starts[-1] if starts else mark:])
    said = records[mark:]
    recognised = [str(r["text"]) for r in said if r["type"] == "asr_final"]
    problems = judge_robot_step(
        step, said,
        revealed=hidden[0] if step.reveal and hidden else None,
        secrets=(kept or []) if after is session and not step.reveal else [],
        heard=len(loop.heard) > heard, shown=shown, playing=agent.current is not None,
    )
    spoke = "".join(str(r["text"]) for r in said if r["type"] == "speech_text")
    return Outcome(plan.game, step, line, problems, " / ".join(recognised), spoke)


async def _first_sentence_said(records: list[dict[str, Any]], mark: int) -> None:
    while not any(r["type"] == "speech_end" for r in records[mark:]):  # noqa: ASYNC110 - the trace is a list
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
    rows = [("game", "step", "line", "heard", "result")]
    for o in outcomes:
        rows.append((o.game, o.what, o.line, o.heard,
                     "ok" if not o.problems else "FAILED: " + "; ".join(o.problems)))
    widths = [max(_width(r[i]) for r in rows) for i in range(4)]
    lines = []
    for r in rows:
        cells = [r[i] + " " * (widths[i] - _width(r[i])) for i in range(4)]
        lines.append("| " + " | ".join([*cells, r[4]]) + " |")
    lines.insert(1, "| " + " | ".join("-" * w for w in [*widths, 6]) + " |")
    return "\n".join(lines)


def _width(text: str) -> int:
    return sum(2 if ord(ch) > 0x2E7F else 1 for ch in text)
