"""The room matrix: turn-taking judged in every room, not one.

Run: ``.venv/bin/python tests/bench/bench_rooms.py [--sentences 50] [--verdicts 50]
[--overlaps 20] [--rooms default,fan300,...] [--speech DIR]`` (real time: about ten
minutes per room at the defaults; ``--sentences 10 --verdicts 10 --overlaps 6`` for a
look in a quarter of an hour).

Each room is a simulated robot in its own process (as a real robot runs beside its host),
wired as ``run`` wires it: the robot SDK over a socket, the microphone's Opus frames, the
neural voice on the speaker, WebRTC's echo canceller with the model of the robot's echo,
Silero, the turn-taking machine in the :class:`~agentcade.voice.listener.Listener`, and the
embedded recogniser (Whisper base, told the lines a game would expect). Rooms (``--rooms``):

- ``default`` the room ``run --robot sim`` has (echo 0.3, no fan);
- ``fan300``, ``fan700`` a fan of that loudness (RMS), echo 0.3;
- ``tv`` television bursts between lines, echo 0.3;
- ``echo0.6`` a robot that hears twice as much of itself;
- ``quiet`` a child at a quarter of a normal voice under a fan of 300;
- ``busy`` the default room beside two CPU-bound processes (a busy desktop).

Situations, in each room:

1. ``read``: the robot says ``--sentences`` game sentences with nobody talking. Every
   barge-in is a self-interruption.
2. ``verdict``: the child says a guess and the robot answers the moment the utterance ends
   (guess after guess, ``--verdicts`` times): a barge-in during the verdict is a
   self-interruption, and an utterance heard that nobody said holds the robot's words.
3. ``over``: a line said at a random point of a robot sentence (``--overlaps`` game lines by
   the neural child, and each short transcribed recording of a real adult speaker in
   ``--speech``, as loud as the neural child): stopped or not, the time from the line's
   first sound to the robot's silence, and whether what was recognised is the line
   (every syllable, in order, for a game line; 80 % of them for a recording).

Per cell the table prints: self-interruptions per sentence, lines that stopped the robot,
p50 first sound -> silence, the neural child's game lines heard as meant (the commands and
answers of issue 52's "acted on as meant"), the real speakers' lines heard as meant beside
how many the recogniser hears as meant alone (no robot, no room: what the room matrix can
expect of them), and transcripts that hold the robot's words (three syllables in a row of a
robot sentence that the line does not have).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import wave
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentcade.core.trace import Trace
from agentcade.sim.child import child_voice
from agentcade.sim.process import open_sim_process_robot
from agentcade.sim.robot import WallClock
from agentcade.sim.room import parse_room
from agentcade.testing.ear import heard_share, syllables
from agentcade.testing.load import cpu_load
from agentcade.voice.asr import Heard
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.listener import Listener
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.voice.pcm import leading_silence, rms
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import NeuralSynthesizer, Synthesizer
from agentcade.voice.tuning import MIC_RATE, TUNING, Tuning

ROOMS: dict[str, tuple[str, int]] = {
    "default": ("echo=0.3", 0),
    "fan300": ("noise=300,echo=0.3", 0),
    "fan700": ("noise=700,echo=0.3", 0),
    "tv": ("bursts=on,echo=0.3", 0),
    "echo0.6": ("echo=0.6", 0),
    "quiet": ("noise=300,voice=0.25,echo=0.3", 0),
    "busy": ("echo=0.3", 2),
}
"""name -> (the simulated room, CPU-bound processes beside it)."""

ROBOT = [
    "我想好了一个一到二十之间的数，你有五次机会，猜猜看吧。",
    "不对哦，比十还大不少，你还有四次机会。",
    "汤面是这样的：一个男人走进餐厅，点了一碗海龟汤，喝了一口就哭了。",
    "画好啦，就在屏幕上。你猜这是什么动物？",
    "谜面是：小小一间房，只开一扇窗，你猜是什么？",
]
VERDICTS = ["比十八还大，再猜一次。", "不对哦，比七小一点。", "猜对啦，就是十五！", "再大一点，还有三次机会。"]
GUESSES = ["我猜十五", "十八", "是小猫吗", "七", "是熊猫吗", "十二"]
CHILD = ["结束游戏", "不知道", "我猜十五", "是小猫吗", "给我一点提示", "七", "下一个", "十八"]
PHRASES = sorted({*CHILD, *GUESSES, "猜对了", "再说一遍"})
"""What the recogniser is told may be said (as a game tells it)."""
HUMAN_MAX_S = 5.0
"""Recordings longer than this are left out of the ``over`` lines (a line, not a speech)."""
HUMAN_SHARE = 0.8
"""A real speaker's line is heard as meant with this share of its syllables (a game line:
all of them), over the robot and alone alike."""


@dataclass
class Cell:
    """One room's figures."""

    sentences: int = 0
    self_interruptions: int = 0
    released: int = 0
    lines: int = 0
    stopped: int = 0
    latencies: list[float] = field(default_factory=list)
    meant: int = 0
    real_lines: int = 0
    """``over`` lines by a real speaker (the rest are the neural child's game lines)."""
    real_meant: int = 0
    robot_words: int = 0
    heard_lines: int = 0
    streams: dict[str, int] = field(default_factory=dict)
    """--streams: lines heard as meant when recognised from each stream (see :func:`_play`)."""
    human: list[str] = field(default_factory=list)
    """``over`` lines by a real speaker: what became of each."""
    missed: list[str] = field(default_factory=list)


