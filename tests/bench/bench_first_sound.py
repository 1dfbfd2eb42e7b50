"""How soon the robot's first sound comes once a reply's text is known, and its CPU.

Run: ``nice .venv/bin/python tests/bench/bench_first_sound.py [--sessions N]`` (the voice
extra; about a minute per session).

The neural voice on the simulated robot (its speaker eight times faster than real time, so
that whole replies are said quickly; the first sound is measured at the speaker all the
same) says the replies a family hears over one session: two rounds of 猜数字 and one of
猜谜语, the games' and the host's own lines (openings, verdicts, hints, endings). Each reply
is said twice in a row, once by the robot as it is (a reply's first clause alone, from its
voice; the clauses it said kept by the voice) and once as before issue 55 (the first
sentence whole, with the voice's 40 ms lead; nothing kept), the order swapped every reply:
one process, the same load of the moment for both. Printed per setting: from ``speak`` to
the first sample of voice at the simulated speaker (p50, p90), split into replies whose first
clause was said before in the session and the rest (``--sessions`` > 1: the voice keeps
what earlier sessions said, as a robot playing all day does), and the process CPU per reply.
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

from agentcade.sim import SimDevice, open_sim_robot
from agentcade.voice.pcm import leading_silence
from agentcade.voice.phones import clauses
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tts import NeuralSynthesizer

SESSION = [
    "好呀，我们来玩猜数字。",
    "我想好了一个一到二十之间的数，你有五次机会，猜猜看吧。",
    "比十还大不少，你还有四次机会。",
    "比十五还小一些，你还有三次机会。",
    "它是一个双数。",
    "比十二还大一些，你还有两次机会。",
    "猜中了！就是十四，你用了四次。",
    "好，再来一局！我想好了一个一到二十之间的数，你有五次机会，猜猜看吧。",
    "比十还小不少，你还有四次机会。",
    "比五还大一些，你还有三次机会。",
    "猜中了！就是七，你用了两次。",
    "你一共玩了两局，猜中了两局。",
    "好呀，我们来猜谜语！听好了：有时挂在天边，有时落在水面，七种颜色真好看。你猜是什么？",
    "不对哦，再想想，也可以要个提示。",
    "给你一个提示：雨后才能看到它。",
    "猜对了，谜底就是彩虹！要不要再来一个？",
    "第二个谜语。听好了：小小一只船，没桨也没帆，白天看不见，晚上挂天边。你猜是什么？",
    "不对哦，再想想，也可以要个提示。",
    "猜对了，谜底就是月亮！要不要再来一个？",
    "谜底是月亮。你一共猜了两个谜语，猜对了两个。",
    "我刚才没听清，能再说一遍吗？",
]


async def first_sound(robot: VoiceRobot, device: SimDevice, text: str) -> tuple[float, float]:
    """(ms from ``speak`` to the first sample of voice at the speaker, CPU s of the reply)."""
    clips = len(device.audio.clips)
    cpu, began = time.process_time(), trio.current_time()
    await robot.speak(text)
    used = time.process_time() - cpu
    clip = device.audio.clips[clips]
    assert clip.started is not None
    # The silence the clip begins with, as it sounds at real time.
    sounded = clip.started + leading_silence(clip.pcm, 24000)
    return (sounded - began) * 1000, used


async def main(sessions: int) -> None:
    device = SimDevice(audio_speed=8.0)
    voice = await NeuralSynthesizer.load()
    settings = ("as it is", "as before issue 55")
    ms: dict[tuple[str, bool], list[float]] = {(s, seen): [] for s in settings for seen in (False, True)}
    cpu: dict[str, list[float]] = {s: [] for s in settings}
    said: set[str] = set()
    load = os.getloadavg()[0]
    async with open_sim_robot(device=device) as sim:
        robot = VoiceRobot(sim, voice, print_speech=False)
        for session in range(sessions):
            for i, text in enumerate(SESSION):
                first = clauses(text)[0].text
                seen = first in said
                order = settings if (i + session) % 2 == 0 else settings[::-1]
                for setting in order:
                    robot.first_sound_sooner = voice.said.enabled = setting == settings[0]
                    wait, used = await first_sound(robot, device, text)
                    ms[setting, seen].append(wait)
                    cpu[setting].append(used)
                said.add(first)
    print(f"first sound after the reply's text, neural voice on the simulated robot, {sessions} "
          f"session(s) of {len(SESSION)} replies, both settings each reply; os load {load:.1f} "
          f"at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"  {'setting':20} {'first said':>10} {'n':>3} {'p50 ms':>7} {'p90 ms':>7}   {'said before':>11} "
          f"{'n':>3} {'p50 ms':>7} {'p90 ms':>7}   {'CPU/reply ms':>12}")
    for setting in settings:
        row = f"  {setting:20} "
        for seen in (False, True):
            values = sorted(ms[setting, seen])
            p90 = values[min(len(values) - 1, int(0.9 * len(values)))] if values else float("nan")
            median = statistics.median(values) if values else float("nan")
            row += f"{'':10} {len(values):3} {median:7.0f} {p90:7.0f}   "
        row += f"{statistics.mean(cpu[setting]) * 1000:12.0f}"
        print(row)
    now, before = (statistics.median(ms[s, False] + ms[s, True]) for s in settings)
    cpu_ratio = statistics.mean(cpu[settings[0]]) / statistics.mean(cpu[settings[1]])
    print(f"\nall replies p50: {now:.0f} ms as it is, {before:.0f} ms before ({now / before:.2f}x); "
          f"CPU per reply {cpu_ratio:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("AGENTCADE_HOME", tempfile.mkdtemp())
    trio.run(main, args.sessions)
