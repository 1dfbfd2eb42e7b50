"""Echo cancellation for full duplex: the robot's own voice taken out of its microphone.

The robot's speaker is centimetres from its microphone and the SDK cancels no echo, so a
robot that listens while it speaks hears itself, loud — Silero calls every one of its own
sentences speech. We hold one advantage: the host knows every sample it sends to the
speaker. :class:`EchoCanceller` is WebRTC's audio processing (AEC3, noise suppression and
the high-pass filter) from the ``livekit`` wheel (``livekit.rtc.AudioProcessingModule``;
wheels for Linux, macOS and Windows), fed with that reference.

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
processed. The speaker calls :meth:`play` when the robot has acknowledged the clip's
beginning and its audio starts to flow (``RobotAudio.play``'s ``on_sound``), not before
the call: on the simulated robot that put the reference 1–10 ms before the sound instead of
5–33 ms, which varied from clip to clip. AEC3 estimates the remaining delay (the room's echo
path, the microphone's transport) itself. :meth:`stop` cuts the reference at the present
when the sound is stopped. Measured under load (three busy processes on the two cores):
with the position counted from the frames that had reached the listener, a child over the
robot's first sentence was missed in 1–2 of 15 runs; with it carried forward, 0 of 15.

What AEC3 leaves of the robot's voice can still sound like speech until it has heard
``CONVERGED_MS`` of it, and for a moment after the robot begins a sentence (``ONSET_MS``):
then a start over the robot asks for more (``VadConfig.warming_prob``/``warming_ms``),
otherwise ``over_speech_prob``/``over_speech_ms``. Noise suppression is on. Chosen on one
recorded run replayed through each setting (tests/bench/replay_barge.py on a
``bench_barge.py --capture``: fan 700, echo 0.3, 36 robot sentences alone, 20 lines over
it at each loudness): without suppression a quiet child (×0.25) over the robot was found in
0/20 lines, with it 12/20, and 16/20 once a start over the robot needs p ≥ 0.5 for 96 ms
(instead of 0.7 for 128 ms); a child at ×1 20/20. Tried and left out: a linear
frequency-domain canceller (two-path MDF, as in Speex) in front of AEC3 changed nothing,
and alone let the robot start itself 7 times in 36 sentences (in the fan's noise it
converges slowly). What remains is AEC3's suppressor taking a quiet child for echo: the
lines it misses are not intelligible in its output (checked with the ASR ear).

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
ONSET_MS = 600
"""How long after the robot begins a sentence after a pause a start over it asks for more:
AEC3 lets the onset of the robot's voice through. Measured with a riddle game played with
nobody interrupting (seven lines, about twenty sentences, echo 0.3): without this, 1-3 false
barge-ins in every one of 4 runs, all 150-270 ms into a sentence; with it, none in 5 of 7
runs. Counting a pause after a comma as an onset too cost a quiet child over the robot more
than it saved (tests/bench/bench_barge.py: found 15/40 instead of 30/40)."""
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
            echo_cancellation=True, noise_suppression=True, high_pass_filter=True
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
        self._onset = -(10**12)
        """Timeline position where the robot last began to speak after a pause."""
        self.reference_ms = 0
        """How much of the robot's voice the canceller has been given so far."""

    @property
    def converged(self) -> bool:
        """Whether AEC3 has heard enough of the robot's voice to remove it well (before
        that, a start over the robot asks for more: ``VadConfig.warming_prob``)."""
        return self.reference_ms >= CONVERGED_MS

    @property
    def onset(self) -> bool:
        """Whether the robot began a sentence after a pause less than ``ONSET_MS`` before the
        frames being processed (AEC3 lets such an onset through: a start over the robot
        then asks for more, ``VadConfig.warming_prob``)."""
        return self._processed - self._onset < ONSET_MS * RATE // 1000

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
        if start > self._ref_end or not self._reference:
            self._onset = start  # a sentence after a pause, not one that follows on
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