def _robot_words(text: str, line: str) -> bool:
    """Whether ``text`` holds three syllables in a row of a robot sentence that ``line`` (what
    the child said, "" for nobody) does not."""
    def trigrams(s: str) -> set[tuple[str, ...]]:
        syl = syllables(s)
        return {tuple(syl[i:i + 3]) for i in range(len(syl) - 2)}

    said = trigrams(text) - trigrams(line)
    return any(said & trigrams(sentence) for sentence in [*ROBOT, *VERDICTS])


def _human_lines(folder: Path) -> dict[str, bytes]:
    """The short transcribed recordings of ``folder`` (its ``manifest.tsv``): transcript ->
    16 kHz PCM."""
    manifest = folder / "manifest.tsv"
    if not manifest.is_file():
        return {}
    lines: dict[str, bytes] = {}
    for row in manifest.read_text(encoding="utf-8").splitlines()[1:]:
        name, transcript, seconds, *_ = row.split("\t")
        if not transcript or float(seconds) > HUMAN_MAX_S or not any("\u4e00" <= c <= "\u9fff" for c in transcript):
            continue
        with wave.open(str(folder / name), "rb") as w:
            if w.getframerate() != MIC_RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
                continue
            lines[transcript] = w.readframes(w.getnframes())
    return lines


def _as_loud(pcm: bytes, level: float) -> bytes:
    """``pcm`` scaled so that its voiced part has RMS ``level``."""
    import numpy as np

    x = np.frombuffer(pcm, np.int16).astype(np.float64)
    voiced = x[np.abs(x) > 0.05 * np.abs(x).max()]
    gain = level / max(float(np.sqrt(np.mean(voiced ** 2))), 1.0)
    return np.clip(x * gain, -32768, 32767).astype(np.int16).tobytes()


async def room_cell(
    name: str, spec: str, load: int, args: argparse.Namespace, recognizer: LocalRecognizer,
    robot_voice: Synthesizer, human: dict[str, bytes], rng: random.Random,
) -> Cell:
    room = parse_room(spec)
    mouth = await child_voice(room)
    child = {line: await mouth.synthesize(line) for line in {*CHILD, *GUESSES}}
    level = statistics.median(rms(pcm) for pcm in child.values())
    people = {line: _as_loud(pcm, level) for line, pcm in human.items()}
    cell = Cell()
    with cpu_load(load):
        async with open_sim_process_robot(room=room, speed=1.0) as sim:
            await _play(sim, cell, args, recognizer, robot_voice, child, people, rng)
    return cell


