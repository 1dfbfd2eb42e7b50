"""Echo cancellation for full duplex: the robot's own voice taken out of its microphone.

The robot's speaker is centimetres from its microphone and the SDK cancels no echo, so a
robot that listens while it speaks hears itself, loud — Silero calls every one of its own
sentences speech. We hold one advantage: the host knows every sample it sends to the
speaker. :class:`EchoCanceller` is WebRTC's audio processing (AEC3 and the high-pass
filter, without noise suppression: see below) from the ``livekit`` wheel (``livekit.rtc.AudioProcessingModule``; wheels
for Linux, macOS and Windows), fed with that reference.

Alignment: the reference must follow when the robot *plays* a sample, not when it is sent,
and the microphone's frames may wait in a queue before they are processed. Both the
speaker and the microphone run on the device's clock, so the reference is laid on the
microphone's own timeline, counted in samples: :meth:`arrived` is told of every frame as it
comes from the robot — with the time the SDK received it and the samples lost before it (a
loaded host reads late and its queues drop frames) — :meth:`play` puts a clip's samples at
the timeline's present (the last frame's position carried forward by the time since the
SDK received it, at the rate the frames have been coming in; after the clip before it, if
that is still playing), and :meth:`process` takes out, as the far-end signal of each
frame, exactly the reference samples at that frame's position — however late it is
processed. AEC3 estimates the remaining delay (the room's echo path, the microphone's
transport) itself. :meth:`stop` cuts the reference at the present when the sound is
stopped. Measured under load (three busy processes on the two cores): with the position
counted from the frames that had reached the listener, a child over the robot's first
sentence was missed in 1–2 of 15 runs.

What AEC3 leaves of the robot's voice is weak but can still sound like speech, so the
detector asks more of a start while the robot speaks (``VadConfig.over_speech_prob`` and
``over_speech_ms``). Noise suppression is off: measured on one recorded run replayed
through both (tests/bench/bench_barge.py ``--capture``; fan 700, echo 0.3, 24 robot
sentences alone, 12 lines over it at each loudness), with it on, what is left of the
robot's voice once AEC3 has converged still reached Silero p 0.2–0.99 in some sentences
(its fan-free residue sounds like speech), with it off p ≤ 0.03; a child at ×1 was found
as often (11/12) and sooner (p50 180 ms of its audio instead of 300). Neither finds a
quiet child (×0.25) over the robot's voice: AEC3's suppressor takes it for echo (on
2–4/12) — which is why ``BARGE_IN=voice`` is not the default yet. The sentences before
AEC3 has converged (the first three or four) are where its own voice can still set it off.

Sans-IO: frames in, frames out; no trio. :func:`make_echo_canceller` returns None, with the
reason, when the wheel cannot load on this machine (barge-in then falls back to touch).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

__all__ = ["FRAME_BYTES", "EchoCanceller", "make_echo_canceller"]

RATE = 16000
FRAME_SAMPLES = RATE // 100
FRAME_BYTES = FRAME_SAMPLES * 2
"""The canceller works on 10 ms frames."""
MAX_LAG_S = 2.0
"""How far the present may be carried beyond the last frame read (a host that is further
behind than this has lost frames, which the next frame reports)."""
CONVERGED_MS = 10_000
"""How much of the robot's voice AEC3 hears before it is trusted (see :attr:`EchoCanceller
.converged`): in the simulated room its first two or three sentences still leave enough
of the robot's voice to start an utterance."""


class EchoCanceller:
    """See the module docstring.

    Raises:
        ImportError, OSError: the ``livekit`` wheel (its native library) cannot load.
    """

    def __init__(self) -> None:
        from livekit import rtc

        self._rtc: Any = rtc
        self._apm: Any = rtc.AudioProcessingModule(
            echo_cancellation=True, noise_suppression=False, high_pass_filter=True
        )
        self._arrived = 0
        """Samples the microphone has delivered so far (its timeline's present)."""
        self._processed = 0
        """Samples processed so far (frames may wait between arriving and this)."""
        self._reference = bytearray()
        self._ref_start = 0
        """Timeline position of ``_reference[0]`` (samples)."""
        self._rest = b""
        self._gaps: deque[int] = deque()
        """Samples lost before each arrived frame not yet processed (in arrival order)."""
        self._clock: deque[tuple[int, float]] = deque(maxlen=256)
        """(timeline position after a frame, when the SDK received it), newest last."""
        self.reference_ms = 0
        """How much of the robot's voice the canceller has been given so far."""

    @property
    def converged(self) -> bool:
        """Whether AEC3 has heard enough of the robot's voice to remove it well (before
        that, a start over the robot asks for more: ``VadConfig.warming_prob``)."""
        return self.reference_ms >= CONVERGED_MS

    @property
    def _ref_end(self) -> int:
        return self._ref_start + len(self._reference) // 2

    @property
    def playing(self) -> bool:
        """Whether the robot's voice is (still) in the frames being processed."""
        return self._ref_end > self._processed

    def arrived(self, frame: bytes, *, at: float | None = None, missing: int = 0) -> None:
        """A microphone frame arrived from the robot (call before it waits in any queue):
        ``at`` is when the SDK received it (``time.time()``), ``missing`` the samples lost
        just before it."""
        self._arrived += missing + len(frame) // 2
        self._gaps.append(missing)
        if at is not None:
            self._clock.append((self._arrived, at))

    def present(self, now: float | None = None) -> int:
        """The timeline position the robot's microphone is at ``now`` (``time.time()``)."""
        if not self._clock:
            return self._arrived
        now = time.time() if now is None else now
        position, at = self._clock[-1]
        first, first_at = self._clock[0]
        span = at - first_at
        rate = (position - first) / span if span >= 1.0 else RATE
        rate = min(max(rate, RATE / 2), RATE * 16)  # the simulated robot runs faster
        ahead = min(max(now - at, 0.0), MAX_LAG_S) * rate
        return max(self._arrived, position + round(ahead))

    def play(self, pcm: bytes, *, now: float | None = None) -> None:
        """A clip starts playing now: its samples (16 kHz mono s16le) are the reference from
        the timeline's present on (or right after the clip still playing)."""
        start = max(self.present(now), self._ref_end)
        if not self._reference:
            self._ref_start = start
        else:
            self._reference += bytes(2 * (start - self._ref_end))
        self._reference += pcm

    def stop(self, *, now: float | None = None) -> None:
        """The sound was stopped: nothing after the present comes out of the speaker."""
        keep = max(0, self.present(now) - self._ref_start)
        del self._reference[2 * keep:]

    def process(self, frame: bytes) -> bytes:
        """One microphone frame (16 kHz mono s16le), in arrival order, with the echo removed.

        Whole 10 ms frames are processed; a remainder waits for the next call, so the
        output may be up to 10 ms shorter or longer than the input.
        """
        if self._gaps and (gap := self._gaps.popleft()):
            self._far(gap)  # what the robot played while the lost samples were heard
        data = self._rest + frame
        whole = len(data) - len(data) % FRAME_BYTES
        self._rest = data[whole:]
        out = bytearray()
        rtc = self._rtc
        for i in range(0, whole, FRAME_BYTES):
            far = self._far(FRAME_SAMPLES)
            if self.playing:
                self.reference_ms += 10
            self._apm.process_reverse_stream(rtc.AudioFrame(far, RATE, 1, FRAME_SAMPLES))
            near = rtc.AudioFrame(bytearray(data[i:i + FRAME_BYTES]), RATE, 1, FRAME_SAMPLES)
            self._apm.process_stream(near)
            out += memoryview(near.data).cast("B")
        return bytes(out)

    def _far(self, n: int) -> bytes:
        """The reference at the next ``n`` processed samples (silence where there is none)."""
        start = self._processed
        self._processed += n
        out = bytearray(2 * n)
        lo, hi = max(start, self._ref_start), min(start + n, self._ref_end)
        if lo < hi:
            base = self._ref_start
            out[2 * (lo - start):2 * (hi - start)] = self._reference[2 * (lo - base):2 * (hi - base)]
        drop = min(len(self._reference) // 2, max(0, self._processed - self._ref_start))
        del self._reference[:2 * drop]
        self._ref_start += drop
        return bytes(out)


def make_echo_canceller() -> tuple[EchoCanceller | None, str | None]:
    """``(canceller, None)``, or ``(None, why)`` when it cannot load here."""
    try:
        return EchoCanceller(), None
    except (ImportError, OSError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
