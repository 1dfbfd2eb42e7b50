"""Playing for a while: 200 spoken lines across the four games on the simulated robot.

Run: ``.venv/bin/python tests/bench/bench_soak.py [--lines 200]`` (needs espeak-ng; about
ten minutes at the default 4x speed).

The games' e2e scripts (``agentcade e2e``) are played one after another, round after round,
by voice on the simulated robot (Silero detection, the scripted recogniser, the offline
model, espeak-ng both ways) until ``--lines`` lines were said. Printed: lines answered
(something was said back), steps that failed their e2e check, lines not heard, the longest
wait for an answer, whether anything was stuck at the end (a game busy, the output queue
not idle, the robot speaking), and the growth of Python memory (tracemalloc) from after
the first round to the end, after a garbage collection. Goal: every line answered,
nothing stuck, growth < 20 MB.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
import tracemalloc
from typing import Any

import trio

from agentcade.commands.e2e import InProcessStage, _play_step, builtin_plans
from agentcade.core.trace import Trace
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import EspeakSynthesizer
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.voice import VoiceLoop, running


async def soak(total: int, speed: float) -> None:
    records: list[dict[str, Any]] = []
    trace = Trace(records.append)
    mouth = EspeakSynthesizer(rate=16000)
    recognizer = ScriptedRecognizer([])
    steps = [(plan, i) for plan in builtin_plans([]) for i in range(len(plan.steps))]
    said = answered = failed = not_heard = 0
    slowest = 0.0
    baseline: int | None = None
    started = time.monotonic()
    device = SimDevice(audio_speed=speed)
    async with open_sim_robot(device=device) as robot:
        voice = VoiceRobot(robot, EspeakSynthesizer(), trace=trace, print_speech=False)
        async with open_pipeline(voice, remote=[], trace=trace) as (agent, _):
            loop = VoiceLoop(agent, voice, recognizer, trace=trace, greet=False)
            async with running(loop):
                stage = InProcessStage(agent, loop, voice, recognizer, robot, records)
                while said < total:
                    for plan, i in steps:
                        if said >= total:
                            break
                        step = plan.steps[i]
                        following = plan.steps[i + 1] if i + 1 < len(plan.steps) else None
                        t0 = time.monotonic()
                        outcome = await _play_step(
                            plan, step, stage, mouth, trace,
                            wait_idle=following is None or not following.during,
                        )
                        slowest = max(slowest, time.monotonic() - t0)
                        said += 1
                        answered += bool(outcome.spoke)
                        not_heard += "not heard" in outcome.problems
                        if outcome.problems:
                            failed += 1
                            print(f"  line {said}: {plan.game} {outcome.line}: "
                                  f"{'; '.join(outcome.problems)}", flush=True)
                    records.clear()  # the trace of a long session is not kept in memory
                    del device.audio.clips[:-1]  # nor the simulator's copy of every clip
                    gc.collect()
                    if baseline is None:
                        tracemalloc.start()
                        baseline = tracemalloc.get_traced_memory()[0]
                await loop.wait_ready_for_speech()
                stuck = [name for name, bad in (
                    ("a game still busy", agent.current is not None and agent.current.busy),
                    ("the output queue not idle", not agent.output.idle),
                    ("the robot still speaking", voice.speaking),
                ) if bad]
    records.clear()
    gc.collect()
    growth = (tracemalloc.get_traced_memory()[0] - (baseline or 0)) / 2**20
    tracemalloc.stop()
    minutes = (time.monotonic() - started) / 60
    print(f"soak: {said} lines in {minutes:.1f} min on the simulated robot ({speed:g}x)")
    print(f"answered {answered}/{said}; steps failed {failed}; not heard {not_heard}; "
          f"longest line {slowest:.1f} s")
    print(f"stuck at the end: {', '.join(stuck) or 'nothing'}")
    print(f"Python memory growth after the first round: {growth:.1f} MB "
          f"({'OK' if growth < 20 else 'OVER'}: goal < 20 MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--speed", type=float, default=4.0)
    args = parser.parse_args()
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp(prefix="agentcade-soak-"))
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "ASR_PROVIDER"):
        os.environ.pop(name, None)
    trio.run(soak, args.lines, args.speed)


if __name__ == "__main__":
    main()
