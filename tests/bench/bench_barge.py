"""Talking over the robot: false barge-ins from its own voice, and a child who interrupts it.

Run: ``.venv/bin/python tests/bench/bench_barge.py [--sentences 100] [--overlaps 40]
[--speed 1] [--voices neural|espeak] [--loads 0,2] [--modes hold,hard] [--in-loop]`` (several minutes at real
time per load). The robot and the child speak with the neural voice (the child at a child's
pitch) unless ``--voices espeak``.

``--loads``: the whole bench once per number of CPU-bound processes beside it
(:func:`agentcade.testing.load.cpu_load`; on two cores, 2 make a load average of about 4: a
busy desktop), in one run. The simulated robot runs in a process of its own
(:mod:`agentcade.sim.process`), as a real robot runs beside its host, unless
``--in-loop`` (in the host's event loop, as ``run --robot sim`` has it): how often the
device itself fell behind is printed (``sim_behind``), so its lateness is not taken for
the host's.

The simulated robot in a room with fan noise (RMS 700) that returns 0.3 of its own voice
into its microphone (70 ms late, short reverb). Real parts: the robot SDK over a socket, the
microphone's Opus frames, :class:`~agentcade.voice.speaker.VoiceRobot` (espeak-ng), the
echo canceller (WebRTC AEC3 from livekit) and Silero detection in
the :class:`~agentcade.voice.listener.Listener`, exactly as ``run`` wires them.

1. ``--sentences`` game sentences are spoken with nobody talking: every utterance the
   listener starts while the robot speaks is a false barge-in.
2. ``--overlaps`` times at each loudness (×1 and ×0.25), a child's line starts at a random
   point of a robot sentence: counted when the robot is stopped, with the time from the
   child's first sound to the robot's silence (audio time), and whether the utterance
   given to the recogniser holds the whole line.

Also printed: CPU per 10 ms frame of echo cancellation and of voice detection (wall time
of each call on the host's own thread: the simulated robot shares the two cores).

``--capture FILE`` keeps every microphone frame, clip and stop (the robot is then never
stopped) for ``tests/bench/replay_barge.py``, which judges other settings on that sound.

A line that did not stop the robot is named with what the listener made of it: never heard,
or held (the robot paused) then released at how many ms of voice.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import random
import statistics
import tempfile
import time
from collections.abc import AsyncIterable, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from agentcade.core.trace import Trace
from agentcade.sim import SimDevice, WallClock, open_sim_robot
from agentcade.sim.child import child_voice
from agentcade.sim.process import open_sim_process_robot
from agentcade.sim.room import parse_room
from agentcade.testing.load import cpu_load
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.listener import Listener
from agentcade.voice.pcm import leading_silence
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import EspeakSynthesizer, NeuralSynthesizer, Synthesizer

ROBOT = [
    "我想好了一个一到二十之间的数，你有五次机会，猜猜看吧。",
    "不对哦，比十还大不少，你还有四次机会。",
    "汤面是这样的：一个男人走进餐厅，点了一碗海龟汤，喝了一口就哭了。",
    "画好啦，就在屏幕上。你猜这是什么动物？",
    "谜面是：小小一间房，只开一扇窗，你猜是什么？",
]
CHILD = ["结束游戏", "不知道", "我猜十五", "是小猫吗", "给我一点提示", "七"]


class Ears:
    """A recogniser that keeps what it was given (how long each utterance was)."""

    name = "ears"

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        total = 0
        async for chunk in audio:
            total += len(chunk)
        self.seconds.append(total / 32000)
        return ""

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


async def bench(
    sentences: int, overlaps: int, speed: float, seed: int, capture: str | None = None,
    voices: str = "neural", loads: tuple[int, ...] = (0,), in_loop: bool = False,
    modes: tuple[str, ...] = ("hold",),
) -> None:
    room = parse_room(f"noise=700,echo=0.3,child={voices}")
    mouth = await child_voice(room)
    child = {line: await mouth.synthesize(line) for line in CHILD}
    robot_voice: Synthesizer = (await NeuralSynthesizer.load() if voices == "neural"
                                else EspeakSynthesizer())
    print(f"voices: robot {robot_voice.name}, child {mouth.name}; the simulated robot "
          f"{'in the host loop' if in_loop else 'in its own process'}")
    for load in loads:
        with cpu_load(load):
            print(f"--- {load} CPU-bound processes beside it (load average now "
                  f"{_loadavg()})")
            path = None if capture is None else (
                capture if len(loads) == 1 else f"{capture}.load{load}")
            for mode in modes:
                if len(modes) > 1:
                    print(f"- {mode}: " + ("a voice over the robot pauses it until confirmed"
                                           if mode == "hold" else "it stops the robot at once"))
                await _one(sentences, overlaps, speed, random.Random(seed), path, room, child,
                           robot_voice, in_loop, mode == "hard")


@asynccontextmanager
async def _open_robot(room: Any, speed: float, in_loop: bool) -> AsyncIterator[Any]:
    if in_loop:
        async with open_sim_robot(device=SimDevice(audio_speed=speed, room=room)) as sim:
            yield sim
    else:
        async with open_sim_process_robot(room=room, speed=speed) as sim:
            yield sim


def _loadavg() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):  # Windows
        return "unknown"


async def _one(
    sentences: int, overlaps: int, speed: float, rng: random.Random, capture: str | None,
    room: Any, child: dict[str, bytes], robot_voice: Synthesizer, in_loop: bool, hard: bool,
) -> None:
    async with _open_robot(room, speed, in_loop) as sim:
        device = sim.device
        records: list[dict[str, Any]] = []
        voice = VoiceRobot(sim, robot_voice, print_speech=False, trace=Trace(records.append))
        echo = EchoCanceller()
        events: list[tuple[object, ...]] | None = [] if capture else None
        if events is not None:
            echo = _Recorder(echo, events)  # type: ignore[assignment]
        voice.echo = echo
        heard: list[dict[str, Any]] = []
        """The listener's records: what became of each voice over the robot."""
        ears = Ears()
        barged: list[float] = []
        speak_scope: list[trio.CancelScope] = []
        cpu: list[float] = []
        """Seconds per 10 ms frame of echo cancellation, each microphone frame."""
        detection: list[float] = []
        """The same, of voice detection (both Silero models: the output and the microphone)."""

        started: list[float] = []
        detail: list[str] = []

        def barge_in() -> None:
            barged.append(trio.current_time())
            into = (barged[-1] - started[-1]) * speed * 1000 if started else float("nan")
            detail.append(f"{into:.0f} ms into sentence {len(started)}: {echo.loudness:.2f}x "
                          f"the echo, converged {echo.converged}, onset {echo.onset}")
            if events is not None:  # capturing: the robot is never stopped
                return
            voice.drop_hold()  # the canceller is told once the robot has stopped, by the voice
            for scope in speak_scope:
                scope.cancel()

        def hold() -> None:
            if events is None and not hard:
                voice.hold()

        async with voice.audio.microphone() as mic, trio.open_nursery() as nursery:
            send, frames = trio.open_memory_channel[bytes](math.inf)

            async def relay() -> None:
                async for frame in mic:
                    echo.arrived(frame.data, at=frame.at, missing=frame.missing)
                    send.send_nowait(frame.data)

            nursery.start_soon(relay)
            listener = Listener(frames, ears, echo=echo, speaking=lambda: voice.speaking,
                                on_barge_in=barge_in, on_hold=None if hard else hold,
                                on_release=voice.release, trace=Trace(heard.append))
            original = echo.process

            def timed(frame: bytes, *, now: float | None = None) -> bytes:
                t0 = time.perf_counter()
                out = original(frame, now=now)
                cpu.append((time.perf_counter() - t0) / max(1, len(frame) // 320))
                return out

            echo.process = timed  # type: ignore[method-assign]
            detector = listener._detector
            feed = detector.feed

            def timed_feed(frame: bytes, mic: bytes | None = None) -> Any:
                t0 = time.perf_counter()
                step = feed(frame, mic)
                detection.append((time.perf_counter() - t0) / max(1, len(frame) // 320))
                return step

            detector.feed = timed_feed  # type: ignore[method-assign]

            async def listen() -> None:
                while True:
                    await listener.hear()

            nursery.start_soon(listen)
            await trio.sleep(1.0)

            async def say(text: str) -> None:
                with trio.CancelScope() as scope:
                    speak_scope.append(scope)
                    try:
                        await voice.speak(text)
                    finally:
                        speak_scope.remove(scope)

            if events is not None:
                events.append(("phase", "alone"))
            # 1. The robot alone.
            false = 0
            holds_before = voice.holds
            for i in range(sentences):
                before = len(barged)
                started.append(trio.current_time())
                await say(ROBOT[i % len(ROBOT)])
                false += len(barged) > before
                await trio.sleep(0.3 / speed)
            paused = [r["paused_ms"] for r in records if r["type"] == "speech_resumed"]
            print(f"robot sentences with nobody talking: {sentences}; false barge-ins: {false} "
                  f"(fan noise RMS 700, echo 0.3, sim at {speed:g}x); paused for its own "
                  f"voice and went on: {voice.holds - holds_before - false}"
                  + (f" (paused p50 {statistics.median(paused):.0f} ms, max {max(paused)})"
                     if paused else ""))
            for line in detail:
                print(f"  false barge-in {line}")
            if events is not None:
                events.append(("phase", "child"))
            # 2. A child talking over it.
            for gain in (1.0, 0.25) if overlaps else ():
                stopped, latencies, whole = 0, [], 0
                missed: list[str] = []
                for i in range(overlaps):
                    line = CHILD[i % len(CHILD)]
                    pcm = _scaled(child[line], gain)
                    before, heard_before = len(barged), len(ears.seconds)
                    told = len(heard)
                    clips = len(device.audio.clips)
                    async with trio.open_nursery() as inner:
                        inner.start_soon(say, ROBOT[i % len(ROBOT)])
                        await device.audio.wait_clips(clips + 1)
                        clip = device.audio.clips[clips]
                        await device.audio.wait_sound(clip)
                        await trio.sleep(rng.uniform(0.3, 1.8) / speed)
                        onset = trio.current_time()
                        if events is not None:
                            events.append(("onset", gain, len(pcm) // 2))
                        device.audio.microphone.feed(pcm + bytes(32000))
                    # The reply is said in pieces (its first clause alone): the one sounding
                    # when the child spoke is the one stopped.
                    mine = device.audio.clips[clips:]
                    for piece in mine:
                        await device.audio.wait_done(piece)
                    cut = [p for p in mine if p.outcome == "aborted" and p.ended is not None
                           and p.ended >= onset]
                    if len(barged) > before and cut:
                        stopped += 1
                        latencies.append((cut[0].ended - onset) * speed * 1000
                                         - 1000 * leading_silence(pcm, 16000))
                    else:
                        missed.append(f"{line} ({_what_became(heard[told:])})")
                    with trio.move_on_after(10):
                        while len(ears.seconds) <= heard_before:  # noqa: ASYNC110 - a poll
                            await trio.sleep(0.05)
                    if len(ears.seconds) > heard_before and ears.seconds[-1] >= len(pcm) / 32000:
                        whole += 1
                    await device.audio.microphone.drained()
                    await trio.sleep(0.8 / speed)
                p50 = statistics.median(latencies) if latencies else float("nan")
                print(f"child x{gain:g} over the robot: stopped {stopped}/{overlaps} "
                      f"({100 * stopped / overlaps:.0f}%); first sound -> silence p50 {p50:.0f} ms"
                      f" (max {max(latencies, default=float('nan')):.0f}); utterance holds the "
                      f"whole line {whole}/{overlaps}"
                      + (f"; not stopped by {'、'.join(missed)}" if missed else ""))
            print(f"CPU per 10 ms frame: echo cancellation {statistics.mean(cpu) * 1000:.3f} ms "
                  f"mean ({_p90(cpu) * 1000:.3f} p90), voice detection "
                  f"{statistics.mean(detection) * 1000:.3f} ms mean "
                  f"({_p90(detection) * 1000:.3f} p90)")
            behind = device.audio.behind
            print(f"the simulated robot fell behind {len(behind)} times"
                  + (f" (worst {max(w for w, _ in behind) * 1000:.0f} ms, "
                     f"{sum(n for _, n in behind)} frames late)" if behind else ""))
            if capture and events is not None:
                await trio.Path(capture).write_bytes(pickle.dumps(events))
                print(f"captured {len(events)} events to {capture}")
            nursery.cancel_scope.cancel()


class _Recorder:
    """An echo canceller that also keeps, in order, every frame that arrived, every clip
    played and every stop (``--capture``: replayed through other settings without the sim)."""

    def __init__(self, echo: EchoCanceller, events: list[tuple[object, ...]]) -> None:
        self._echo = echo
        self._events = events
        self.process = echo.process

    def __getattr__(self, name: str) -> Any:
        return getattr(self._echo, name)  # what the listener reads of the canceller

    def arrived(self, frame: bytes, *, at: float | None = None, missing: int = 0) -> None:
        self._events.append(("mic", frame, at, missing))
        self._echo.arrived(frame, at=at, missing=missing)

    def play(self, pcm: bytes, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        self._events.append(("play", pcm, now))
        self._echo.play(pcm, now=now)

    def stop(self, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        self._events.append(("stop", now))
        self._echo.stop(now=now)


def _what_became(records: list[dict[str, Any]]) -> str:
    """What the listener made of a voice over the robot, from its records."""
    said = []
    for r in records:
        if r["type"] == "speech_over_robot":
            said.append(("held" if r["held"] else "stopped")
                        + (" on a clean microphone" if r.get("clean") else ""))
        elif r["type"] in ("barge_in_released", "barge_in_confirmed"):
            said.append(f"{r['type'].removeprefix('barge_in_')} at {r['voiced_ms']} ms")
    return ", ".join(said) or "never heard"


def _scaled(pcm: bytes, gain: float) -> bytes:
    from array import array

    samples = array("h", pcm)
    return array("h", (max(-32768, min(32767, int(s * gain))) for s in samples)).tobytes()


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[8] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--overlaps", type=int, default=40)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--voices", choices=("neural", "espeak"), default="neural",
                        help="the robot's and the child's voices (default neural)")
    parser.add_argument("--capture", help="keep the microphone, clips and stops in this file "
                        "(the robot is then never stopped; .loadN added with several loads)")
    parser.add_argument("--loads", default="0",
                        help="CPU-bound processes beside it, one run each: e.g. 0,2")
    parser.add_argument("--modes", default="hold",
                        help="hold (a voice over the robot pauses it until confirmed), hard "
                        "(it stops the robot at once), or both in one run: hold,hard")
    parser.add_argument("--in-loop", action="store_true",
                        help="the simulated robot in the host's loop, not in its own process")
    args = parser.parse_args()
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp(prefix="agentcade-bench-"))
    loads = tuple(int(n) for n in args.loads.split(","))
    trio.run(bench, args.sentences, args.overlaps, args.speed, args.seed, args.capture,
             args.voices, loads, args.in_loop, tuple(args.modes.split(",")), clock=WallClock())


if __name__ == "__main__":
    main()
