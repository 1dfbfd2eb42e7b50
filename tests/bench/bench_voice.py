"""How soon the robot answers by voice: end of speech -> first audio, per kind of line.

Run: ``.venv/bin/python tests/bench/bench_voice.py [--rounds N]`` (needs espeak-ng; a few
minutes).

Everything real but the recogniser: the simulated robot (microphone frames as Opus over
the real SDK, the speaker with credits and sha256, head moves that take their time), Silero
voice detection, the main agent with the offline model, the built-in games (猜数字, 你画我猜),
the output queue, espeak-ng speaking for the child and for the robot. The recogniser is
the scripted one (it knows the line; ``--asr-ms`` adds a provider's latency, default 0),
so what is measured is agentcade's own path plus espeak-ng's synthesis of the first sentence.

Per line: speech end (the detector heard ``silence_ms`` of silence) -> the first audio
frame at the simulated device. For a judged guess it also says whether the head was moving
while the verdict was spoken; for a drawing start whether the drawing was complete before
画好啦 was said. Lines: a start, judged guesses and the end of 猜数字; a start, an answer and
the end of 你画我猜; chit-chat outside a game.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict

import trio

from agentcade.core.trace import Trace
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import OfflineMainModel
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import EspeakSynthesizer
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.voice import VoiceLoop, running

ROUND = [
    ("start 猜数字", "玩猜数字"),
    ("judged guess", "十"),
    ("judged guess", "五"),
    ("judged guess", "十五"),
    ("end", "结束游戏"),
    ("start 你画我猜", "玩你画我猜"),
    ("judged answer", "是小猫吗"),
    ("end", "结束游戏"),
    ("chit-chat", "有什么游戏"),
]


async def bench(rounds: int, asr_ms: int, speed: float) -> None:
    records: list[dict[str, object]] = []

    def sink(rec: dict[str, object]) -> None:
        rec = dict(rec)
        rec["ts"] = time.time()  # the trace rounds to ms; keep full precision here
        records.append(rec)

    trace = Trace(sink)
    device = SimDevice(audio_speed=speed)
    plan = ROUND * rounds
    mouth = EspeakSynthesizer(rate=16000)
    spoken = {line: await mouth.synthesize(line) for _, line in ROUND}
    totals: dict[str, list[float]] = defaultdict(list)
    moving: list[bool] = []
    drawn_first: list[bool] = []
    async with open_sim_robot(device=device) as sim:
        voice = VoiceRobot(sim, EspeakSynthesizer(), trace=trace, print_speech=False)
        recognizer = ScriptedRecognizer([line for _, line in plan], latency=asr_ms / 1000)
        async with open_pipeline(voice, builtin_dir=builtin_games_dir(), remote=[],
                                 model=OfflineMainModel, trace=trace) as (agent, _):
            loop = VoiceLoop(agent, voice, recognizer, trace=trace, greet=False)
            async with running(loop):
                offset = time.time() - trio.current_time()
                for i, (kind, line) in enumerate(plan):
                    await loop.wait_ready_for_speech()
                    clips = len(device.audio.clips)
                    first_record = len(records)
                    device.audio.microphone.feed(spoken[line] + bytes(32000))
                    await loop.wait_heard(i + 1)
                    await device.audio.wait_clips(clips + 1)
                    clip = device.audio.clips[clips]
                    await device.audio.wait_sound(clip)
                    assert clip.started is not None
                    first_audio = clip.started + offset
                    await loop.wait_ready_for_speech()
                    heard = loop.heard[i]
                    mine = records[first_record:]
                    moves = [r for r in mine if r["type"] == "directive_executed"
                             and r["call"] == "motion.move_to"]
                    if kind.startswith("judged"):
                        if not moves:  # the guess ended the game earlier: not judged now
                            continue
                        moving.append(any(_ts(r) - _ms(r) / 1000 <= first_audio + 0.05
                                          and _ts(r) >= first_audio for r in moves))
                    if kind == "start 你画我猜":
                        drawn = [_ts(r) for r in mine if r["type"] == "directive_executed"
                                 and str(r["call"]).startswith("expression_runtime")]
                        done_at = [_ts(r) for r in mine if r["type"] == "speech_start"
                                   and str(r["sentence"]).startswith("画好啦")]
                        drawn_first.append(bool(drawn and done_at) and max(drawn) <= done_at[0])
                    totals[kind].append((first_audio - heard.speech_end) * 1000)
    print(f"voice latency on the simulated robot ({speed:g}x), {rounds} rounds; scripted ASR "
          f"+{asr_ms} ms, espeak-ng TTS; speech end -> first audio at the device")
    print(f"{'line':18} {'n':>3} {'p50 ms':>8} {'p90 ms':>8} {'max ms':>8}")
    for kind in dict.fromkeys(k for k, _ in ROUND):
        values = totals.get(kind, [])
        if values:
            print(f"{kind:18} {len(values):3} {statistics.median(values):8.0f} "
                  f"{_p90(values):8.0f} {max(values):8.0f}")
    guesses = totals["judged guess"] + totals["judged answer"]
    if guesses:
        p50 = statistics.median(guesses)
        print(f"judged lines p50 {p50:.0f} ms: {'OK' if p50 <= 300 else 'OVER'} (target 300 ms)")
    print(f"head moving while the verdict is spoken: {sum(moving)}/{len(moving)}")
    print(f"drawing complete before 画好啦: {sum(drawn_first)}/{len(drawn_first)}")


def _everything_before_the_text() -> None:
    from agentcade.main.output import OutputQueue

    split = OutputQueue._split

    def before_only(self, directives, game, remote):
        before, along, after = split(self, directives, game, remote)
        return [*before, *along, *after], [], []

    OutputQueue._split = before_only  # type: ignore[method-assign]


def _ts(record: dict[str, object]) -> float:
    value = record["ts"]
    assert isinstance(value, float | int)
    return float(value)


def _ms(record: dict[str, object]) -> float:
    value = record.get("ms", 0)
    assert isinstance(value, float | int)
    return float(value)


def _p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--asr-ms", type=int, default=0)
    parser.add_argument("--speed", type=float, default=2.0,
                        help="how much faster than real time the simulated robot runs")
    parser.add_argument("--reference", action="store_true",
                        help="the reference run: every directive before the text, as before "
                             "reactions overlapped speech (the head shake first, then the verdict)")
    args = parser.parse_args()
    if args.reference:
        _everything_before_the_text()
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp(prefix="agentcade-bench-"))
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        os.environ.pop(name, None)
    trio.run(bench, args.rounds, args.asr_ms, args.speed)


if __name__ == "__main__":
    main()