async def _play(
    sim: Any, cell: Cell, args: argparse.Namespace, recognizer: LocalRecognizer,
    robot_voice: Synthesizer, child: dict[str, bytes], people: dict[str, bytes],
    rng: random.Random,
) -> None:
    device = sim.device
    records: list[dict[str, Any]] = []
    voice = VoiceRobot(sim, robot_voice, print_speech=False, trace=Trace(records.append))
    echo = EchoCanceller(tuning=args.tuning)
    voice.echo = echo
    barged: list[float] = []
    speak_scope: list[trio.CancelScope] = []
    heard_send, heard_receive = trio.open_memory_channel[Heard](math.inf)
    expected = {"".join(syllables(p)) for p in PHRASES}

    def barge_in() -> None:
        barged.append(trio.current_time())
        voice.drop_hold()
        for scope in speak_scope:
            scope.cancel()

    async def say(text: str) -> None:
        with trio.CancelScope() as scope:
            speak_scope.append(scope)
            try:
                await voice.speak(text)
            finally:
                speak_scope.remove(scope)

    async with voice.audio.microphone() as mic, trio.open_nursery() as nursery:
        send, frames = trio.open_memory_channel[bytes](math.inf)

        streams: list[tuple[float, bytes, bytes, bytes, bool]] = []
        """--streams: per processed frame, (when, the canceller's output, the microphone with
        the model's echo taken out, the microphone, whether the robot's voice may be in it)."""
        process = echo.process

        def kept(frame: bytes, *, now: float | None = None) -> bytes:
            out = process(frame, now=now)
            if out and args.streams:
                streams.append((trio.current_time(), out, echo.last_clean, echo.last_input,
                                echo.audible))
            return out

        echo.process = kept  # type: ignore[method-assign]

        async def relay() -> None:
            async for frame in mic:
                echo.arrived(frame.data, at=frame.at, missing=frame.missing)
                send.send_nowait(frame.data)

        said: list[tuple[float, dict[str, Any]]] = []
        """The listener's records, with when (trio time)."""
        listener = Listener(
            frames, recognizer, echo=echo, vad=args.tuning, speaking=lambda: voice.speaking,
            trace=Trace(lambda r: said.append((trio.current_time(), r))),
            on_barge_in=barge_in, on_hold=voice.hold, on_release=voice.release,
            actionable=lambda text: "".join(syllables(text)) in expected)

        events: list[tuple[float, Any]] = []
        """--events: every event the turn-taking machine was told, with when (trio time)."""
        if args.events:
            next_event = listener._next

            async def told() -> tuple[bytes, Any]:
                audio, event = await next_event()
                events.append((trio.current_time(), event))
                return audio, event

            listener._next = told  # type: ignore[method-assign]
        judged: list[tuple[float, str]] = []
        """--detail: what voice detection made of each frame, with when (trio time)."""
        if args.detail:
            detector = listener._detector
            feed = detector.feed

            def noted(frame: bytes, mic: bytes | None = None) -> Any:
                step = feed(frame, mic)
                robot = detector.robot
                flags = "".join(c for c, on in (
                    ("S", robot.speaking), ("L", robot.over_echo), ("W", not robot.converged),
                    ("O", robot.onset), ("R", robot.resumed), ("B", robot.behind), ("H", robot.heard_over_echo),
                    ("C", getattr(detector, "echo_taken_out", False))) if on)
                judged.append((trio.current_time(), f"{getattr(detector, 'last_probability', 0):.2f}"
                               f"/{getattr(detector, 'last_mic_probability', 0):.2f}"
                               f"{flags}{step.kind[0] if step.kind != 'quiet' else ''}"))
                return step

            detector.feed = noted  # type: ignore[method-assign]

        async def listen() -> None:
            while True:
                heard_send.send_nowait(await listener.hear())

        nursery.start_soon(relay)
        nursery.start_soon(listen)
        await trio.sleep(1.0)

        def drain() -> list[Heard]:
            out = []
            while True:
                try:
                    out.append(heard_receive.receive_nowait())
                except trio.WouldBlock:
                    return out

        # 1. The robot reads, nobody talking.
        released = voice.holds
        for i in range(args.sentences):
            before = len(barged)
            await say(ROBOT[i % len(ROBOT)])
            cell.self_interruptions += len(barged) > before
            cell.sentences += 1
            await trio.sleep(0.3)
        for heard in drain():  # anything heard was the robot's own voice
            cell.robot_words += _robot_words(heard.text, "")
        if args.events:
            _keep_events(args.events, "reading", False, [e for _, e in events])
        # 2. A verdict the moment the child stops, guess after guess.
        for i in range(args.verdicts):
            line = GUESSES[i % len(GUESSES)]
            drain()
            device.audio.microphone.feed(child[line])
            with trio.move_on_after(10):
                heard = await heard_receive.receive()
                cell.robot_words += _robot_words(heard.text, line)
            before = len(barged)
            began = trio.current_time()
            await say(VERDICTS[i % len(VERDICTS)])
            cell.self_interruptions += len(barged) > before
            if args.detail and len(barged) > before:
                frames_seen = " ".join(f"{(t - began) * 1000:.0f}:{j}" for t, j in judged if t >= began - 0.3)
                print(f"    verdict after {line}: stopped itself; heard {heard.text!r}\n      frames: {frames_seen}")
            cell.sentences += 1
            await trio.sleep(0.6)
            for heard in drain():  # nobody spoke: the robot's voice, heard
                cell.robot_words += _robot_words(heard.text, "") or bool(heard.text)
        cell.released = voice.holds - released - cell.self_interruptions
        # 3. Lines said over the robot.
        lines: list[tuple[str, bytes, bool]] = [
            (CHILD[i % len(CHILD)], child[CHILD[i % len(CHILD)]], False)
            for i in range(args.overlaps)]
        lines += [(text, pcm, True) for text, pcm in people.items()]
        for i, (line, pcm, real) in enumerate(lines):
            drain()
            before = len(barged)
            clips = len(device.audio.clips)
            async with trio.open_nursery() as inner:
                inner.start_soon(say, ROBOT[i % len(ROBOT)])
                await device.audio.wait_clips(clips + 1)
                await device.audio.wait_sound(device.audio.clips[clips])
                await trio.sleep(rng.uniform(0.3, 1.8))
                onset = trio.current_time()
                device.audio.microphone.feed(pcm + bytes(MIC_RATE * 2))
            mine = device.audio.clips[clips:]
            for piece in mine:
                await device.audio.wait_done(piece)
            cut = [p for p in mine if p.outcome == "aborted" and p.ended is not None
                   and p.ended >= onset]
            stopped = len(barged) > before and bool(cut)
            text = ""
            with trio.move_on_after(15):
                while not (final := _line_heard(said, onset)):  # noqa: ASYNC110 - a poll of the trace
                    await trio.sleep(0.05)
                text = final
            enough = HUMAN_SHARE if real else 0.99
            meant = heard_share(line, text) >= enough
            if args.streams:
                span = [s for s in streams
                        if onset - 0.3 <= s[0] <= onset + len(pcm) / (2 * MIC_RATE) + 0.5]
                for name, audio in (("output", [s[1] for s in span]),
                                    ("model", [s[2] for s in span]),
                                    ("microphone", [s[3] for s in span])):
                    heard_text = await recognizer.recognize(b"".join(audio), 1000)
                    cell.streams[name] = cell.streams.get(name, 0) + (
                        heard_share(line, heard_text) >= enough)
                after = b"".join(s[3] for s in span if not s[4])
                heard_text = await recognizer.recognize(after, 1000)
                cell.streams["after the robot"] = cell.streams.get("after the robot", 0) + (
                    heard_share(line, heard_text) >= enough)
            cell.lines += 1
            cell.stopped += stopped
            cell.meant += meant
            cell.real_lines += real
            cell.real_meant += real and meant
            cell.heard_lines += bool(text)
            cell.robot_words += _robot_words(text, line)
            lead = 1000 * leading_silence(pcm, MIC_RATE)
            if stopped:
                cell.latencies.append((cut[0].ended - onset) * 1000 - lead)
            if args.detail:
                steps = [f"{r['type']} {(at - onset) * 1000 - lead:.0f} ms"
                         f"{' voiced ' + str(r['voiced_ms']) if 'voiced_ms' in r else ''}"
                         f"{' clean' if r.get('clean') else ''}"
                         for at, r in said if at >= onset and r["type"] in (
                             "speech_over_robot", "barge_in_confirmed", "barge_in_released")]
                cut_ms = (cut[0].ended - onset) * 1000 - lead if cut else math.nan
                print(f"    {line[:12]}: {'; '.join(steps)}; silent at {cut_ms:.0f} ms; "
                      f"heard {text!r}", flush=True)
                print("      frames: " + " ".join(
                    f"{(at - onset) * 1000 - lead:.0f}:{what}" for at, what in judged
                    if -100 <= (at - onset) * 1000 - lead <= 600))
            if real:
                cell.human.append(f"{line}: {'stopped' if stopped else 'NOT stopped'}, "
                                  f"heard {text!r}")
            elif not stopped or not meant:
                cell.missed.append(f"{line} ({'stopped' if stopped else 'not stopped'}, "
                                   f"heard {text!r})")
            if args.events:
                _keep_events(args.events, f"{cell.lines:02d} {line}", stopped, [
                    e for at, e in events if onset - 1.0 <= at <= onset + len(pcm) / 32000 + 1.0])
            await device.audio.microphone.drained()
            await trio.sleep(0.8)
        nursery.cancel_scope.cancel()


