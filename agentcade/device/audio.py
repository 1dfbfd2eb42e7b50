"""The robot's microphone, speaker and touch sensors, from trio (``watcherobot`` is blocking).

:class:`RobotAudio` wraps the ``WatcheRobot`` of an :class:`~agentcade.device.robots.SdkRobot`
(it never touches its connection; that is the robot's business):

* :meth:`RobotAudio.microphone` opens ``robot.microphone.open_pcm()`` (the Daemon
  negotiates Opus 16 kHz mono 60 ms; the SDK decodes to PCM) and yields a trio channel of
  :class:`MicFrame` (PCM, when the SDK received it, how much was lost before it), read by
  one task that polls ``MicrophoneSession.read(0.1)`` in a worker thread: a cancelled read
  ends within 0.1 s, never abandoned (robot-sdk.md §6).
* :meth:`RobotAudio.play` plays one clip with ``robot.audio.play_pcm`` (24 kHz mono s16le,
  at most 4 MiB) and waits for the device's ``complete``; cancelling the wait stops the
  sound at once (``audio.stop()``, shielded), which is how a barge-in silences the robot.
* :meth:`RobotAudio.inputs` yields back-touch / screen-tap / roller events
  (``robot.inputs.wait``).

Audio calls do not go through the robot's directive limiter: the SDK orders its own
audio calls (``_audio_api_lock``), and a clip must be stoppable while a directive waits.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import trio
from watcherobot import WatcheRobotError
from watcherobot.audio import AudioPlayback
from watcherobot.inputs import InputEvent
from watcherobot.job import JobState
from watcherobot.robot import WatcheRobot

from agentcade.core.errors import DeviceError
from agentcade.device.robots import SdkRobot

__all__ = ["MAX_CLIP_BYTES", "MicFrame", "PlayOutcome", "RobotAudio"]

MAX_CLIP_BYTES = 4 * 1024 * 1024
"""The SDK's limit of one PCM clip (``watcherobot.audio.MAX_AUDIO_BYTES``)."""
SPEAKER_RATE = 24000
_POLL = 0.1
"""How long one blocking read/wait may take in a worker thread (the cancellation latency)."""
_PLAY_POLL = 0.02
_SLACK = 5.0
"""Extra seconds a clip may take beyond its length before we give up on ``complete``."""

