"""The embedded recogniser's decoding settings: accuracy and time per clip, side by side.

Run: ``.venv/bin/python tests/bench/bench_recognise.py [--sets numbers,draw_guess,riddle,outside]
[--settings 800:5,800:1]`` (the voice extra; 1-4 minutes on two loaded cores); a game's set
with ``:asked`` (``draw_guess:asked``) says each of its words as a guess's question, 是X吗.

Each setting is ``frames:beam``: the encoder's context at least (10 ms frames,
``local_asr.MIN_FRAMES``) and the first decoding's beam (``local_asr.BEAM``). The first is
the reference; every clip is recognised with each setting in turn, in this process, so the
load of the moment falls on all of them alike, and the times are given as ratios too.

The lines are spoken by the simulated child (the neural voice at a child's pitch, 16 kHz)
and recognised as the listener does (the game's vocabulary as the prompt, the prompt-echo
guard): 猜数字's numbers said alone (一 … 二十) and a few guesses; the drawing game's and the
riddle game's decks said alone; lines said outside a game. Printed per set and setting:
lines with every syllable heard, lines judged as meant (the number parsed, the deck's word
matched by the judge, outside a game: routed as meant), p50/p90 ms per clip and the ratio to
the reference, and the lines missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import agentcade.voice.local_asr as local_asr
from agentcade.core.judge import is_match, parse_number, spell_number
from agentcade.core.skill import Skill
from agentcade.game.loader import builtin_games_dir
from agentcade.sim.child import child_voice
from agentcade.testing.ear import heard_share
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.wiring.hearing import ROUND_WORDS

NUMBERS = [spell_number(n) for n in range(1, 21)]
OUTSIDE = ["玩猜数字", "玩猜谜语", "玩你画我猜", "来玩海龟汤", "有什么游戏", "结束游戏", "你今天开心吗"]


def _game(game: str) -> tuple[list[str], list[str]]:
    """(what the recogniser is told may be said in ``game``, its vocabulary)."""
    skill = Skill.load(builtin_games_dir() / game / "SKILL.md")
    return [skill.name, *skill.vocabulary, *ROUND_WORDS], list(skill.vocabulary)


def _sets(names: list[str]) -> list[tuple[str, list[str], list[tuple[str, str]]]]:
    """(name, bias phrases, [(line, what it means)])."""
    out = []
    for name in names:
        if name == "numbers":
            bias, _ = _game("guess_number")
            lines = [(n, n) for n in NUMBERS] + [(f"我猜{n}", n) for n in ("十", "十五", "四")]
            out.append((name, bias, lines))
        elif name == "outside":
            games = ["玩猜数字", "玩猜谜语", "玩你画我猜", "玩海龟汤"]
            out.append((name, [*games, *ROUND_WORDS], [(line, line) for line in OUTSIDE]))
        else:
            game, _, form = name.partition(":")  # draw_guess:asked - each word asked (是X吗)
            bias, vocabulary = _game(game)
            words = [w for w in vocabulary if len(w) <= 3 and not w.endswith("吗")]
            said = "是{}吗" if form == "asked" else "{}"
            out.append((name, bias, [(said.format(w), w) for w in words]))
    return out


def _meant(name: str, meant: str, heard: str) -> bool:
    if name == "numbers":
        return parse_number(heard) == parse_number(meant)
    if name == "outside":
        return heard_share(meant, heard) >= 0.75
    return is_match(heard, meant)


async def main(names: list[str], settings: list[tuple[int, int]]) -> None:
    recognizer = await LocalRecognizer.load()
    child = await child_voice()
    print(f"recognition settings (frames:beam), the first is the reference; os load "
          f"{os.getloadavg()[0]:.1f}")
    for name, bias, lines in _sets(names):
        recognizer.bias = lambda bias=bias: bias  # type: ignore[misc]
        clips = [(line, meant, await child.synthesize(line)) for line, meant in lines]
        times: dict[tuple[int, int], list[float]] = {s: [] for s in settings}
        exact = dict.fromkeys(settings, 0)
        judged = dict.fromkeys(settings, 0)
        misses: dict[tuple[int, int], list[str]] = {s: [] for s in settings}
        for line, meant, pcm in clips:
            for setting in settings:
                local_asr.MIN_FRAMES, local_asr.BEAM = setting
                started = time.perf_counter()
                heard = await recognizer.recognize(pcm, len(pcm) / 32)
                times[setting].append(time.perf_counter() - started)
                exact[setting] += heard_share(line, heard) == 1.0
                ok = _meant(name, meant, heard)
                judged[setting] += ok
                if not ok:
                    misses[setting].append(f"{line}→{heard or '∅'}")
        reference = statistics.median(times[settings[0]])
        print(f"\n{name} ({len(clips)} lines; os load {os.getloadavg()[0]:.1f})")
        print(f"  {'setting':9} {'syllables':>9} {'judged':>7} {'p50 ms':>7} {'p90 ms':>7} {'ratio':>6}")
        for setting in settings:
            values = sorted(times[setting])
            p50 = statistics.median(values)
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
            print(f"  {setting[0]:4}:{setting[1]:<4} {exact[setting]:4}/{len(clips):<4} "
                  f"{judged[setting]:3}/{len(clips):<3} {p50 * 1000:7.0f} {p90 * 1000:7.0f} "
                  f"{p50 / reference:6.2f}")
        for setting in settings:
            if misses[setting]:
                print(f"  missed {setting[0]}:{setting[1]}: " + " ".join(misses[setting]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="numbers,draw_guess,riddle,outside")
    parser.add_argument("--settings", default="800:5,800:1",
                        help="frames:beam,...; the first is the reference")
    args = parser.parse_args()
    chosen = [(int(f), int(b)) for f, b in (s.split(":") for s in args.settings.split(","))]
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp())
    trio.run(main, args.sets.split(","), chosen)