def _line_heard(said: list[tuple[float, dict[str, Any]]], onset: float) -> str | None:
    """The text recognised of the utterance a line said over the robot at ``onset`` began
    (its start over the robot, then its ``asr_final``); None while not yet recognised."""
    started = False
    for at, record in said:
        if at < onset - 0.1:
            continue
        if record["type"] == "speech_over_robot":
            started = True
        elif record["type"] == "asr_final" and started:
            return str(record["text"]) or "-"
    return None


def _keep_events(folder: str, name: str, stopped: bool, events: list[Any]) -> None:
    """Write one recorded event sequence (tests replay them through the machine)."""
    import dataclasses
    import json

    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    rows = [{"event": type(e).__name__, **dataclasses.asdict(e)} for e in events]
    (path / f"{name.replace(' ', '_')}.json").write_text(
        json.dumps({"line": name, "stopped": stopped, "events": rows}, ensure_ascii=False),
        encoding="utf-8")


def _row(name: str, cell: Cell, alone: int) -> str:
    p50 = statistics.median(cell.latencies) if cell.latencies else math.nan
    game, game_meant = cell.lines - cell.real_lines, cell.meant - cell.real_meant
    return (f"| {name} | {cell.self_interruptions}/{cell.sentences} | {cell.released} | "
            f"{cell.stopped}/{cell.lines} | {p50:.0f} | {game_meant}/{game} | "
            f"{cell.real_meant}/{cell.real_lines} ({alone}) | {cell.robot_words} |")


