"""The embedded recogniser's accuracy, what it refuses, and its CPU per line, in one run.

Run: ``nice .venv/bin/python tests/bench/bench_recognise.py [--sets …] [--settings 800:1]
[--save now.json] [--before before.json]`` (the voice extra; about 5 minutes on two loaded
cores). The sets (issue 52's figures; pick some with ``--sets``):

* ``numbers`` — 一 … 二十 said bare in 猜数字, by the simulated child (the neural voice, f0
  x1.3); ``numbers:childlike`` — the same by the neural voice made child-like by sox
  (``pitch 500``: f0 and formants five semitones up, another voice than the child's);
  ``guesses`` — 我猜十, 我猜十五, 我猜四.
* ``draw_guess``, ``riddle`` — a game's deck said bare; with ``:asked``
  (``draw_guess:asked``) each word asked as a guess's question, 是X吗.
* ``outside`` — lines said outside a game (judged by the share of syllables heard).
* ``commands`` — 结束游戏, 不玩了, 下一个, 再说一遍, 给我一点提示 said bare inside each game.
* ``speech`` — real adult Mandarin (``../shared/speech/``, the transcribed recordings;
  ``--speech DIR``), as recorded and child-like (sox ``pitch 500``), with no bias, outside a
  game and inside each game: the character error rate (edits over the reference's
  characters, punctuation and spaces out, simplified), and every word of the bias written
  into a line whose reference does not hold it ("intrusions").
* ``garbage`` — a fan's noise, white noise, a cough-like burst, English (espeak-ng), Japanese
  (espeak-ng), inside each game and outside: "forwarded" when the recogniser gives any text
  (the host would act on it), "actionable" when code would act on it at once (a number, a
  deck word, a command: ``wiring.hearing``'s rules).

A line is "judged right" when what it meant is taken from what was heard (the number
parsed, the deck's word matched by the judge, the command recognised by the router's
intents); "refused" when the recogniser gave no text (the host says 没听清). Each setting is
``frames:beam``: the encoder's context at least (``local_asr.MIN_FRAMES``) and the first
decoding's beam (``local_asr.BEAM``); the first is the reference and every clip is recognised
with each setting in turn, so the load of the moment falls on all alike. CPU per line is the
process's CPU time (every thread) over the recognition; the last line gives the mean over
every clip and its ratio to ``--before``'s. ``--save`` keeps each line's transcript;
``--before`` names the lines that were judged right there and are refused or wrong now.

Each line is synthesised once, in the same order every run (the voice's noise is a seeded
sequence), so runs with the same ``--sets`` agree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import agentcade.voice.local_asr as local_asr
from agentcade.core.ending import is_end_request
from agentcade.core.judge import (
    help_request,
    is_match,
    normalize,
    parse_number,
    round_request,
    spell_number,
)
from agentcade.core.skill import Skill
from agentcade.game.loader import builtin_games_dir
from agentcade.sim.child import child_voice
from agentcade.testing.ear import heard_share
from agentcade.voice.local_asr import LocalRecognizer, to_simplified
from agentcade.voice.tts import NeuralSynthesizer
from agentcade.wiring.hearing import ROUND_WORDS

RATE = 16000
NUMBERS = [spell_number(n) for n in range(1, 21)]
OUTSIDE = ["玩猜数字", "玩猜谜语", "玩你画我猜", "来玩海龟汤", "有什么游戏", "结束游戏", "你今天开心吗"]
COMMANDS = ["结束游戏", "不玩了", "下一个", "再说一遍", "给我一点提示"]
GAMES = ["guess_number", "draw_guess", "riddle", "turtle_soup"]
OUTSIDE_BIAS = ["玩猜数字", "玩猜谜语", "玩你画我猜", "玩海龟汤", *ROUND_WORDS]
SPEECH = Path(__file__).resolve().parents[3] / "shared" / "speech"
if not SPEECH.exists():
    SPEECH = Path("/work/shared/speech")
DEFAULT_SETS = ("numbers,numbers:childlike,guesses,draw_guess,draw_guess:asked,outside,commands,"
                "speech,garbage")


def _game(game: str) -> tuple[list[str], list[str]]:
    """(what the recogniser is told may be said in ``game``, its vocabulary)."""
    skill = Skill.load(builtin_games_dir() / game / "SKILL.md")
    return [skill.name, *skill.vocabulary, *ROUND_WORDS], list(skill.vocabulary)


def _biases() -> dict[str, list[str]]:
    """Every bias a line can be heard in: none, outside a game, inside each game."""
    return {"none": [], "outside": OUTSIDE_BIAS, **{g: _game(g)[0] for g in GAMES}}


# --- voices ----------------------------------------------------------------------------------


def _sox_pitch(pcm: bytes, cents: int) -> bytes:
    """``pcm`` (16 kHz mono s16le) with sox's ``pitch`` (f0 and formants up, same length;
    without dither, which is random: the same sound every run)."""
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "in.wav", Path(folder) / "out.wav"
        _write_wav(source, pcm)
        subprocess.run(["sox", "-D", str(source), str(out), "pitch", str(cents)], check=True)
        return _read_wav(out)


def _write_wav(path: Path, pcm: bytes) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(pcm)


def _read_wav(path: Path) -> bytes:
    """A recording as 16 kHz mono s16le (sox converts whatever it is)."""
    out = subprocess.run(["sox", "-D", str(path), "-t", "raw", "-r", str(RATE), "-c", "1", "-b", "16",
                          "-e", "signed-integer", "-"], check=True, capture_output=True)
    return out.stdout


def _espeak(text: str, voice: str) -> bytes:
    raw = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], check=True,
                         capture_output=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "e.wav"
        path.write_bytes(raw)
        return _read_wav(path)


def _garbage() -> list[tuple[str, bytes]]:
    """Sounds that are no line (seeded)."""
    import numpy as np

    rng = np.random.default_rng(52)
    second = RATE

    def pcm(samples: Any) -> bytes:
        return np.clip(samples, -32767, 32767).astype("<i2").tobytes()

    white = rng.normal(0, 2000, second)
    fan = np.convolve(rng.normal(0, 6000, 2 * second), np.ones(40) / 40, mode="same")
    cough = np.zeros(second, np.float64)
    for at in (0.1, 0.45):  # two bursts: a sharp onset, a noisy 150 ms decay, a low buzz
        n = int(0.15 * second)
        envelope = np.exp(-np.arange(n) / (0.04 * second))
        burst = rng.normal(0, 9000, n) * envelope
        burst += 5000 * envelope * np.sin(2 * np.pi * 180 * np.arange(n) / second)
        start = int(at * second)
        cough[start:start + n] += burst
    return [("fan noise", pcm(fan)), ("white noise", pcm(white)), ("cough", pcm(cough)),
            ("english", _espeak("Hello, how are you today? I want to play outside.", "en")),
            ("japanese", _espeak("こんにちは、元気ですか", "ja"))]


# --- scoring ---------------------------------------------------------------------------------


def _chars(text: str) -> str:
    return "".join(c for c in to_simplified(text).lower() if c.isalnum())


def _edits(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def _intrusions(reference: str, heard: str, bias: list[str]) -> list[str]:
    """Words of the bias written into ``heard`` that ``reference`` does not hold (two
    characters or more: one character alone is any sentence's)."""
    ref, got = _chars(reference), _chars(heard)
    return sorted({w for w in (_chars(p) for p in bias) if len(w) >= 2 and w in got and w not in ref})


def _command(heard: str, meant: str) -> bool:
    if meant in ("结束游戏", "不玩了"):
        return bool(is_end_request(heard))
    if meant == "给我一点提示":
        return bool(help_request(heard))
    return bool(round_request(heard)) and heard_share(meant, heard) >= 0.75


def _actionable(heard: str, bias: list[str]) -> bool:
    """Whether code would act on ``heard`` at once (``wiring.hearing.actionable``'s rules
    without a main agent: a number, a command, a bias phrase said alone or in a frame)."""
    bare = normalize(heard)
    if not bare:
        return False
    if parse_number(heard) is not None or help_request(heard) or round_request(heard):
        return True
    if is_end_request(heard):
        return True
    return any(is_match(heard, w) for w in bias if len(bare) <= len(normalize(w)) + 3)


# --- the run ---------------------------------------------------------------------------------


Line = tuple[str, str, bytes]  # (what was said, what it means, the sound)


class Results:
    def __init__(self, settings: list[tuple[int, int]]) -> None:
        self.settings = settings
        self.saved: dict[str, str] = {}
        self.cpu: dict[tuple[int, int], list[float]] = {s: [] for s in settings}


async def _recognise(recognizer: LocalRecognizer, results: Results, bias: list[str], pcm: bytes,
                     key: str) -> dict[tuple[int, int], tuple[str, float, float]]:
    """``pcm`` heard with each setting: (text, wall s, cpu s)."""
    recognizer.bias = lambda: bias
    out = {}
    for setting in results.settings:
        local_asr.MIN_FRAMES, local_asr.BEAM = setting
        started, cpu = time.perf_counter(), time.process_time()
        heard = await recognizer.recognize(pcm, len(pcm) / 32)
        out[setting] = (heard, time.perf_counter() - started, time.process_time() - cpu)
        results.cpu[setting].append(out[setting][2])
        results.saved[f"{key}@{setting[0]}:{setting[1]}"] = heard
    return out


async def _judged_set(name: str, recognizer: LocalRecognizer, results: Results, bias: list[str],
                      lines: list[Line], judge: Callable[[str, str], bool],
                      before: dict[str, str]) -> None:
    settings = results.settings
    times: dict[tuple[int, int], list[float]] = {s: [] for s in settings}
    cpus: dict[tuple[int, int], list[float]] = {s: [] for s in settings}
    exact = dict.fromkeys(settings, 0)
    judged = dict.fromkeys(settings, 0)
    refused = dict.fromkeys(settings, 0)
    misses: dict[tuple[int, int], list[str]] = {s: [] for s in settings}
    lost: dict[tuple[int, int], list[str]] = {s: [] for s in settings}
    for i, (line, meant, pcm) in enumerate(lines):
        key = f"{name}/{i}/{line}"
        heard = await _recognise(recognizer, results, bias, pcm, key)
        for setting, (text, wall, cpu) in heard.items():
            times[setting].append(wall)
            cpus[setting].append(cpu)
            exact[setting] += heard_share(line, text) == 1.0
            ok = judge(meant, text)
            judged[setting] += ok
            refused[setting] += not text
            if not ok:
                misses[setting].append(f"{line}→{text or '∅'}")
                was = before.get(f"{key}@{setting[0]}:{setting[1]}")
                if was is not None and judge(meant, was):
                    lost[setting].append(f"{line}({was}→{text or '∅'})")
    reference = statistics.median(times[settings[0]])
    print(f"\n{name} ({len(lines)} lines; os load {os.getloadavg()[0]:.1f})")
    print(f"  {'setting':9} {'syllables':>9} {'judged':>7} {'refused':>7} {'p50 ms':>7} {'p90 ms':>7} "
          f"{'cpu ms':>7} {'ratio':>6}")
    for setting in settings:
        values = sorted(times[setting])
        p50 = statistics.median(values)
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        print(f"  {setting[0]:4}:{setting[1]:<4} {exact[setting]:4}/{len(lines):<4} "
              f"{judged[setting]:3}/{len(lines):<3} {refused[setting]:7} {p50 * 1000:7.0f} "
              f"{p90 * 1000:7.0f} {statistics.mean(cpus[setting]) * 1000:7.0f} {p50 / reference:6.2f}")
    for setting in settings:
        if misses[setting]:
            print(f"  missed {setting[0]}:{setting[1]}: " + " ".join(misses[setting]))
        if lost[setting]:
            print(f"  right before, not now {setting[0]}:{setting[1]}: " + " ".join(lost[setting]))


async def _speech(recognizer: LocalRecognizer, results: Results, before: dict[str, str],
                  folder: Path) -> None:
    manifest = folder / "manifest.tsv"
    rows = []
    for row in manifest.read_text(encoding="utf-8").splitlines():
        cells = row.split("\t")
        if len(cells) > 2 and cells[0].endswith(".wav") and cells[1].strip():
            rows.append((cells[0], cells[1].strip()))
    recordings = [(name, text, _read_wav(folder / name)) for name, text in rows]
    voices = {"recorded": recordings,
              "childlike": [(n, t, _sox_pitch(p, 500)) for n, t, p in recordings]}
    print(f"\nspeech: {len(recordings)} transcribed recordings of {folder} "
          f"({sum(len(p) for _, _, p in recordings) / 32000:.0f} s); os load {os.getloadavg()[0]:.1f}")
    print(f"  {'voice':10} {'bias':13} {'CER':>6} {'refused':>7} {'intrusions':>10}  (setting "
          f"{results.settings[0][0]}:{results.settings[0][1]})")
    for voice, clips in voices.items():
        for bias_name, bias in _biases().items():
            edits = chars = refused = 0
            intruded: list[str] = []
            for name, text, pcm in clips:
                heard = await _recognise(recognizer, results, bias, pcm, f"speech/{voice}/{bias_name}/{name}")
                got = heard[results.settings[0]][0]
                edits += _edits(_chars(text), _chars(got))
                chars += len(_chars(text))
                refused += not got
                intruded += [f"{w}({got[:16]})" for w in _intrusions(text, got, bias)]
            print(f"  {voice:10} {bias_name:13} {edits / chars:6.3f} {refused:7} {len(intruded):10}  "
                  + " ".join(intruded))


async def _garbage_set(recognizer: LocalRecognizer, results: Results) -> None:
    sounds = _garbage()
    print(f"\ngarbage: {len(sounds)} sounds x {len(_biases()) - 1} biases (setting "
          f"{results.settings[0][0]}:{results.settings[0][1]}); os load {os.getloadavg()[0]:.1f}")
    forwarded = actionable = total = 0
    for sound, pcm in sounds:
        cells = []
        for bias_name, bias in _biases().items():
            if bias_name == "none":
                continue
            heard = await _recognise(recognizer, results, bias, pcm, f"garbage/{sound}/{bias_name}")
            got = heard[results.settings[0]][0]
            total += 1
            forwarded += bool(got)
            acts = _actionable(got, bias)
            actionable += acts
            cells.append(f"{bias_name}:{got[:14] or '∅'}{'(ACTS)' if acts else ''}")
        print(f"  {sound:12} " + " | ".join(cells))
    print(f"  forwarded {forwarded}/{total}, actionable {actionable}/{total}")


async def main(names: list[str], settings: list[tuple[int, int]], save: Path | None,
               before_path: Path | None, speech: Path) -> None:
    before = json.loads(before_path.read_text()) if before_path else {}  # noqa: ASYNC240 (a bench)
    results = Results(settings)
    recognizer = await LocalRecognizer.load()
    child = await child_voice()
    plain: NeuralSynthesizer | None = None
    print(f"recognition settings (frames:beam), the first is the reference; os load "
          f"{os.getloadavg()[0]:.1f}")

    async def said(lines: list[tuple[str, str]], voice: str = "child") -> list[Line]:
        nonlocal plain
        if voice == "childlike":
            if plain is None:
                plain = await NeuralSynthesizer.load(rate=RATE)
            return [(t, m, _sox_pitch(await plain.synthesize(t), 500)) for t, m in lines]
        return [(t, m, await child.synthesize(t)) for t, m in lines]

    def number(meant: str, heard: str) -> bool:
        return parse_number(heard) == parse_number(meant)

    for name in names:
        base, _, form = name.partition(":")
        if base == "numbers":
            bias, _ = _game("guess_number")
            lines = await said([(n, n) for n in NUMBERS], form or "child")
            await _judged_set(name, recognizer, results, bias, lines, number, before)
        elif base == "guesses":
            bias, _ = _game("guess_number")
            lines = await said([(f"我猜{n}", n) for n in ("十", "十五", "四")])
            await _judged_set(name, recognizer, results, bias, lines, number, before)
        elif base == "outside":
            lines = await said([(line, line) for line in OUTSIDE])
            await _judged_set(name, recognizer, results, OUTSIDE_BIAS, lines,
                              lambda meant, heard: heard_share(meant, heard) >= 0.75, before)
        elif base == "commands":
            lines = await said([(c, c) for c in COMMANDS])
            for game in GAMES:
                await _judged_set(f"commands in {game}", recognizer, results, _game(game)[0], lines,
                                  _command, before)
        elif base == "speech":
            await _speech(recognizer, results, before, speech)
        elif base == "garbage":
            await _garbage_set(recognizer, results)
        else:
            bias, vocabulary = _game(base)
            words = [w for w in vocabulary if len(w) <= 3 and not w.endswith("吗")]
            form_ = "是{}吗" if form == "asked" else "{}"
            lines = await said([(form_.format(w), w) for w in words])
            await _judged_set(name, recognizer, results, bias, lines,
                              lambda meant, heard: is_match(heard, meant), before)
    print()
    for setting in settings:
        mean = statistics.mean(results.cpu[setting])
        line = f"CPU per line {setting[0]}:{setting[1]}: mean {mean * 1000:.0f} ms over {len(results.cpu[setting])} clips"
        if "cpu" in before and f"{setting[0]}:{setting[1]}" in before["cpu"]:
            line += f", {mean / before['cpu'][f'{setting[0]}:{setting[1]}']:.2f}x --before's"
        print(line)
    if save:
        results.saved["cpu"] = {f"{s[0]}:{s[1]}": statistics.mean(v) for s, v in results.cpu.items()}  # type: ignore[assignment]
        save.write_text(json.dumps(results.saved, ensure_ascii=False, indent=0))  # noqa: ASYNC240


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=DEFAULT_SETS)
    parser.add_argument("--settings", default="800:1", help="frames:beam,...; the first is the reference")
    parser.add_argument("--save", type=Path, help="write each line's transcript here (JSON)")
    parser.add_argument("--before", type=Path, help="a --save of an earlier run to compare with")
    parser.add_argument("--speech", type=Path, default=SPEECH, help="the recordings and their manifest")
    args = parser.parse_args()
    chosen = [(int(f), int(b)) for f, b in (s.split(":") for s in args.settings.split(","))]
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp())
    trio.run(main, args.sets.split(","), chosen, args.save, args.before, args.speech)
