"""``agentcade run``: the family talks to the robot — microphone, ASR, main agent, games, TTS.

The same main agent, games and output queue as ``play`` (``wiring.pipeline``), with voice
in and out (``wiring.voice.VoiceLoop``; the recogniser and the voice are
``wiring.voice_services.VoiceServices``): the robot greets, names each game, listens on its
microphone, recognises with the configured ASR and says every reply with the configured
TTS, sentence by sentence. Speaking while it speaks (``BARGE_IN=voice``, the default) or a
touch on its back stops the sound and cancels the turn.

Robots: ``--robot app`` (the WatcheRobot Application environment, the default when
``WATCHER_APP_*`` is set; the shutdown file ends it within 3 s, the desktop's microphone
toggle is honoured), ``--robot ws://HOST:PORT`` (next to the Daemon; default
``ws://127.0.0.1:8765``) or ``--robot sim`` (the simulated robot on this machine).
``--say-file FILE`` (with ``--robot sim``) plays a scenario: each non-empty line (``#``
starts a comment) is spoken into the simulated microphone when the robot listens, in the
simulated child's voice (:mod:`agentcade.sim.child`: the neural voice at a child's pitch,
or espeak-ng with ``--room child=espeak``), and heard by the configured recogniser — the
embedded offline one (Whisper base) without ``ASR_PROVIDER``; ``ASR_PROVIDER=scripted``
takes the scenario's lines as heard, after a check that the audio fits the line.
``--room SPEC`` (with ``--robot sim``) puts the simulated microphone in a family room
(:mod:`agentcade.sim.room`); ``--record DIR`` keeps every clip said and heard as WAV
(:mod:`agentcade.voice.record`). An Application gets no arguments: the settings
``AGENTCADE_TRACE_FILE`` and ``AGENTCADE_RECORD_DIR`` (environment or the user's ``.env``)
stand for ``--trace-file`` and ``--record`` when those are not given.

With no speech recognition set, the robot still starts: the pages run and ``/`` leads to
the voice settings, the robot says once what to set there, and listening starts as soon as
valid settings are saved. Any voice setting saved on the page is taken up the same way, at
once, without a restart.

In test mode only (``AGENTCADE_TEST_MODE``, set by ``agentcade e2e --robot daemon``;
:mod:`agentcade.core.under_test`), ``AGENTCADE_TEST_CONTROL_PORT`` serves the test-only
control endpoint on 127.0.0.1 (:mod:`agentcade.wiring.test_control`) and
``AGENTCADE_TEST_SEED`` seeds the games' random choices.

Exit codes: 0 done (scenario over, shutdown file, Ctrl-C is 130); 1 settings that do not
validate, an unreadable scenario, a voice that cannot load (espeak-ng missing), a
``--record`` folder that cannot be written; 2 no ASR configured and no pages to set it on
(``--no-pages`` or the port taken; one line says what to set), a bad ``--room``, options
that do not go together, or a test-mode variable that is no number; 3 the robot cannot be reached.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
from pathlib import Path

import trio

from agentcade.commands._pages import add_pages_options, pages_from_args
from agentcade.commands._trace import add_trace_options, trace_from_args
from agentcade.commands.chat import ConsoleTrace
from agentcade.core.errors import VoiceError
from agentcade.core.host_settings import load_outputs
from agentcade.core.settings import SettingsError
from agentcade.core.trace import Trace
from agentcade.core.under_test import control_port, draw_pace, pinned_seed
from agentcade.device.robots import APP_ENV, DEFAULT_DESKTOP_URL, DeviceError, SdkRobot
from agentcade.sim.child import child_voice
from agentcade.sim.room import Room, RoomError, parse_room
from agentcade.voice.config import VoiceSettings, load_voice_settings
from agentcade.voice.record import Recorder, open_record_dir
from agentcade.voice.speaker import VoiceRobot
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.robot import open_robot
from agentcade.wiring.test_control import TestControl
from agentcade.wiring.voice import (
    MicGate,
    VoiceLoop,
    follow_desktop_microphone,
    say_into_microphone,
)
from agentcade.wiring.voice_services import VoiceServices

SIM_ECHO = 0.3
"""How much of the simulated robot's own voice comes back into its microphone by default."""
NO_ASR = 2
USAGE = 2
UNREACHABLE = 3
APP_GRACE = 1.0
"""Seconds the goodbye may take when the Daemon asks the Application to stop (3 s in all)."""
SHUTDOWN_POLL = 0.1


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade run``."""
    p.add_argument(
        "--robot",
        default=None,
        help="app (WatcheRobot Application; the default inside one), the Daemon's "
             f"ws://HOST:PORT (default {DEFAULT_DESKTOP_URL}), or sim (simulated robot)",
    )
    p.add_argument("--game", action="append", default=[], metavar="DIR|URL",
                   help="also offer this game (replaces one with the same id); may repeat")
    p.add_argument("--say-file", metavar="FILE",
                   help="with --robot sim: speak each line of FILE into the simulated microphone "
                        "(the simulated child's voice), then stop")
    p.add_argument("--room", metavar="SPEC",
                   help="with --robot sim: the simulated room, e.g. "
                        "noise=700,bursts=on,voice=0.25,echo=0.3 (fan noise RMS, television "
                        "bursts between lines, the child's loudness, the robot's own echo)")
    p.add_argument("--sim-speed", type=float, default=1.0, metavar="N",
                   help="with --robot sim: its speaker and microphone run N times faster than "
                        "real time (tests; default 1)")
    p.add_argument("--record", metavar="DIR",
                   help="save every clip the robot says (NNN-robot.wav, 24 kHz) and every "
                        "utterance it hears (NNN-heard.wav, 16 kHz) in DIR")
    add_trace_options(p, "what is heard and said")
    add_pages_options(p)


def _default_robot() -> str:
    return "app" if all(os.environ.get(v) for v in APP_ENV) else DEFAULT_DESKTOP_URL


def read_scenario(path: Path) -> list[str]:
    """The lines to say: non-empty, without ``#`` comments."""
    lines = []
    for raw in path.read_text(encoding="utf-8-sig").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def run(args: argparse.Namespace) -> int:
    """Listen and answer until stopped (or the scenario is over)."""
    robot = args.robot or _default_robot()
    try:
        settings = load_voice_settings()
    except SettingsError as exc:
        print(f"agentcade run: {exc}", file=sys.stderr)
        return 1
    lines: list[str] | None = None
    if (args.say_file or args.room or args.sim_speed != 1.0) and robot != "sim":
        option = "--say-file" if args.say_file else "--room" if args.room else "--sim-speed"
        print(f"agentcade run: {option} needs --robot sim (it is the simulated robot's "
              "microphone)", file=sys.stderr)
        return USAGE
    if not 0.1 <= args.sim_speed <= 50:
        print("agentcade run: --sim-speed must be between 0.1 and 50", file=sys.stderr)
        return USAGE
    try:
        # The simulated robot hears its own voice (0.3 of it) unless the room says otherwise.
        room = parse_room(args.room or "")
        if robot == "sim" and "echo" not in (args.room or ""):
            room = dataclasses.replace(room, echo=SIM_ECHO)
    except RoomError as exc:
        print(f"agentcade run: {exc}", file=sys.stderr)
        return USAGE
    try:
        test_port, seed = control_port(os.environ), pinned_seed(os.environ)
        draw_pace(os.environ)  # read by every drawing: a bad value is refused here, once
    except ValueError as exc:
        print(f"agentcade run: {exc}", file=sys.stderr)
        return USAGE
    if seed is not None:
        random.seed(seed)  # test mode: the games draw the same questions every run
    if args.say_file:
        try:
            lines = read_scenario(Path(args.say_file))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"agentcade run: cannot read {args.say_file}: {exc}", file=sys.stderr)
            return 1
    if settings.missing_asr is not None and lines is None and args.no_pages:
        # Without the pages there is nowhere to fill it in.
        print(f"agentcade run: {settings.missing_asr}", file=sys.stderr)
        return NO_ASR
    record: Path | None = None
    try:
        folder = Path(args.record) if args.record else load_outputs().record_dir
        if folder is not None:
            record = open_record_dir(folder)
        with trace_from_args(args, ConsoleTrace(), _voice_trace_printer) as trace:
            for secret in settings.secrets():
                trace.add_secret(secret)
            trio.run(_run, args, settings, robot, lines, trace, room, record, test_port)
    except _NoAsr as exc:
        print(f"agentcade run: {exc}", file=sys.stderr)
        return NO_ASR
    except SettingsError as exc:
        print(f"agentcade run: {exc}", file=sys.stderr)
        return 1
    except VoiceError as exc:
        print(f"agentcade run: {exc}", file=sys.stderr)
        return 1
    except DeviceError as exc:
        print(f"agentcade run: 连不上机器人（{robot}）：{exc.reason}。看看 Daemon 是否在运行、"
              "机器人是否在线。", file=sys.stderr)
        return UNREACHABLE
    return 0


