"""``agentcade run``: the family talks to the robot — microphone, ASR, main agent, games, TTS.

The same main agent, games and output queue as ``play`` (``wiring.pipeline``), with voice
in and out (``wiring.voice.VoiceLoop``): the robot greets, names each game, listens on its
microphone (deaf while it speaks), recognises with the configured ASR and says every reply
with the configured TTS, sentence by sentence. A touch on its back while it speaks stops
the sound and cancels the turn.

Robots: ``--robot app`` (the WatcheRobot Application environment, the default when
``WATCHER_APP_*`` is set; the shutdown file ends it within 3 s, the desktop's microphone
toggle is honoured), ``--robot ws://HOST:PORT`` (next to the Daemon; default
``ws://127.0.0.1:8765``) or ``--robot sim`` (the simulated robot on this machine).
``--say-file FILE`` (with ``--robot sim``) plays a scenario: each non-empty line (``#``
starts a comment) is spoken by espeak-ng into the simulated microphone when the robot
listens; without ``ASR_PROVIDER`` the scenario's lines are recognised by script (there is
no offline Chinese ASR), after a check that the audio heard fits the line.

Exit codes: 0 done (scenario over, shutdown file, Ctrl-C is 130); 1 settings that do not
validate, an unreadable scenario, espeak-ng missing; 2 no ASR configured (one line says
what to set) or options that do not go together; 3 the robot cannot be reached.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import trio

from agentcade.commands._pages import add_pages_options, pages_from_args
from agentcade.commands._trace import add_trace_options, trace_from_args
from agentcade.commands.chat import ConsoleTrace
from agentcade.core.errors import VoiceError
from agentcade.core.settings import SettingsError
from agentcade.core.trace import Trace
from agentcade.device.robots import DEFAULT_DESKTOP_URL, DeviceError, SdkRobot
from agentcade.voice.asr import Recognizer, make_recognizer
from agentcade.voice.bridge import AsyncioBridge
from agentcade.voice.config import VoiceSettings, load_voice_settings
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import EspeakSynthesizer, Synthesizer, make_synthesizer
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.robot import open_robot
from agentcade.wiring.voice import (
    MicGate,
    VoiceLoop,
    follow_desktop_microphone,
    say_into_microphone,
)

NO_ASR = 2
USAGE = 2
UNREACHABLE = 3
APP_GRACE = 1.0
"""Seconds the goodbye may take when the Daemon asks the Application to stop (3 s in all)."""
SHUTDOWN_POLL = 0.1
_APP_ENV = ("WATCHER_APP_DESKTOP_WS_URL", "WATCHER_APP_DEVICE_WS_URL")


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
                        "(espeak-ng), then stop")
    add_trace_options(p, "what is heard and said")
    add_pages_options(p)


def _default_robot() -> str:
    return "app" if all(os.environ.get(v) for v in _APP_ENV) else DEFAULT_DESKTOP_URL


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
    if args.say_file:
        if robot != "sim":
            print("agentcade run: --say-file needs --robot sim (it speaks into the simulated "
                  "microphone)", file=sys.stderr)
            return USAGE
        try:
            lines = read_scenario(Path(args.say_file))
        except (OSError, UnicodeDecodeError) as exc:
            print(f"agentcade run: cannot read {args.say_file}: {exc}", file=sys.stderr)
            return 1
    if settings.missing_asr is not None and lines is None:
        print(f"agentcade run: {settings.missing_asr}", file=sys.stderr)
        return NO_ASR
    try:
        with trace_from_args(args, ConsoleTrace(), _voice_trace_printer) as trace:
            for secret in settings.secrets():
                trace.add_secret(secret)
            trio.run(_run, args, settings, robot, lines, trace)
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


@asynccontextmanager
async def open_voice(
    settings: VoiceSettings, lines: list[str] | None
) -> AsyncIterator[tuple[Recognizer, Synthesizer]]:
    """The recogniser and synthesiser the settings name (scripted for a scenario without
    ``ASR_PROVIDER``), with an asyncio bridge when an SDK provider needs one; all closed."""
    async with AsyncExitStack() as stack:
        sdk = {settings.asr.provider, settings.tts.provider} - {"", "openai", "espeak"}
        bridge: AsyncioBridge | None = None
        if sdk:
            bridge = AsyncioBridge()
            stack.callback(bridge.close)
        recognizer: Recognizer
        if lines is not None and not settings.asr.provider:
            recognizer = ScriptedRecognizer(lines, vad=settings.vad)
        else:
            recognizer = make_recognizer(settings.asr, bridge=bridge)
        stack.push_async_callback(recognizer.aclose)
        synthesizer = make_synthesizer(settings.tts, bridge=bridge)
        stack.push_async_callback(synthesizer.aclose)
        yield recognizer, synthesizer


async def _run(
    args: argparse.Namespace,
    settings: VoiceSettings,
    robot_spec: str,
    lines: list[str] | None,
    trace: Trace,
) -> None:
    app = robot_spec == "app"
    async with open_voice(settings, lines) as (recognizer, synthesizer), open_robot(
        robot_spec, trace=trace
    ) as robot:
        if not isinstance(robot, SdkRobot):
            raise DeviceError("unavailable", "connect", f"{robot_spec} is not a robot with a voice")
        voice = VoiceRobot(robot, synthesizer, trace=trace)
        async with open_pipeline(
            voice, games=args.game, trace=trace, shutdown_grace=APP_GRACE if app else None
        ) as (agent, registry), pages_from_args(args, agent, registry, trace):
            gate = MicGate()
            if app:
                follow_desktop_microphone(robot, gate, agent)
            loop = VoiceLoop(agent, voice, recognizer, vad=settings.vad, trace=trace, gate=gate)
            names = "、".join(g.name for g in registry.games) or "（没有）"
            print(f"—— 小懒在听（{recognizer.name} 识别，{synthesizer.name} 说话）。可以玩：{names}。"
                  "摸一下后背可以打断它。Ctrl-C 退出。", flush=True)
            async with trio.open_nursery() as nursery:
                await nursery.start(loop.run)
                shutdown = os.environ.get("WATCHER_APP_SHUTDOWN_SIGNAL")
                if shutdown:
                    nursery.start_soon(_watch_shutdown, Path(shutdown), nursery.cancel_scope)
                if lines is not None:
                    device = getattr(robot, "device", None)
                    assert device is not None, "--say-file is checked to come with --robot sim"
                    mouth = EspeakSynthesizer(rate=16000)
                    await say_into_microphone(
                        loop, device.audio.microphone, lines, mouth.synthesize, trace=trace
                    )
                    print("—— 剧本说完了。", flush=True)
                    nursery.cancel_scope.cancel()
                else:
                    await trio.sleep_forever()


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
