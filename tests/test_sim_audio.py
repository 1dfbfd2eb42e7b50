"""The simulated robot's microphone, speaker and back touch, through the real SDK from trio."""

from __future__ import annotations

import contextlib
import math
import struct

import trio

from agentcade.device.audio import RobotAudio
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.voice.pcm import rms


def tone(seconds: float, rate: int, amplitude: int = 6000) -> bytes:
    return b"".join(
        struct.pack("<h", int(amplitude * math.sin(2 * math.pi * 300 * i / rate)))
        for i in range(int(seconds * rate))
    )


async def test_pcm_fed_to_the_microphone_arrives_as_decoded_opus_frames_of_60_ms() -> None:
    device = SimDevice(audio_speed=4.0)
    with trio.fail_after(20):
        async with open_sim_robot(device=device) as robot:
            audio = RobotAudio(robot)
            async with audio.microphone() as frames:
                device.audio.microphone.feed(tone(1.0, 16000))
                heard: list[bytes] = []
                async for frame in frames:
                    heard.append(frame.data)
                    if len(heard) >= 30:
                        break
            assert device.received[-1][0] == "ctrl.microphone.close"
    assert {len(f) for f in heard[1:-1]} == {1920}  # 60 ms of 16 kHz mono s16le
    loud = [f for f in heard if rms(f) > 2000]
    assert 14 <= len(loud) <= 18  # one second of tone, through Opus
    assert all(rms(f) < 300 for f in heard[-5:])  # then the microphone hears silence


async def test_a_clip_is_streamed_with_credits_and_completes_with_a_matching_sha256() -> None:
    device = SimDevice(audio_speed=8.0)
    pcm = tone(2.0, 24000)  # 96000 bytes: 24 frames of 4096, more than the 8 credits
    with trio.fail_after(20):
        async with open_sim_robot(device=device) as robot:
            outcome = await RobotAudio(robot).play(pcm)
    clip = device.audio.clips[0]
    assert outcome == "completed"
    assert clip.outcome == "complete"
    assert clip.pcm == pcm
    assert clip.started is not None
    assert clip.ended is not None
    assert clip.ended - clip.started >= 2.0 / 8.0 * 0.95


async def test_a_clip_that_arrives_damaged_fails_the_sha256_check() -> None:
    device = SimDevice(audio_speed=8.0)
    device.audio.corrupt_next = True
    with trio.fail_after(20):
        async with open_sim_robot(device=device) as robot:
            outcome = await RobotAudio(robot).play(tone(0.5, 24000))
    assert outcome == "failed"
    assert device.audio.clips[0].outcome == "checksum_mismatch"


async def test_cancelling_playback_stops_the_sound_on_the_robot_at_once() -> None:
    device = SimDevice()
    with trio.fail_after(20):
        async with open_sim_robot(device=device) as robot:
            audio = RobotAudio(robot)
            with trio.move_on_after(0.5):
                await audio.play(tone(5.0, 24000))
            clip = device.audio.clips[0]
            assert clip.outcome == "aborted"
            assert clip.ended is not None
            assert clip.ended - (clip.started or clip.began) < 1.0
            assert ("ctrl.audio.stop", {}) in device.received


async def test_a_back_touch_press_reaches_the_inputs() -> None:
    device = SimDevice()
    with trio.fail_after(20):
        async with open_sim_robot(device=device) as robot:
            events = RobotAudio(robot).inputs()
            async with contextlib.aclosing(events):
                device.audio.press_back_touch()
                event = await events.__anext__()
    assert (event.source, event.action) == ("back_touch", "press")