PlayOutcome = Literal["completed", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class MicFrame:
    """One microphone frame, with what an echo canceller needs to keep the device's timeline.

    A loaded host reads frames late and, when it falls far enough behind, loses some (the
    SDK's queue and ours keep the newest): counting the frames that reach the listener
    would then put the robot's own voice at the wrong place in the microphone's timeline.
    """

    data: bytes
    """16 kHz mono s16le PCM."""
    at: float
    """``time.time()`` when the SDK received it from the robot (not when it was read)."""
    missing: int = 0
    """Samples lost just before this frame (frames dropped by a queue on the way)."""


class RobotAudio:
    """Microphone, speaker and inputs of one SDK robot; see the module docstring."""

    def __init__(self, robot: SdkRobot) -> None:
        self.robot = robot
        self.stopped_at = 0.0
        """When the last :meth:`stop` was requested (``time.time()``)."""

    @property
    def sdk(self) -> WatcheRobot:
        return self.robot.sdk

    @property
    def can_play(self) -> bool:
        """Whether the firmware takes host PCM (``audio.stream``)."""
        return "audio.stream" in self.robot.capabilities

    # -- microphone ------------------------------------------------------------------------

    @asynccontextmanager
    async def microphone(
        self, *, buffer: int = 64
    ) -> AsyncIterator[trio.MemoryReceiveChannel[MicFrame]]:
        """Open the microphone; :class:`MicFrame` s arrive on the channel.

        The channel ends when the robot closes the stream. Frames the consumer is too slow
        for are dropped (oldest kept), as the SDK's own queue does; the next frame that
        arrives says how many samples were lost (``missing``: ours, and the SDK's, from the
        device's packet numbers). Leaving the block closes the session on the robot
        (shielded).

        Raises:
            DeviceError: ``unavailable`` when the microphone cannot be opened.
        """
        sdk = self.sdk
        try:
            session = await trio.to_thread.run_sync(lambda: sdk.microphone.open_pcm(queue_size=32))
        except (TimeoutError, WatcheRobotError) as exc:
            raise DeviceError("unavailable", "microphone.open_pcm", str(exc) or "no reply") from exc
        send, receive = trio.open_memory_channel[MicFrame](buffer)

        async def reader() -> None:
            last: int | None = None
            lost = 0
            async with send:
                while True:
                    try:
                        frame = await trio.to_thread.run_sync(session.read, _POLL)
                    except TimeoutError:
                        continue
                    except RuntimeError:  # the session was closed (by the robot or us)
                        return
                    samples = len(frame.data) // 2
                    if last is not None and 1 < frame.sequence - last < 1000:
                        lost += (frame.sequence - last - 1) * samples
                    last = max(frame.sequence, last or 0)
                    try:
                        send.send_nowait(MicFrame(frame.data, frame.timestamp, lost))
                        lost = 0
                    except trio.WouldBlock:
                        lost += samples

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(reader)
                try:
                    yield receive
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True), contextlib.suppress(
                TimeoutError, WatcheRobotError, RuntimeError
            ):
                await trio.to_thread.run_sync(session.close)

    # -- speaker ---------------------------------------------------------------------------

    async def play(
        self, pcm: bytes, *, on_sound: Callable[[float], None] | None = None
    ) -> PlayOutcome:
        """Play 24 kHz mono s16le ``pcm`` (longer than 4 MiB: in several clips).

        Returns how it ended: ``completed``, ``failed`` (device error, checksum mismatch,
        no ``complete`` in time) or ``cancelled`` (stopped on the robot).
        Cancelling the call stops the sound on the robot before it returns.

        ``on_sound(at)`` is called as each clip's sound is sent, with the ``time.time()``
        it was sent at: the moment the robot has acknowledged the clip's
        beginning and its audio starts to flow, which tells an echo canceller where the
        robot's voice begins far better than the moment :meth:`play` was called (the
        acknowledgement's round trip lies between them, and it varies).

        Raises:
            DeviceError: ``unavailable`` when the robot cannot take host audio.
        """
        if len(pcm) % 2:
            pcm = pcm[:-1]
        for offset in range(0, len(pcm), MAX_CLIP_BYTES):
            outcome = await self._play_clip(pcm[offset:offset + MAX_CLIP_BYTES], on_sound)
            if outcome != "completed":
                return outcome
        return "completed"

    async def _play_clip(
        self, pcm: bytes, on_sound: Callable[[float], None] | None
    ) -> PlayOutcome:
        if not pcm:
            await trio.lowlevel.checkpoint()
            return "completed"
        sdk = self.sdk

        def begin() -> tuple[AudioPlayback, float]:
            playback = sdk.audio.play_pcm(pcm, sample_rate_hz=SPEAKER_RATE)
            return playback, time.time()

        try:
            playback, sent_at = await trio.to_thread.run_sync(begin)
        except CommandErrorTypes as exc:
            raise DeviceError("unavailable", "audio.play_pcm", str(exc) or "no reply") from exc
        if on_sound is not None:
            on_sound(sent_at)
        deadline = trio.current_time() + len(pcm) / (SPEAKER_RATE * 2) + _SLACK
        try:
            while True:
                state = await trio.to_thread.run_sync(_settle, playback, _PLAY_POLL)
                if state is JobState.COMPLETED:
                    return "completed"
                if state is JobState.CANCELLED:
                    return "cancelled"
                if state is JobState.FAILED:
                    return "failed"
                if trio.current_time() > deadline:
                    await self.stop()
                    return "failed"
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await self.stop()
            raise

    async def stop(self) -> None:
        """Stop any sound the host is playing (errors are ignored: it is a best effort).

        ``stopped_at`` is when the request left (``time.time()``): about when the sound
        stopped, which the acknowledgement's return comes well after on a busy host."""
        self.stopped_at = time.time()
        sdk = self.sdk
        with contextlib.suppress(*CommandErrorTypes):
            await trio.to_thread.run_sync(sdk.audio.stop)

    # -- inputs ----------------------------------------------------------------------------

    async def inputs(self) -> AsyncGenerator[InputEvent, None]:
        """Touch and roller events as they come (ends when the connection closes)."""
        sdk = self.sdk
        while True:
            try:
                event = await trio.to_thread.run_sync(sdk.inputs.wait, _POLL)
            except TimeoutError:
                continue
            except WatcheRobotError:
                return
            yield event


CommandErrorTypes: tuple[type[Exception], ...] = (TimeoutError, WatcheRobotError, ValueError)
"""What an audio call can raise (``CommandError`` is a ``WatcheRobotError``)."""


def _settle(playback: object, timeout: float) -> JobState:
    """Wait up to ``timeout`` s for the playback to end; its state then (worker thread)."""
    wait = getattr(playback, "wait", None)
    if wait is not None:
        with contextlib.suppress(Exception):
            wait(timeout)
    state = getattr(playback, "state", JobState.RUNNING)
    return state if isinstance(state, JobState) else JobState.RUNNING
