"""The simulated robot's microphone, speaker and back-touch sensor (device side of the wire).

What the Daemon and firmware do, as far as the SDK shows it (robot-sdk.md §9, the SDK's
``robot.py`` audio code):

* **Microphone.** ``ctrl.microphone.open`` is ACKed with a ``session_id``; from then on the
  device sends one binary ``WSPK`` audio frame (type 1, stream id = session id) every
  60 ms carrying one Opus packet of 16 kHz mono audio (960 samples), encoded here with
  PyAV's libopus like the Daemon negotiates it. The microphone hears silence unless a
  test (or ``agentcade run --say-file``) :meth:`SimMicrophone.feed` s it PCM.
  ``ctrl.microphone.close`` stops the frames.
* **Speaker.** ``ctrl.audio.stream.begin`` announces a clip (24 kHz mono s16le, total
  bytes, sha256). The host then sends the PCM in 4096-byte ``WSPK`` audio frames, each
  one paid for by a credit: the device answers every frame with ``evt.audio.buffer_status``
  (``free_frames``, ``expected_rx_seq``). The clip plays in real time (divided by
  ``speed``) from its first frame; when all bytes are in and the time is up the device
  reports ``reason: complete`` with the sha256 of what it received (the SDK fails the
  playback on a mismatch). ``ctrl.audio.stop`` or a new stream aborts the clip
  (``aborted`` / ``replaced_by_new_stream``).
* **Back touch.** :meth:`SimAudio.press_back_touch` sends ``evt.sdk.input``
  (``source: back_touch``, ``action: press``), which the SDK queues for
  ``robot.inputs.wait()``.

Every clip is kept in :attr:`SimAudio.clips` (:class:`SimClip`: the PCM received, when it
started and ended, how it ended), so tests read what the robot said.

**The device's clock.** A real robot's microphone is driven by its own hardware clock,
whatever the desktop does. Here the microphone's sample position follows the device loop's
clock from the moment it was opened (:meth:`SimAudio.mic_position`), not the frames sent so
far: a late frame still carries the samples (and the echo) of its own moment. When the
device itself falls behind (its loop starved, a frame sent more than
:data:`BEHIND_S` after it was due), it says so: ``sim_behind`` in the trace when it has
caught up again (how late it was at worst, how many frames), and :attr:`SimAudio.behind`,
so a test tells a simulator's artifact from a host's bug. A robot whose clock must not
wait for a busy host runs in a process of its own: :mod:`agentcade.sim.process`.
"""

from __future__ import annotations

import hashlib
import json
import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.sim._nack import _Nack
from agentcade.sim.room import Room, RoomMixer

__all__ = ["BEHIND_S", "MIC_FRAME_BYTES", "MIC_FRAME_SECONDS", "SimAudio", "SimClip", "SimMicrophone"]

MIC_RATE = 16000
MIC_FRAME_SAMPLES = 960
MIC_FRAME_BYTES = MIC_FRAME_SAMPLES * 2
MIC_FRAME_SECONDS = MIC_FRAME_SAMPLES / MIC_RATE
"""60 ms: the Daemon's Opus packet size."""
BEHIND_S = 0.03
"""A microphone frame sent this much after it was due (real seconds): the device itself fell
behind (half a frame; a real robot's frames are never late at the source)."""

SPEAKER_RATE = 24000
SPEAKER_BYTES_PER_SECOND = SPEAKER_RATE * 2
SPEAKER_FREE_FRAMES = 8
"""Device buffer slots (the SDK never uses more than 8 credits)."""

_FRAME_AUDIO = 1
_FLAG_FIRST = 1
_FLAG_LAST = 2

Broadcast = Callable[[str | bytes], None]


