"""Voice detection in a family room: utterances found and ended, false starts, CPU per frame.

Run: ``.venv/bin/python tests/bench/bench_vad.py`` (needs espeak-ng; about a minute).

Ten game lines spoken by espeak-ng (the default Mandarin voice) at 16 kHz, 2.5 s apart,
go through the simulated room (:class:`agentcade.sim.room.RoomMixer`: fan noise,
television-like bursts between lines, a quiet child) in 60 ms frames — the robot's
microphone frame — into each detector. "Found" counts lines that started exactly one
utterance which ended before the next line; a start with no line in it is a false start.
Opus is left out here (the voice end-to-end tests run the real microphone path).
"""

from __future__ import annotations

import argparse
import statistics
import time

import trio

from agentcade.sim.room import Room, RoomMixer, parse_room
from agentcade.voice.tts import EspeakSynthesizer
from agentcade.voice.tuning import Tuning
from agentcade.voice.vad import make_detector

LINES = [
    "我猜五十", "是不是小猫", "给我一点提示", "我不知道", "结束游戏",
    "他是不是自己走进去的", "我们来玩猜数字", "七十三", "是一只大象吗", "再来一局",
]
FRAME = 960
GAP_SECONDS = 2.5
ROOMS = ["", "noise=700", "bursts=on", "voice=0.25", "noise=700,voice=0.25", "noise=700,bursts=on"]


async def _utterances() -> list[bytes]:
    mouth = EspeakSynthesizer(rate=16000)
    return [await mouth.synthesize(line) for line in LINES]


def _timeline(voices: list[bytes]) -> tuple[bytes, list[tuple[int, int]]]:
    """The child's side of the session and each line's (first, last) frame."""
    out = bytearray(int(GAP_SECONDS * 16000) * 2)
    spans = []
    for pcm in voices:
        first = len(out) // (2 * FRAME)
        out += pcm
        spans.append((first, (len(out) - 1) // (2 * FRAME)))
        out += bytes(int(GAP_SECONDS * 16000) * 2)
    return bytes(out), spans


def measure(room: Room, detector: str, voice: bytes, spans: list[tuple[int, int]]) -> dict[str, float]:
    mixer = RoomMixer(room)
    vad = make_detector(Tuning(detector="silero" if detector == "silero" else "loudness"))
    starts: list[int] = []
    ends: list[int] = []
    spent = []
    n = len(voice) // (2 * FRAME)
    for i in range(n):
        frame = mixer.frame(voice[i * 2 * FRAME:(i + 1) * 2 * FRAME], FRAME)
        t0 = time.perf_counter()
        step = vad.feed(frame)
        spent.append(time.perf_counter() - t0)
        if step.kind == "start":
            starts.append(i)
        elif step.kind == "end":
            ends.append(i)
    found = false = 0
    for k, (first, last) in enumerate(spans):
        window_end = spans[k + 1][0] if k + 1 < len(spans) else n
        inside = [s for s in starts if first - 6 <= s <= last]
        ended = [e for e in ends if last < e < window_end]
        if len(inside) == 1 and ended:
            found += 1
    for s in starts:
        if not any(first - 6 <= s <= last for first, last in spans):
            false += 1
    return {"found": found, "false": false, "ms": statistics.mean(spent) * 1000,
            "bursts": mixer.bursts_played}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", nargs="*", default=ROOMS)
    args = parser.parse_args()
    voices = trio.run(_utterances)
    voice, spans = _timeline(voices)
    print(f"{len(LINES)} lines, {len(voice) / 32000:.0f} s of audio, 60 ms frames")
    print(f"{'room':24} {'detector':9} {'found':>6} {'false starts':>13} {'ms/frame':>9}")
    for spec in args.rooms:
        room = parse_room(spec)
        for detector in ("silero", "loudness"):
            r = measure(room, detector, voice, spans)
            print(f"{spec or 'quiet':24} {detector:9} {r['found']:>3.0f}/{len(LINES)} "
                  f"{r['false']:>13.0f} {r['ms']:>9.3f}"
                  + (f"   ({r['bursts']:.0f} bursts)" if room.bursts else ""))


if __name__ == "__main__":
    main()
