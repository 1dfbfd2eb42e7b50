"""What a child feels: voice to voice with the embedded recogniser, per kind of line.

Run: ``.venv/bin/python tests/bench/bench_hearing.py [--rounds N] [--room SPEC]
[--settings now,late,before,fixed]`` (the voice extra; a few minutes per round and setting).

Everything is real: the simulated child speaks with the neural voice (a child's pitch) into
the simulated robot's microphone (Opus over the real SDK, in ``--room``), the robot's Silero
detection, the embedded recogniser (Whisper base, biased with what may be said), the main
agent with the offline model, the built-in games, the neural voice on the simulated speaker.

Voice to voice: from the moment the microphone sent the frame holding the child's last
voiced sample to the robot's first reply sound at the simulated speaker (its clip's first
sample, and the silence the clip begins with). Each line begins at a random point of a
60 ms microphone frame, the same for every setting: the voice's end falls anywhere in a
frame, as a family's does. One
robot and one pipeline; each round the lines are said once per setting (``--settings``), in
turn: ``now``, the robot as it is (recognition starts on a pause, a line code can act on ends
the utterance at once; its voice says a reply's first clause as soon as it is synthesised and
what it said or was given ahead at once); ``late``, the same with the voice as before issue
55 (each sentence synthesised when it is to be said, the first one whole, nothing kept or
prepared); ``before``, the pause it had before (96 ms: the second microphone frame);
``fixed``, the fixed window (recognition after 800 ms of silence). Also printed: where the time went, step
by step, from the trace (:func:`_steps`); the share of lines whose every syllable was heard,
of lines routed/judged as meant, the process CPU per line, and the recognitions started on a
pause per line.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import agentcade.voice.local_asr as local_asr
from agentcade.core.trace import Trace
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import OfflineMainModel
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.sim.audio import MIC_FRAME_BYTES, SimClip
from agentcade.sim.child import child_voice
from agentcade.sim.room import parse_room
from agentcade.testing.ear import heard_share
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.voice.pcm import leading_silence
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import NeuralSynthesizer
from agentcade.voice.tuning import TUNING
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.voice import VoiceLoop, running

ROUND = [
    ("start", "玩猜数字", "start"),
    ("judged answer", "我猜十", "judged"),
    ("judged answer", "七", "judged"),
    ("judged answer", "十五", "judged"),
    ("chat", "你今天开心吗", "forward"),
    ("end", "结束游戏", "end"),
    ("start", "玩猜谜语", "start"),
    ("judged answer", "是不是彩虹", "judged"),
    ("end", "结束游戏", "end"),
    ("chat", "有什么游戏", "list"),
]


@dataclass
class Run:
    v2v: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    exact: list[bool] = field(default_factory=list)
    meant: list[bool] = field(default_factory=list)
    early: list[bool] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    speculations: list[int] = field(default_factory=list)
    """Recognitions started on a pause, per line (the one used and those dropped)."""
    unheard: int = 0
    """Lines the robot never heard (no utterance in 15 s: a quiet child under the fan)."""
    steps: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    """Per kind of line, each step's ms (see :func:`_steps`)."""


STEPS = ("voice gone", "recognise", "route+game", "synthesise", "to speaker", "silence")
PARTS = ("(synthesis)", "(reference)")
"""Parts of "synthesise": the voice's own time and the echo reference's resampling
(``speech_start``'s synth_ms, reference_ms); the rest is the hops to the player."""


def _steps(records: list[dict[str, object]], voice_left: float, sound: float,
           sounded: float) -> dict[str, float]:
    """Where one line's voice-to-voice went, from the trace (wall-clock ``ts``):

    * voice gone: the last voiced sample sent -> recognition of it starts (``asr_speculate``;
      with the fixed window, the utterance's end, ``speech_heard``): the Opus link, Silero
      calling the voice gone, the pause (``Tuning.speculate_ms``) or the silence window;
    * recognise: -> the text is known (``speech_heard`` of an early end, else ``asr_final``);
    * route+game: -> the reply's text reaches the voice (``speech_text``);
    * synthesise: -> its first sentence starts to play (``speech_start``: synthesis, the echo
      reference, the hop to the player);
    * to speaker: -> its first sample at the simulated speaker (``audio.play``'s round trip);
    * silence: -> its first sound (the silence the clip begins with).
    """
    def first(kind: str, after: float = 0.0) -> float | None:
        for r in records:
            if r["type"] == kind and float(r["ts"]) >= after:  # type: ignore[arg-type]
                return float(r["ts"])  # type: ignore[arg-type]
        return None

    heard = first("speech_heard")
    final = first("asr_final")
    if heard is None or final is None:
        return {}
    speculated = [float(r["ts"]) for r in records  # type: ignore[arg-type]
                  if r["type"] == "asr_speculate" and float(r["ts"]) <= heard]  # type: ignore[arg-type]
    early = any(r["type"] == "speech_heard" and r.get("early") for r in records)
    began = speculated[-1] if early and speculated else heard
    known = heard if early else final
    text = first("speech_text", known)
    start = first("speech_start", known)
    if text is None or start is None:
        return {}
    marks = [voice_left, began, known, text, start, sound, sounded]
    steps = {name: (b - a) * 1000 for name, a, b in zip(STEPS, marks, marks[1:], strict=False)}
    said = next(r for r in records if r["type"] == "speech_start" and float(r["ts"]) == start)  # type: ignore[arg-type]
    steps[PARTS[0]] = float(said["synth_ms"])  # type: ignore[arg-type]
    steps[PARTS[1]] = float(said.get("reference_ms", 0))  # type: ignore[arg-type]
    return steps