def _envelope(type_: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": type_, "code": 0, "data": data}, separators=(",", ":"))


def _wspk(flags: int, stream_id: int, sequence: int, payload: bytes) -> bytes:
    from watcherobot.protocol import build_wspk

    return build_wspk(_FRAME_AUDIO, flags, stream_id, sequence, payload)


@dataclass(eq=False)
class SimClip:
    """One clip the host streamed to the speaker."""

    stream_id: int
    total_bytes: int
    sha256: str
    data: bytearray = field(default_factory=bytearray)
    began: float = 0.0
    """trio time of ``ctrl.audio.stream.begin``."""
    started: float | None = None
    """trio time of the first audio frame (sound starts)."""
    ended: float | None = None
    mic_start: float | None = None
    """The microphone's sample position (16 kHz) when the sound started: the room's echo
    runs on the device's one clock."""
    mic_end: float | None = None
    outcome: str = "playing"
    """``playing``, ``complete``, ``aborted``, ``replaced_by_new_stream``, ``checksum_mismatch``."""
    done: trio.Event = field(default_factory=trio.Event)

    @property
    def pcm(self) -> bytes:
        return bytes(self.data)

    @property
    def seconds(self) -> float:
        """Length of the audio received."""
        return len(self.data) / SPEAKER_BYTES_PER_SECOND


class SimMicrophone:
    """What the simulated microphone hears next: PCM queued by :meth:`feed`, else silence,
    in the room's noise and echo when it has a :class:`~agentcade.sim.room.RoomMixer`."""

    def __init__(self, mixer: RoomMixer | None = None) -> None:
        self.mixer = mixer
        self._pending = bytearray()
        self._drained = trio.Event()
        self._drained.set()
        self.frames_sent = 0
        self.sent_at = 0.0
        """Device time the last frame was sent."""
        self.origin: float | None = None
        """Device time the open stream's first sample was heard (its clock's zero)."""
        self.open_session: int | None = None

    def feed(self, pcm: bytes) -> None:
        """Queue 16 kHz mono s16le audio; it is heard from the next frame on."""
        if len(pcm) % 2:
            raise ValueError("PCM ends with a partial sample")
        self._pending += pcm
        if self._pending:
            self._drained = trio.Event()

    @property
    def pending_seconds(self) -> float:
        return len(self._pending) / (MIC_RATE * 2)

    async def drained(self) -> None:
        """Wait until everything fed has been sent."""
        await self._drained.wait()

    def next_frame(self) -> bytes:
        """The next 60 ms of PCM (silence when nothing is queued)."""
        chunk = bytes(self._pending[:MIC_FRAME_BYTES])
        del self._pending[:MIC_FRAME_BYTES]
        if not self._pending:
            self._drained.set()
        if self.mixer is not None:
            return self.mixer.frame(chunk, MIC_FRAME_SAMPLES)
        return chunk + bytes(MIC_FRAME_BYTES - len(chunk))


class _OpusEncoder:
    """16 kHz mono Opus, 60 ms packets (PyAV's libopus, an SDK dependency)."""

    def __init__(self) -> None:
        import av

        self._av: Any = av
        ctx: Any = av.CodecContext.create("libopus", "w")
        ctx.sample_rate = MIC_RATE
        ctx.layout = "mono"
        ctx.format = "s16"
        ctx.bit_rate = 32000
        ctx.options = {"frame_duration": "60", "application": "voip"}
        ctx.open()
        self._ctx = ctx
        self._pts = 0

    def encode(self, pcm: bytes) -> list[bytes]:
        frame: Any = self._av.AudioFrame(format="s16", layout="mono", samples=MIC_FRAME_SAMPLES)
        frame.planes[0].update(pcm)
        frame.sample_rate = MIC_RATE
        frame.pts = self._pts
        self._pts += MIC_FRAME_SAMPLES
        return [bytes(packet) for packet in self._ctx.encode(frame)]


class SimAudio:
    """Microphone, speaker and back touch of a :class:`~agentcade.sim.SimDevice`.

    Args:
        broadcast: sends a text or binary frame to every connected client.
        speed: playback and microphone run this many times faster than real time.
    """

    def __init__(
        self, broadcast: Broadcast, *, speed: float = 1.0, room: Room | None = None,
        trace: Trace = NULL_TRACE,
    ) -> None:
        self._broadcast = broadcast
        self._trace = trace
        self.speed = speed
        self.room = room or Room()
        self.microphone = SimMicrophone(
            None if self.room.quiet else RoomMixer(self.room, self.speaker_tap)
        )
        self.clips: list[SimClip] = []
        self.touches = 0
        self.corrupt_next = False
        """Test hook: flip one byte of the next clip as it arrives (the sha256 check fails)."""
        self._next_session = 0
        self._mic_scope: trio.CancelScope | None = None
        self._clip: SimClip | None = None
        self._clip_scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self.behind: list[tuple[float, int]] = []
        """Each time the device fell behind: (worst lateness in seconds, frames late)."""
        self._late: tuple[float, int] | None = None

    def attach(self, nursery: trio.Nursery) -> None:
        """Where the microphone and playback tasks run (the device's nursery)."""
        self._nursery = nursery

    # -- test hooks ------------------------------------------------------------------------

    def press_back_touch(self, action: str = "press") -> None:
        """The family touches the robot's back."""
        self.touches += 1
        data = {"source": "back_touch", "action": action, "touch_id": 0,
                "timestamp_ms": int(trio.current_time() * 1000) % 2**31}
        self._broadcast(_envelope("evt.sdk.input", data))

    @property
    def playing(self) -> SimClip | None:
        """The clip sounding now, if any."""
        clip = self._clip
        return clip if clip is not None and clip.outcome == "playing" else None

    async def _until(self, ready: Callable[[], bool]) -> None:
        while not ready():
            await self._changed.wait()

    async def wait_clips(self, count: int) -> None:
        """Wait until ``count`` clips have begun (wrap in ``trio.fail_after``)."""
        await self._until(lambda: len(self.clips) >= count)

    async def wait_sound(self, clip: SimClip) -> None:
        """Wait until ``clip``'s first audio frame has arrived (or it ended without one)."""
        await self._until(lambda: clip.started is not None or clip.outcome != "playing")

    async def wait_done(self, clip: SimClip) -> None:
        """Wait until ``clip`` has ended (whichever way)."""
        await self._until(lambda: clip.outcome != "playing")

    def mic_position(self) -> float:
        """The microphone's present, in samples since it opened: where a sound starting now
        is heard. The device's clock, not the frames sent: they may be late."""
        mic = self.microphone
        if mic.origin is None:
            return mic.frames_sent * MIC_FRAME_SAMPLES
        clock = (trio.current_time() - mic.origin) * self.speed * MIC_RATE
        return max(clock, mic.frames_sent * MIC_FRAME_SAMPLES)

    def speaker_tap(self, start: float, n: int) -> array[int]:
        """The ``n`` samples (16 kHz) the speaker played at the microphone's sample positions
        ``start``…: the room's echo of the robot's own voice. Speaker and microphone share the
        device's clock, so the echo is laid on the microphone's samples (a loaded host that
        makes a frame late does not shift it)."""
        out = array("h", bytes(2 * n))
        ratio = SPEAKER_RATE / MIC_RATE
        for clip in self.clips[-2:]:
            if clip.mic_start is None:
                continue
            end = clip.mic_end if clip.mic_end is not None else math.inf
            first = max(0, math.floor((start - clip.mic_start) * ratio))
            played = array("h", bytes(clip.data[2 * first:2 * (first + math.ceil(n * ratio) + 2)]))
            have = len(played)
            for k in range(n):
                at = start + k
                if at < clip.mic_start:
                    continue
                if at >= end:
                    break
                x = (at - clip.mic_start) * ratio - first
                i = int(x)
                if i + 1 >= have:
                    break
                a = played[i]
                out[k] = max(-32768, min(32767, out[k] + round(a + (played[i + 1] - a) * (x - i))))
        return out

    def _touch(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # -- microphone ------------------------------------------------------------------------

    def mic_open(self, d: dict[str, Any]) -> dict[str, Any]:
        self.mic_close({})
        self._next_session += 1
        session = self._next_session
        self.microphone.open_session = session
        scope = trio.CancelScope()
        self._mic_scope = scope
        assert self._nursery is not None
        self._nursery.start_soon(self._stream_microphone, session, scope)
        return {"session_id": session}

    def mic_close(self, d: dict[str, Any]) -> dict[str, Any]:
        if self._mic_scope is not None:
            self._mic_scope.cancel()
            self._mic_scope = None
        self.microphone.open_session = None
        return {}

    async def _stream_microphone(self, session: int, scope: trio.CancelScope) -> None:
        encoder = _OpusEncoder()
        sequence = 0
        period = MIC_FRAME_SECONDS / self.speed
        mic = self.microphone
        with scope:
            origin = next_at = trio.current_time()
            mic.origin, mic.frames_sent = origin, 0
            while True:
                next_at += period
                await trio.sleep_until(next_at)
                self._keep_time(trio.current_time() - next_at)
                pcm = mic.next_frame()
                for packet in encoder.encode(pcm):
                    self._broadcast(_wspk(0, session & 0xFFFF, sequence, packet))
                    sequence = (sequence + 1) & 0xFFFFFFFF
                mic.frames_sent += 1
                mic.sent_at = trio.current_time()

    def _keep_time(self, late: float) -> None:
        """Note a microphone frame sent ``late`` seconds after it was due (device time):
        ``sim_behind`` once the device has caught up again."""
        late *= self.speed  # in real seconds of audio
        if late > BEHIND_S:
            worst, frames = self._late or (0.0, 0)
            self._late = (max(worst, late), frames + 1)
        elif self._late is not None and late < BEHIND_S / 3:
            worst, frames = self._late
            self._late = None
            self.behind.append((worst, frames))
            self._trace.record("sim_behind", late_ms=round(worst * 1000), frames=frames)

    # -- speaker ---------------------------------------------------------------------------

    def stream_begin(self, d: dict[str, Any]) -> dict[str, Any]:
        """``ctrl.audio.stream.begin``: a new clip (a playing one is replaced)."""
        stream_id, total = d.get("stream_id"), d.get("total_bytes")
        if not isinstance(stream_id, int) or not 0 < stream_id <= 0xFFFF:
            raise _Nack("invalid_stream_id")
        if not isinstance(total, int) or total <= 0:
            raise _Nack("invalid_total_bytes")
        if (d.get("sample_rate_hz"), d.get("channels"), d.get("sample_width_bytes")) != (
            SPEAKER_RATE, 1, 2
        ):
            raise _Nack("unsupported_audio_format")
        self._end_clip("replaced_by_new_stream")
        clip = SimClip(stream_id, total, str(d.get("audio_sha256", "")), began=trio.current_time())
        self.clips.append(clip)
        self._clip = clip
        self._touch()
        return {}

    def stop(self, d: dict[str, Any]) -> dict[str, Any]:
        """``ctrl.audio.stop``: the sound stops at once."""
        self._end_clip("aborted")
        return {}

    def on_binary(self, raw: bytes) -> None:
        """A host audio frame: store it, grant the next credit, schedule the end."""
        from watcherobot.protocol import parse_wspk

        try:
            frame = parse_wspk(raw)
        except ValueError:
            return
        clip = self._clip
        if frame.frame_type != _FRAME_AUDIO or clip is None or frame.stream_id != clip.stream_id:
            return
        if clip.outcome != "playing":
            return
        if clip.started is None:
            clip.started = trio.current_time()
            clip.mic_start = self.mic_position()
        payload = frame.payload
        if self.corrupt_next and payload:
            self.corrupt_next = False
            payload = bytes([payload[0] ^ 0xFF]) + payload[1:]
        clip.data += payload
        self._broadcast(_envelope("evt.audio.buffer_status", {
            "stream_id": clip.stream_id,
            "reason": "buffering",
            "free_frames": SPEAKER_FREE_FRAMES,
            "expected_rx_seq": frame.sequence + 1,
        }))
        if len(clip.data) >= clip.total_bytes or frame.flags & _FLAG_LAST:
            scope = trio.CancelScope()
            self._clip_scope = scope
            assert self._nursery is not None
            self._nursery.start_soon(self._finish_playing, clip, scope)
        self._touch()

    async def _finish_playing(self, clip: SimClip, scope: trio.CancelScope) -> None:
        assert clip.started is not None
        with scope:
            await trio.sleep_until(clip.started + clip.seconds / self.speed)
            digest = hashlib.sha256(clip.data).hexdigest()
            self._end_clip("complete" if digest == clip.sha256 else "checksum_mismatch", digest)

    def _end_clip(self, outcome: str, digest: str | None = None) -> None:
        clip = self._clip
        if clip is None or clip.outcome != "playing":
            return
        clip.outcome = outcome
        clip.ended = trio.current_time()
        if clip.mic_start is not None:
            played = clip.seconds * MIC_RATE
            clip.mic_end = clip.mic_start + (
                played if outcome == "complete" else min(played, self.mic_position() - clip.mic_start)
            )
        self._clip = None
        if self._clip_scope is not None:
            self._clip_scope.cancel()
            self._clip_scope = None
        data: dict[str, Any] = {"stream_id": clip.stream_id, "reason": outcome}
        if outcome in ("complete", "checksum_mismatch"):
            data["reason"] = "complete"
            data["audio_sha256"] = digest
        self._broadcast(_envelope("evt.audio.buffer_status", data))
        clip.done.set()
        self._touch()


def seconds_of(clips: list[SimClip]) -> float:
    """Total audio received in ``clips``."""
    return math.fsum(c.seconds for c in clips)