class _NoAsr(Exception):
    """No speech recognition, and no settings page to set it on."""


VOICE_KEYS = ("ASR_", "TTS_", "VAD_", "BARGE_IN")
ASK_FOR_ASR = ("我现在还听不见大家说话。请在电脑上打开小懒的设置页面，在“语音”一栏填好语音识别，"
               "保存以后我马上就能听见了。")
"""Said once by the robot when it starts with no speech recognition set."""


class _Changes:
    """Wakes whoever waits when the settings page saved a voice setting."""

    def __init__(self) -> None:
        self._event = trio.Event()
        self.count = 0
        """How many saves changed a voice setting so far."""

    async def saved(self, keys: frozenset[str]) -> None:
        await trio.lowlevel.checkpoint()
        if any(key.startswith(VOICE_KEYS) for key in keys):
            self.count += 1
            self._event.set()
            self._event = trio.Event()

    async def wait(self, seen: int) -> None:
        """Wait for a change after the first ``seen`` (none is missed while busy)."""
        while self.count <= seen:
            await self._event.wait()


async def _run(
    args: argparse.Namespace,
    settings: VoiceSettings,
    robot_spec: str,
    lines: list[str] | None,
    trace: Trace,
    room: Room,
    record: Path | None,
    test_port: int | None = None,
) -> None:
    app = robot_spec == "app"
    services = VoiceServices(lines)
    await services.open(settings)
    if services.recognizer is None and args.no_pages:
        await services.aclose()
        raise _NoAsr(services.why_deaf or settings.missing_asr)
    try:
        async with open_robot(
            robot_spec, trace=trace, room=room, sim_speed=args.sim_speed, own_process=True
        ) as robot:
            if not isinstance(robot, SdkRobot):
                raise DeviceError("unavailable", "connect", f"{robot_spec} is not a robot with a voice")
            assert services.synthesizer is not None
            voice = VoiceRobot(robot, services.synthesizer, trace=trace)
            changes = _Changes()
            async with open_pipeline(
                voice, games=args.game, trace=trace, shutdown_grace=APP_GRACE if app else None
            ) as (agent, registry), pages_from_args(
                args, agent, registry, trace, on_saved=changes.saved,
                voice_required=(lambda: services.recognizer is None) if lines is None else False
            ) as pages, trio.open_nursery() as nursery:
                recorder = None
                if record is not None:
                    recorder = Recorder(record, trace=trace)
                    await nursery.start(recorder.run)
                    voice.record = recorder.robot
                    print(f"—— 录音存到 {record}（NNN-robot.wav 是小懒说的，NNN-heard.wav 是听到的）。",
                          flush=True)
                control = None
                if test_port is not None:  # test mode only (agentcade.core.under_test)
                    control = TestControl(agent)
                    await nursery.start(control.serve, test_port)
                gate = MicGate()
                if app:
                    follow_desktop_microphone(robot, gate, agent)
                shutdown = os.environ.get("WATCHER_APP_SHUTDOWN_SIGNAL")
                if shutdown:
                    nursery.start_soon(_watch_shutdown, Path(shutdown), nursery.cancel_scope)
                greet, asked = True, False
                while True:
                    seen = changes.count
                    recognizer = services.recognizer
                    if recognizer is None:
                        deaf = services.why_deaf or settings.missing_asr
                        if pages is None:
                            raise _NoAsr(deaf)
                        if not asked:
                            asked = True
                            print(f"—— {deaf}。也可以在设置页面的“语音”一栏填写："
                                  f"{pages.settings_url}#voice ，保存后马上开始听，不用重启。",
                                  flush=True)
                            await agent.say(ASK_FOR_ASR)
                        await changes.wait(seen)
                    else:
                        loop = VoiceLoop(
                            agent, voice, recognizer, vad=settings.vad, trace=trace, gate=gate,
                            greet=greet, barge_in=settings.barge_in, speed=args.sim_speed,
                            on_utterance=recorder.heard if recorder is not None else None,
                        )
                        greet = False
                        if control is not None:
                            control.loop = loop
                        names = "、".join(g.name for g in registry.games) or "（没有）"
                        assert services.synthesizer is not None
                        stop = {"voice": "它说话时直接说话，或者摸一下后背，都能打断它。",
                                "touch": "它说话时摸一下后背可以打断它。", "off": ""}[loop.barge_in]
                        print(f"—— 小懒在听（{recognizer.name} 识别，{services.synthesizer.name} "
                              f"说话）。可以玩：{names}。{stop}Ctrl-C 退出。", flush=True)
                        if await _listen(loop, changes, seen, lines, robot, trace, args.sim_speed,
                                         room):
                            nursery.cancel_scope.cancel()
                            return
                    settings = await _reload(services, settings, trace)
                    assert services.synthesizer is not None
                    voice.synthesizer = services.synthesizer
    finally:
        with trio.CancelScope(shield=True):
            await services.aclose()


