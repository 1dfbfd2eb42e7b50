"""The simulated robot's audio clock: its own, whatever the host's loop does (issue 41).

A host stalled for half a second (a synchronous stall of its event loop: what a starved
host looks like from inside) must not make the robot's microphone late when the robot runs
in a process of its own, as a real robot runs beside its host; in the host's loop it is
late, and the device says so (``sim_behind``), so a test can tell a simulator's artifact
from a host's bug.
"""

from __future__ import annotations

import math
import time
from array import array
from typing import Any

import trio

from agentcade.core.trace import Trace
from agentcade.device.audio import RobotAudio
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.sim.audio import MIC_FRAME_SECONDS
from agentcade.sim.process import open_sim_process_robot
from agentcade.voice.pcm import rms

STALL_S = 0.5


def _stall() -> None:
    time.sleep(STALL_S)  # the host's loop stalls (a busy desktop, seen from inside)


async def test_in_the_host_loop_a_stalled_host_makes_the_simulated_robot_late_and_it_says_so() -> None:
    records: list[dict[str, Any]] = []
    device = SimDevice(trace=Trace(records.append))
    async with open_sim_robot(device=device) as sim, RobotAudio(sim).microphone() as frames:
        await frames.receive()
        _stall()
        await trio.sleep(0.3)
    [(worst, late_frames)] = device.audio.behind
    assert worst >= STALL_S - MIC_FRAME_SECONDS
    assert late_frames >= 1
    [record] = [r for r in records if r["type"] == "sim_behind"]
    assert record["late_ms"] >= (STALL_S - MIC_FRAME_SECONDS) * 1000


async def test_in_its_own_process_the_simulated_robot_keeps_time_while_the_host_stalls() -> None:
    records: list[dict[str, Any]] = []
    async with open_sim_process_robot(trace=Trace(records.append)) as sim:
        async with RobotAudio(sim).microphone() as frames:
            await frames.receive()
            _stall()
            await trio.sleep(0.3)
        behind = sim.device.audio.behind
    assert behind == []
    assert [r for r in records if r["type"] == "sim_behind"] == []


async def test_a_robot_in_its_own_process_hears_what_a_test_feeds_and_plays_what_it_is_sent() -> None:
    tone = array("h", (round(8000 * math.sin(2 * math.pi * 440 * i / 16000))
                       for i in range(16000))).tobytes()
    async with open_sim_process_robot() as sim:
        device, audio = sim.device, RobotAudio(sim)
        async with audio.microphone() as frames:
            device.audio.microphone.feed(tone)
            with trio.fail_after(10):
                await device.audio.microphone.drained()
                loud = 0
                while loud < 16000 * 0.8:
                    frame = await frames.receive()
                    if rms(frame.data) > 2000:
                        loud += len(frame.data) // 2
        with trio.fail_after(10):
            assert await audio.play(bytes(24000)) == "completed"
            await device.audio.wait_clips(1)
            await device.audio.wait_done(device.audio.clips[0])
        assert device.audio.clips[0].outcome == "complete"
        assert await device.clip_pcm(0) == bytes(24000)
