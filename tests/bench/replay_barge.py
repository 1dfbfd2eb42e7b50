"""Replay a recorded barge-in run through other echo-cancellation and detection settings.

Run: ``.venv/bin/python tests/bench/bench_barge.py --capture run.pkl`` once (the simulated
robot at real time; the robot is never stopped, so every line is heard over its whole
sentence), then ``.venv/bin/python tests/bench/replay_barge.py run.pkl "dict()"
"dict(ns=False, prob=0.7, ms=128)" ...`` — each argument one setting: ``ns`` (AEC3's noise
suppression), ``agc`` (its gain control), ``mic`` (False: detection hears the canceller's
output even while the robot is silent), ``prob``/``ms`` (what starts an utterance while the
robot speaks: ``TUNING.over_speech_prob``/``over_speech_ms``; ``wprob``/``wms`` the
same while the canceller is still converging: ``warming_prob``/``warming_ms``; ``ems`` the
same for a sound louder than the robot's echo could be: ``over_echo_ms``; ``rprob``/``rms_``
the same just after the robot's voice resumed inside a sentence: ``resume_prob``/``resume_ms``;
``model``: False leaves out the model of the robot's echo, ``EchoCanceller.clean``).

The capture holds every microphone frame, clip and stop in the order the host saw them, so
the reference meets the same frames as in the run: each setting is judged on the same
sound, without the simulated robot, faster than real time and undisturbed by load.

Printed per setting: false starts over the robot with nobody talking (per robot sentence)
and before the child's line began; at each loudness, lines found over the robot and the
audio time from the line's first sample to the start (p50, max); CPU per 10 ms frame.
"""

from __future__ import annotations

import ast
import pickle
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentcade.voice.echo import EchoCanceller
from agentcade.voice.tuning import TUNING, Tuning
from agentcade.voice.vad import SileroDetector, Step

TOLERANCE = 1600
"""Samples before a line's first one where a start still counts as that line (100 ms)."""


def replay(events: list[tuple[Any, ...]], *, ns: bool = True, agc: bool = False,
           prob: float = TUNING.over_speech_prob, ms: int = TUNING.over_speech_ms,
           wprob: float = TUNING.warming_prob, wms: int = TUNING.warming_ms,
           ems: int = TUNING.over_echo_ms, mic: bool = True,
           rprob: float = TUNING.resume_prob, rms_: int = TUNING.resume_ms,
           model: bool = True) -> str:
    echo = EchoCanceller()
    from livekit import rtc

    echo._apm = rtc.AudioProcessingModule(
        echo_cancellation=True, noise_suppression=ns, high_pass_filter=True, auto_gain_control=agc
    )
    detector = SileroDetector(Tuning(over_speech_prob=prob, over_speech_ms=ms,
                                        warming_prob=wprob, warming_ms=wms, over_echo_ms=ems,
                                        resume_prob=rprob, resume_ms=rms_))
    phase, awaiting, pos = "", False, 0
    false_alone = sentences = false_before = 0
    lines: list[list[Any]] = []  # [first sample, loudness, samples, start or None]
    cpu, frames = 0.0, 0
    for event in events:
        kind = event[0]
        if kind == "phase":
            phase = event[1]
        elif kind == "play":
            echo.play(event[1], now=event[2] if len(event) > 2 else None)
            sentences += phase == "alone"
            awaiting = phase == "child"
        elif kind == "stop":
            echo.stop(now=event[1] if len(event) > 1 else None)
        elif kind == "onset":
            lines.append([pos, event[1], event[2], None])
            awaiting = False
        elif kind == "mic":
            frame = event[1]
            if len(event) > 2:
                echo.arrived(frame, at=event[2], missing=event[3])
            else:
                echo.arrived(frame)
            t0 = time.perf_counter()
            # empty while the robot's sentence is placed; processed as it came
            out = echo.process(frame, now=event[2] if len(event) > 2 else None)
            step = Step("quiet")
            if out:  # as the listener tells it (EchoCanceller.robot_voice)
                robot = echo.robot_voice(speaking=False)
                detector.robot = replace(robot, speaking=echo.audible if mic else echo.playing,
                                         clean=model and echo.clean,
                                         measured=model and echo.measured)
                step = detector.feed(out, (echo.last_clean if model else echo.last_input)
                                     if mic else None)
            cpu += time.perf_counter() - t0
            frames += len(frame) // 320
            if step.kind == "start":
                line = lines[-1] if lines else None
                if (phase == "child" and line is not None and line[3] is None
                        and line[0] - TOLERANCE <= pos <= line[0] + line[2] + 16000):
                    line[3] = pos
                elif echo.playing and phase == "alone":
                    false_alone += 1
                elif echo.playing and awaiting:
                    false_before += 1
            elif step.kind == "end":
                detector.reset()
            pos += len(frame) // 2
    parts = [f"false starts: {false_alone} in {sentences} sentences alone, "
             f"{false_before} before a line"]
    for gain in sorted({line[1] for line in lines}, reverse=True):
        mine = [line for line in lines if line[1] == gain]
        late = [(line[3] - line[0]) / 16 for line in mine if line[3] is not None]
        missed = [i for i, line in enumerate(mine) if line[3] is None]
        p50 = statistics.median(late) if late else float("nan")
        parts.append(f"x{gain:g} found {len(late)}/{len(mine)} p50 {p50:.0f} ms "
                     f"max {max(late, default=float('nan')):.0f}"
                     + (f" missed #{missed}" if missed else ""))
    parts.append(f"CPU {cpu / max(frames, 1) * 1000:.3f} ms per 10 ms")
    return " | ".join(parts)


def main() -> None:
    events = pickle.loads(Path(sys.argv[1]).read_bytes())  # our own capture
    for spec in sys.argv[2:] or ["dict()"]:
        call = ast.parse(spec, mode="eval").body
        assert isinstance(call, ast.Call)
        settings = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        print(f"{spec:40s} {replay(events, **settings)}", flush=True)


if __name__ == "__main__":
    main()
