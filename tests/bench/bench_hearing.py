"""What a child feels: voice to voice with the embedded recogniser, per kind of line.

Run: ``.venv/bin/python tests/bench/bench_hearing.py [--rounds N] [--room SPEC]`` (the voice
extra; a few minutes per round).

Everything is real: the simulated child speaks with the neural voice (a child's pitch) into
the simulated robot's microphone (Opus over the real SDK, in ``--room``), the robot's Silero
detection, the embedded recogniser (Whisper base, biased with what may be said), the main
agent with the offline model, the built-in games, the neural voice on the simulated speaker.

Voice to voice: from the moment the microphone sent the frame holding the child's last
voiced sample to the robot's first reply sample starting at the simulated speaker. Two runs
in one process, the same lines: the robot as it is (recognition starts on a pause, a line
code can act on ends the utterance at once) and the fixed window (recognition after 800 ms
of silence) beside it. Also printed: the share of lines whose every syllable was heard,
of lines routed/judged as meant, and the process CPU per line.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import agentcade.voice.listener as listener_module
from agentcade.core.trace import Trace
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import OfflineMainModel
from agentcade.testing.child import child_voice
from agentcade.testing.ear import heard_share
from agentcade.testing.room import parse_room
from agentcade.testing.sim import SimDevice, open_sim_robot
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import NeuralSynthesizer
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


async def one_run(rounds: int, room: str, recognizer: LocalRecognizer, speculate: bool) -> Run:
    listener_module.SPECULATE_MS = 160 if speculate else 10**9
    records: list[dict[str, object]] = []
    trace = Trace(records.append)
    device = SimDevice(room=parse_room(room)) if room else SimDevice()
    mouth = await child_voice(parse_room(room) if room else None)
    spoken = {line: await mouth.synthesize(line) for _, line, _ in ROUND}
    run = Run()
    async with open_sim_robot(device=device) as sim:
        voice = VoiceRobot(sim, await NeuralSynthesizer.load(), trace=trace, print_speech=False)
        async with open_pipeline(voice, builtin_dir=builtin_games_dir(), remote=[],
                                 model=OfflineMainModel, trace=trace) as (agent, _):
            loop = VoiceLoop(agent, voice, recognizer, trace=trace, greet=False)
            async with running(loop):
                for _ in range(rounds):
                    for kind, line, expected in ROUND:
                        await loop.wait_ready_for_speech()
                        heard_before = len(loop.heard)
                        clips = len(device.audio.clips)
                        first = len(records)
                        cpu = time.process_time()
                        pcm = spoken[line]
                        device.audio.microphone.feed(pcm[:_last_voiced(pcm)])
                        await device.audio.microphone.drained()
                        voice_left = device.audio.microphone.sent_at
                        await loop.wait_heard(heard_before + 1)
                        with trio.move_on_after(30):
                            await device.audio.wait_clips(clips + 1)
                            clip = device.audio.clips[clips]
                            await device.audio.wait_sound(clip)
                            assert clip.started is not None
                            run.v2v[kind].append((clip.started - voice_left) * 1000)
                        await loop.wait_ready_for_speech()
                        run.cpu.append(time.process_time() - cpu)
                        heard = loop.heard[heard_before]
                        run.exact.append(heard_share(line, heard.text) == 1.0)
                        run.early.append(heard.early)
                        ok = _meant(expected, records[first:])
                        run.meant.append(ok)
                        if not ok or not run.exact[-1]:
                            run.misses.append(f"{line} -> {heard.text!r}")
    return run


def report(name: str, run: Run) -> None:
    print(f"\n{name}")
    print(f"  {'line':14} {'n':>3} {'p50 ms':>7} {'p90 ms':>7} {'max ms':>7}")
    for kind in dict.fromkeys(k for k, _, _ in ROUND):
        values = sorted(run.v2v.get(kind, []))
        if values:
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
            print(f"  {kind:14} {len(values):3} {statistics.median(values):7.0f} {p90:7.0f} "
                  f"{values[-1]:7.0f}")
    n = len(run.exact)
    print(f"  every syllable heard {sum(run.exact)}/{n}; routed/judged as meant {sum(run.meant)}/{n}; "
          f"ended early {sum(run.early)}/{n}; CPU per line {statistics.mean(run.cpu) * 1000:.0f} ms "
          f"(p90 {sorted(run.cpu)[int(0.9 * (n - 1))] * 1000:.0f})")
    if run.misses:
        print("  misheard or mis-acted: " + "; ".join(run.misses))


async def main(rounds: int, room: str) -> None:
    recognizer = await LocalRecognizer.load()
    now = await one_run(rounds, room, recognizer, speculate=True)
    fixed = await one_run(rounds, room, recognizer, speculate=False)
    print(f"voice to voice on the simulated robot (real time), {rounds} round(s) of "
          f"{len(ROUND)} lines, room {room or 'quiet'}; os load {os.getloadavg()[0]:.1f}")
    report("answer at once (speculative recognition, early end)", now)
    report("fixed window (recognition after 800 ms of silence)", fixed)
    judged_now = statistics.median(now.v2v["judged answer"])
    judged_fixed = statistics.median(fixed.v2v["judged answer"])
    print(f"\njudged answers p50: {judged_now:.0f} ms vs {judged_fixed:.0f} ms "
          f"({judged_fixed / judged_now:.2f}x faster); target 600 ms: "
          f"{'OK' if judged_now <= 600 else 'OVER'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--room", default="", help="e.g. noise=700,voice=0.25")
    args = parser.parse_args()
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp())
    trio.run(main, args.rounds, args.room)