def _last_voiced(pcm: bytes) -> int:
    """Bytes up to the end of the last 10 ms window with a voice in it."""
    import numpy as np

    samples = np.frombuffer(pcm, "<i2").astype(np.float32)
    windows = samples[: len(samples) // 160 * 160].reshape(-1, 160)
    loud = np.sqrt((windows ** 2).mean(axis=1))
    voiced = np.nonzero(loud > 0.05 * loud.max())[0]
    return int(voiced[-1] + 1) * 320 if voiced.size else len(pcm)


def _meant(expected: str, records: list[dict[str, object]]) -> bool:
    routes = [r["route"] for r in records if r["type"] == "main_route"]
    if expected == "judged":
        return bool(routes) and routes[0] == "forward" and any(
            r["type"] == "directive_executed" and r.get("call") == "motion.move_to" for r in records)
    return bool(routes) and routes[0] == expected


@dataclass(frozen=True)
class Setting:
    """How the robot listens in one run: the pause before recognising (``Tuning.speculate_ms``; none:
    the fixed window) and the recogniser's context and first beam (``local_asr``)."""

    name: str
    speculate_ms: int
    frames: int
    beam: int
    ahead: bool = True
    """The voice says what it said before without synthesising it again, and a reply's
    first clause as soon as it is synthesised, from its voice (False: the first sentence
    whole, with the voice's lead of silence, every sentence synthesised when it is to be
    said: the robot before issue 55)."""

    def apply(self, loop: VoiceLoop) -> None:
        if loop.listener is not None:
            loop.listener.tuning = replace(TUNING, speculate_ms=self.speculate_ms)
        local_asr.MIN_FRAMES, local_asr.BEAM = self.frames, self.beam
        loop.robot.first_sound_sooner = self.ahead
        if isinstance(loop.robot.synthesizer, NeuralSynthesizer):
            loop.robot.synthesizer.said.enabled = self.ahead


NOW = Setting("answer at once (speculative recognition, early end)", TUNING.speculate_ms,
              local_asr.MIN_FRAMES, local_asr.BEAM)
LATE = Setting("synthesised when said (nothing kept, the first sentence whole, its 40 ms lead)",
               TUNING.speculate_ms, local_asr.MIN_FRAMES, local_asr.BEAM, ahead=False)
BEFORE = Setting("as before (a 96 ms pause)", 96, local_asr.MIN_FRAMES, local_asr.BEAM)
FIXED = Setting("fixed window (recognition after 800 ms of silence)", 10**9,
                local_asr.MIN_FRAMES, local_asr.BEAM)


async def one_run(rounds: int, room: str, recognizer: LocalRecognizer,
                  settings: list[Setting]) -> dict[str, Run]:
    """``rounds`` rounds of the lines, each round said once with every setting in turn (one
    robot, one pipeline: the load of the moment falls on every setting alike)."""
    records: list[dict[str, object]] = []
    trace = Trace(records.append)
    device = SimDevice(room=parse_room(room)) if room else SimDevice()
    mouth = await child_voice(parse_room(room) if room else None)
    spoken = {line: await mouth.synthesize(line) for _, line, _ in ROUND}
    runs = {setting.name: Run() for setting in settings}
    rng = random.Random(7)  # the same phases for every setting: line i of round r
    phases = [[2 * rng.randrange(MIC_FRAME_BYTES // 2) for _ in ROUND] for _ in range(rounds)]
    offset = time.time() - trio.current_time()  # trace ts are wall-clock, the sim's trio time
    async with open_sim_robot(device=device) as sim:
        voice = VoiceRobot(sim, await NeuralSynthesizer.load(), trace=trace, print_speech=False)
        async with open_pipeline(voice, builtin_dir=builtin_games_dir(), remote=[],
                                 model=OfflineMainModel, trace=trace) as (agent, _):
            loop = VoiceLoop(agent, voice, recognizer, trace=trace, greet=False)
            async with running(loop):
                for r in range(rounds):
                    for setting in settings:
                        setting.apply(loop)
                        run = runs[setting.name]
                        for i, (kind, line, expected) in enumerate(ROUND):
                            await loop.wait_ready_for_speech()
                            heard_before = len(loop.heard)
                            clips = len(device.audio.clips)
                            first = len(records)
                            cpu = time.process_time()
                            pcm = spoken[line]
                            # Each line begins anywhere in a 60 ms microphone frame: where
                            # its voice ends in its last frame decides whether Silero hears
                            # the silence in that frame or the next (voice gone ~5-65 or
                            # ~65-125 ms), and a family's lines fall anywhere.
                            phase = bytes(phases[r][i])
                            device.audio.microphone.feed(phase + pcm[:_last_voiced(pcm)])
                            await device.audio.microphone.drained()
                            voice_left = device.audio.microphone.sent_at
                            with trio.move_on_after(15) as waiting:
                                await loop.wait_heard(heard_before + 1)
                            if waiting.cancelled_caught:  # a quiet line the robot never heard
                                run.misses.append(f"{line} -> never heard")
                                run.unheard += 1
                                continue
                            clip: SimClip | None = None
                            with trio.move_on_after(30):
                                await device.audio.wait_clips(clips + 1)
                                clip = device.audio.clips[clips]
                                await device.audio.wait_sound(clip)
                            await loop.wait_ready_for_speech()
                            if clip is not None and clip.started is not None:
                                sounded = clip.started + leading_silence(clip.pcm, 24000)
                                run.v2v[kind].append((sounded - voice_left) * 1000)
                                for step, ms in _steps(records[first:], voice_left + offset,
                                                       clip.started + offset,
                                                       sounded + offset).items():
                                    run.steps[kind][step].append(ms)
                            run.cpu.append(time.process_time() - cpu)
                            run.speculations.append(sum(
                                r["type"] == "asr_speculate" for r in records[first:]))
                            heard = loop.heard[heard_before]
                            run.exact.append(heard_share(line, heard.text) == 1.0)
                            run.early.append(heard.early)
                            ok = _meant(expected, records[first:])
                            run.meant.append(ok)
                            if not ok or not run.exact[-1]:
                                run.misses.append(f"{line} -> {heard.text!r}")
    return runs


def report(name: str, run: Run) -> None:
    print(f"\n{name}")
    print(f"  {'line':14} {'n':>3} {'p50 ms':>7} {'p90 ms':>7} {'max ms':>7}")
    for kind in dict.fromkeys(k for k, _, _ in ROUND):
        values = sorted(run.v2v.get(kind, []))
        if values:
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
            print(f"  {kind:14} {len(values):3} {statistics.median(values):7.0f} {p90:7.0f} "
                  f"{values[-1]:7.0f}")
    print(f"  where it went, p50 ms: {'line':14} " + " ".join(f"{s:>11}" for s in STEPS + PARTS))
    for kind, steps in run.steps.items():
        print(f"  {'':22}{kind:14} " + " ".join(
            f"{statistics.median(steps[s]):11.0f}" if steps[s] else f"{'-':>11}"
            for s in STEPS + PARTS))
    n = len(run.exact)
    if run.unheard:
        print(f"  never heard: {run.unheard} of {n + run.unheard} lines (not counted below)")
    if not n:
        return
    print(f"  every syllable heard {sum(run.exact)}/{n}; routed/judged as meant {sum(run.meant)}/{n}; "
          f"ended early {sum(run.early)}/{n}; CPU per line {statistics.mean(run.cpu) * 1000:.0f} ms "
          f"(p90 {sorted(run.cpu)[int(0.9 * (n - 1))] * 1000:.0f}); recognitions on a pause "
          f"per line {statistics.mean(run.speculations):.1f}")
    if run.misses:
        print("  misheard or mis-acted: " + "; ".join(run.misses))


SETTINGS = {"now": NOW, "late": LATE, "before": BEFORE, "fixed": FIXED}


async def main(rounds: int, room: str, names: list[str]) -> None:
    recognizer = await LocalRecognizer.load()
    settings = [SETTINGS[name] for name in names]
    load = os.getloadavg()[0]
    runs = await one_run(rounds, room, recognizer, settings)
    print(f"voice to voice on the simulated robot (real time), {rounds} round(s) of "
          f"{len(ROUND)} lines per setting, the settings in turn each round, room "
          f"{room or 'quiet'}; os load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    for setting in settings:
        report(setting.name, runs[setting.name])
    judged = {s.name: statistics.median(runs[s.name].v2v["judged answer"] or [math.nan])
              for s in settings}
    now = judged[NOW.name]
    print(f"\njudged answers p50: {now:.0f} ms; " + "; ".join(
        f"{judged[s.name]:.0f} ms {s.name.split(' (')[0]} ({judged[s.name] / now:.2f}x)"
        for s in settings[1:]) + f"; target 600 ms: {'OK' if now <= 600 else 'OVER'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--room", default="", help="e.g. noise=700,voice=0.25")
    parser.add_argument("--settings", default="now,fixed",
                        help="in turn each round, the first the reference of the ratios: now (the "
                             "robot as it is), late (its voice as before issue 55), before (the "
                             "96 ms pause it had before), fixed (the 800 ms window)")
    args = parser.parse_args()
    names = args.settings.split(",")
    if names[0] != "now" or not set(names) <= set(SETTINGS):
        parser.error(f"--settings: now first, then any of {', '.join(SETTINGS)}")
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp())
    trio.run(main, args.rounds, args.room, names)