async def _heard_alone(recognizer: LocalRecognizer, human: dict[str, bytes]) -> int:
    """How many of the real speakers' lines the recogniser hears as meant alone, with no
    robot and no room (told the same phrases): the most the room matrix can expect of them.
    What it makes of each is printed."""
    alone = 0
    for line, pcm in human.items():
        text = await recognizer.recognize(pcm, len(pcm) / 32)
        heard = heard_share(line, text) >= HUMAN_SHARE
        alone += heard
        print(f"    real voice alone: {line}: heard {text!r}{'' if heard else ' (not as meant)'}")
    return alone


async def bench(args: argparse.Namespace) -> None:
    recognizer = await LocalRecognizer.load()
    recognizer.bias = lambda: PHRASES
    robot_voice = await NeuralSynthesizer.load()
    human = _human_lines(Path(args.speech)) if args.speech else {}
    rng = random.Random(args.seed)
    print(f"robot: {robot_voice.name}; child: the neural child and {len(human)} recordings "
          f"of real speakers ({args.speech}); recogniser: {recognizer.name}")
    alone = await _heard_alone(recognizer, human)
    rows: list[tuple[str, Cell]] = []
    for name in args.rooms.split(","):
        spec, load = ROOMS[name]
        cell = await room_cell(name, spec, load, args, recognizer, robot_voice, human, rng)
        rows.append((name, cell))
        print(_row(name, cell, alone), flush=True)
        for line in cell.missed:
            print(f"    missed: {line}")
        for line in cell.human:
            print(f"    real voice: {line}")
        if cell.streams:
            print("    heard as meant from each stream: " + ", ".join(
                f"{stream} {n}/{cell.lines}" for stream, n in cell.streams.items()))
    print()
    print("| room | self-interruptions / sentences | paused for itself, went on | lines that "
          "stopped it | p50 first sound -> silence (ms) | game lines heard as meant | real "
          "voices heard as meant (heard so alone) | transcripts holding the robot's words |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, cell in rows:
        print(_row(name, cell, alone))


def _tuning(pairs: list[str]) -> Tuning:
    """The product's knobs with ``--tune KNOB=VALUE`` applied (each value of its knob's type)."""
    changes: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in {f.name for f in fields(Tuning)}:
            raise SystemExit(f"bench_rooms: no knob {name!r} in voice.tuning")
        changes[name] = type(getattr(TUNING, name))(value)
    return replace(TUNING, **changes)


def main() -> None:
    speech = Path(__file__).resolve().parents[3] / "shared" / "speech"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=50)
    parser.add_argument("--verdicts", type=int, default=50)
    parser.add_argument("--overlaps", type=int, default=20)
    parser.add_argument("--rooms", default=",".join(ROOMS))
    parser.add_argument("--speech", default=str(speech) if speech.is_dir() else "",
                        help="a folder of real recordings with manifest.tsv ('' for none)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--streams", action="store_true",
                        help="also recognise each line over the robot from every stream there "
                        "is (the canceller's output, the model's, the microphone, the "
                        "microphone once the robot fell silent)")
    parser.add_argument("--events", default="",
                        help="a folder to keep the turn-taking events of each line in")
    parser.add_argument("--tune", action="append", default=[], metavar="KNOB=VALUE",
                        help="another value of a knob of voice.tuning (may repeat)")
    parser.add_argument("--detail", action="store_true",
                        help="print what the listener did with each line over the robot")
    args = parser.parse_args()
    args.tuning = _tuning(args.tune)
    unknown = set(args.rooms.split(",")) - set(ROOMS)
    if unknown:
        parser.error(f"unknown rooms {', '.join(sorted(unknown))}: {', '.join(ROOMS)}")
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp(prefix="agentcade-bench-"))
    trio.run(bench, args, clock=WallClock())



if __name__ == "__main__":
    main()