async def _listen(
    loop: VoiceLoop,
    changes: _Changes,
    seen: int,
    lines: list[str] | None,
    robot: SdkRobot,
    trace: Trace,
    speed: float,
    room: Room,
) -> bool:
    """Listen until the voice settings change (False) or the scenario is over (True)."""
    over = False
    async with trio.open_nursery() as nursery:
        await nursery.start(loop.run)

        async def stop_on_change() -> None:
            await changes.wait(seen)
            nursery.cancel_scope.cancel()

        nursery.start_soon(stop_on_change)
        if lines is not None:
            device = getattr(robot, "device", None)
            assert device is not None, "--say-file is checked to come with --robot sim"
            mouth = await child_voice(room)
            await say_into_microphone(
                loop, device.audio.microphone, lines, mouth.synthesize, trace=trace, speed=speed
            )
            print("—— 剧本说完了。", flush=True)
            over = True
            nursery.cancel_scope.cancel()
    return over


async def _reload(services: VoiceServices, settings: VoiceSettings, trace: Trace) -> VoiceSettings:
    """The voice settings as saved now, opened; the old ones (still open) when they fail."""
    try:
        fresh = await trio.to_thread.run_sync(load_voice_settings)
        await services.open(fresh)
    except (SettingsError, VoiceError) as exc:
        print(f"agentcade run: 新的语音设置用不了（{exc}），还用原来的。", file=sys.stderr, flush=True)
        return settings
    for secret in fresh.secrets():
        trace.add_secret(secret)
    trace.record("voice_settings_changed", asr=fresh.asr.provider or None, tts=fresh.tts.provider)
    print("—— 语音设置改好了，换用新的设置。", flush=True)
    return fresh


async def _watch_shutdown(path: Path, scope: trio.CancelScope) -> None:
    """The Daemon asks the Application to stop by creating ``path``; it kills it after 3 s."""
    signal = trio.Path(path)
    while not await signal.exists():  # noqa: ASYNC110 - a file is the Daemon's signal: poll it
        await trio.sleep(SHUTDOWN_POLL)
    print("—— 收到停止请求，正在退出。", flush=True)
    scope.cancel()


def _voice_trace_printer(rec: dict[str, object]) -> None:
    kind = rec["type"]
    if kind in ("asr_final", "barge_in", "asr_failed", "tts_failed", "utterance",
                "microphone_failed", "directive_skipped", "game_error"):
        shown = {k: v for k, v in rec.items() if k not in ("type", "ts")}
        print(f"[trace] {kind} {shown}", file=sys.stderr, flush=True)
