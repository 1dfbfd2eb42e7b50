"""How long from the end of speech to the robot's first sound, and how much of it is ours.

Run: ``.venv/bin/python tests/bench/bench_voice.py [--rounds N]`` (about a minute).

Everything real except the two speech services, which are fakes with a fixed latency:
the simulated robot (microphone frames as Opus over the real SDK, the speaker with
credits and sha256), loudness voice detection, the main agent, the output queue, the
sentence-by-sentence speaker. Each round a tone (0.8 s, loud) then silence is fed into
the simulated microphone; the recogniser answers "有什么游戏" after ``--asr-ms`` and each
sentence is synthesised after ``--tts-ms``. The main agent answers that line in code
(no model, no game, no robot moves before the speech), so every millisecond between the
stages that is not a provider's latency is agentcade's own.

Stages (wall clock, per utterance): speech end (the detector hears 800 ms of silence) ->
ASR final -> first reply text (it reaches the speaker) -> first TTS audio (the first
sentence is synthesised, playback starts) -> first audio at the device (the simulated
robot receives the first audio frame). Overhead = total - ASR latency - TTS latency.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import struct
import tempfile
import time

import trio

from agentcade.core.trace import Trace
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import OfflineMainModel
from agentcade.testing.sim import SimDevice, open_sim_robot
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.voice import VoiceLoop, running

LINE = "有什么游戏"
TONE = b"".join(struct.pack("<h", int(3000 * math.sin(i / 7))) for i in range(2400))


class FixedTTS:
    """A TTS that answers after a fixed latency: 40 ms of tone per character."""

    name = "fixed"

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def synthesize(self, text: str) -> bytes:
        ready_at = trio.current_time() + self.latency  # making the tone is part of it
        n = int(24000 * 0.04 * len(text))
        pcm = (TONE * (n // len(TONE) + 1))[: 2 * n]
        await trio.sleep_until(ready_at)
        return pcm

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def utterance() -> bytes:
    voiced = b"".join(struct.pack("<h", int(3000 * math.sin(2 * math.pi * 220 * i / 16000)))
                      for i in range(int(0.8 * 16000)))
    return voiced + bytes(int(1.2 * 16000) * 2)


def first_after(records: list[dict[str, object]], type_: str, ts: float) -> float:
    for r in records:
        stamp = r["ts"]
        assert isinstance(stamp, float | int)
        if r["type"] == type_ and stamp >= ts:
            return float(stamp)
    raise RuntimeError(f"no {type_} after {ts}")


async def bench(rounds: int, asr_ms: int, tts_ms: int, speed: float) -> None:
    records: list[dict[str, object]] = []
    stamps: dict[int, float] = {}

    def sink(rec: dict[str, object]) -> None:
        rec = dict(rec)
        rec["ts"] = time.time()  # the trace rounds to ms; keep full precision here
        records.append(rec)

    trace = Trace(sink)
    device = SimDevice(audio_speed=speed)
    rows: list[tuple[float, float, float, float, float]] = []
    async with open_sim_robot(device=device) as sim:
        voice = VoiceRobot(sim, FixedTTS(tts_ms / 1000), trace=trace, print_speech=False)
        recognizer = ScriptedRecognizer([LINE] * rounds, latency=asr_ms / 1000)
        async with open_pipeline(voice, builtin_dir=builtin_games_dir(), remote=[],
                                 model=OfflineMainModel, trace=trace) as (agent, _):
            loop = VoiceLoop(agent, voice, recognizer, trace=trace, greet=False)
            async with running(loop):
                offset = time.time() - trio.current_time()
                for i in range(rounds):
                    await loop.wait_ready_for_speech()
                    clips = len(device.audio.clips)
                    device.audio.microphone.feed(utterance())
                    await loop.wait_heard(i + 1)
                    await device.audio.wait_clips(clips + 1)
                    clip = device.audio.clips[clips]
                    await device.audio.wait_sound(clip)
                    assert clip.started is not None
                    stamps[i] = clip.started + offset
                    await loop.wait_ready_for_speech()
                    heard = loop.heard[i]
                    end = heard.speech_end
                    rows.append((
                        end,
                        heard.asr_final,
                        first_after(records, "speech_text", heard.asr_final),
                        first_after(records, "speech_start", heard.asr_final),
                        stamps[i],
                    ))
    stages = ["speech end -> ASR final", "ASR final -> first reply text",
              "reply text -> first TTS audio", "TTS audio -> first audio at device",
              "speech end -> first audio (total)"]
    spans = [[(r[k + 1] - r[k]) * 1000 for r in rows] for k in range(4)]
    spans.append([(r[4] - r[0]) * 1000 for r in rows])
    print(f"voice latency, {rounds} utterances; fake ASR {asr_ms} ms, fake TTS {tts_ms} ms "
          f"per sentence; simulated device at {speed:g}x")
    print(f"{'stage':40} {'p50 ms':>8} {'p90 ms':>8} {'max ms':>8}")
    overhead = [t - asr_ms - tts_ms for t in spans[4]]
    rows_out = [*zip(stages, spans, strict=True), ("our overhead (total - ASR - TTS)", overhead)]
    for name, values in rows_out:
        print(f"{name:40} {statistics.median(values):8.1f} {_p90(values):8.1f} {max(values):8.1f}")
    p50 = statistics.median(overhead)
    print(f"overhead p50 {p50:.1f} ms: {'OK' if p50 <= 100 else 'OVER'} (budget 100 ms)")


def _p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--asr-ms", type=int, default=200)
    parser.add_argument("--tts-ms", type=int, default=150)
    parser.add_argument("--speed", type=float, default=4.0,
                        help="how much faster than real time the simulated robot runs")
    args = parser.parse_args()
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp(prefix="agentcade-bench-"))
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        os.environ.pop(name, None)
    trio.run(bench, args.rounds, args.asr_ms, args.tts_ms, args.speed)


if __name__ == "__main__":
    main()
