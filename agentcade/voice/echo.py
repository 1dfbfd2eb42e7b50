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
5–33 ms, which varied from clip to clip. :meth:`stop` cuts the reference at the present
when the sound is stopped. Measured under load (three busy processes on the two cores):
with the position counted from the frames that had reached the listener, a child over the
robot's first sentence was missed in 1–2 of 15 runs; with it carried forward, 0 of 15.

A microphone is not always open: ``run`` used to greet before opening it, the desktop
toggles it, a robot that went away is reopened. :meth:`opened` begins a new timeline with
each stream, and what is left of a sentence laid while none was open (by the wall clock,
:meth:`closed`) is moved onto it. Before this, the greeting's 30 s were laid on a
microphone nobody read and then taken for the first 30 s it heard: the first line said
after the greeting was not heard at all (at real time), or heard 2 s late (at twice).

The clock still leaves each clip off by its own few milliseconds, and AEC3 follows a delay
that stays put: so each clip is also placed by its sound (its first ``align_window_ms`` of
echo found in the microphone's frames, near the room's usual lag once ``align_learn``
sentences taught it), the frames waiting meanwhile. The placing also measures how loud the
robot's echo comes back: what AEC3 lets through of the robot's voice is never louder than
that echo, so a sound ``over_echo`` times louder (:attr:`EchoCanceller.over_echo`) is
somebody else. What AEC3 leaves of the robot's voice can still sound like speech until it
has heard ``converged_ms`` of it and just after the robot begins a sentence
(``onset_ms``): then a start over the robot asks for more (``warming_*``). Noise
suppression is on. The measurements behind each choice are in ``docs/tuning.md`` (the
echo canceller: placing, loudness, suppression).

What AEC3's suppressor takes away of a quiet child, a linear model of the robot's echo
(:mod:`agentcade.voice.echo_model`) leaves standing: each sentence is laid in it where its
echo was found (the placing above: a filter no longer has to follow each sentence's jump,
which kept MDF from settling in the fan's noise), the room's response is learned by least
squares, and :attr:`EchoCanceller.last_clean` is the microphone with the modelled echo taken
out; :attr:`EchoCanceller.clean` says when that can be trusted (the listener then judges it
instead of AEC3's output while the robot speaks).

Sans-IO: frames in, frames out; no trio. :func:`make_echo_canceller` returns None, with the
reason, when the wheel cannot load on this machine (barge-in then falls back to touch).
"""

from __future__ import annotations

import math
import time
from collections import deque
from statistics import median_high
from typing import TYPE_CHECKING, Any, NamedTuple

from agentcade.voice.pcm import rms
from agentcade.voice.tuning import MIC_RATE, TUNING, Tuning
from agentcade.voice.vad import RobotVoice

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FRAME_BYTES", "EchoCanceller", "make_echo_canceller"]

FRAME_MS = 10
"""The canceller works on 10 ms frames."""
FRAME_SAMPLES = MIC_RATE * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * 2
RATE = MIC_RATE


class _Cancelled(NamedTuple):
    """Whole frames through the canceller (:meth:`EchoCanceller._cancel`)."""

    out: bytes
    """With the echo removed by AEC3."""
    heard: bytes
    """As heard."""
    cleaned: bytes
    """With the model's echo taken out (as heard while it has learned nothing)."""
    clean: bool
    """Whether the model is trusted for them (``EchoModel.cancel``)."""
    measured: bool
    """Whether the model measured what it leaves in them (``EchoModel.learn``)."""


class EchoCanceller:
    """See the module docstring. ``align=False`` leaves each clip where the clock lays it.

    Raises:
        ImportError, OSError: the ``livekit`` wheel (its native library) cannot load.
    """

    def __init__(self, *, align: bool = True, tuning: Tuning = TUNING) -> None:
        import numpy  # noqa: F401 - placing and measuring (imported where used: not in a bundle)
        from livekit import rtc

        from agentcade.voice.echo_model import EchoModel

        self._t = tuning
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
        self._gaps: deque[tuple[int, float | None]] = deque()
        """Per frame arrived and not yet processed: the samples lost before it, and when the
        SDK received it (``arrived``'s ``missing`` and ``at``)."""
        self.late_ms = 0.0
        """How long after the SDK received it the last frame was processed."""
        self._late: tuple[float, float] | None = None
        """While the host is behind: (the worst lateness so far in ms, since when)."""
        self.caught_up: tuple[float, float] | None = None
        """Set on the frame the host caught up after being behind (:attr:`behind`): how late
        it was at worst and for how long (ms); None on every other frame."""
        self._clock: deque[tuple[int, float]] = deque(maxlen=256)
        """(timeline position after a frame, when the SDK received it), newest last."""
        self._closed = True
        """No microphone is open (:meth:`opened`, :meth:`closed`): the present is carried
        forward by the wall clock alone, for as long as it stays closed."""
        self._anchor = (0, time.time())
        """(timeline position, when) the present is carried from while no frame has come."""
        self._rate = float(RATE)
        """Samples a second the microphone delivered (the simulated robot runs faster)."""
        self._onset = -(10**12)
        self._resume = -(10**12)
        """Where the robot's voice last resumed after a pause inside its sentences."""
        self._far_quiet = 0
        """10 ms frames of the robot's voice in a row under ``tuning.far_quiet``, up to the last."""
        """Timeline position where the robot last began to speak after a pause."""
        self.reference_ms = 0
        """How much of the robot's voice the canceller has been given so far."""
        self._align: tuple[int, int, int] | None = None
        """(where the clip was laid, where the zeros before it begin, where its voice begins)
        of a clip whose echo has not yet been found: frames wait in ``_held`` till it is."""
        self._held: list[tuple[int, bytes]] = []
        """(samples lost before it, frame) waiting for the alignment, in arrival order."""
        self._held_samples = 0
        self._lags: deque[int] = deque(maxlen=tuning.lag_memory)
        """Where the echo of the last sentences was found, after where they were laid."""
        self._gains: deque[float] = deque(maxlen=tuning.lag_memory)
        """How loud the echo of the last sentences was heard (a share of what was played)."""
        self._far_rms: deque[float] = deque(maxlen=64)
        """The loudness of what the robot played in each 10 ms frame processed, newest last."""
        self._far_pcm: deque[bytes] = deque(maxlen=64)
        """... and its samples (the robot's pitch at the moment its echo is heard)."""
        self.loudness = 0.0
        """How much louder the last output was than the robot's echo could be (>= 1: a voice
        that is not the robot's; 0 when unknown)."""
        self.heard_loudness = 0.0
        """How much louder the microphone's own samples behind the last output were than the
        robot's echo and the room's noise together could be (0 when unknown)."""
        self.periodicity = 0.0
        """How much the louder of the two (the output if it was louder than the echo could be,
        else the microphone's samples) repeats at a voice's pitch (:func:`voice_period`; 0
        when neither was louder, or when that pitch is the one the robot played then): a
        child's voice does, a television's noise burst does not, and the robot's own voice
        where its echo was underestimated is the robot's."""
        self._room: deque[float] = deque(maxlen=self._t.room_levels)
        """The microphone's loudness in the last frames without the robot's voice."""
        self._misses = 0 if align else self._t.align_give_up
        self.last_input = b""
        """The microphone's own samples behind the last output of :meth:`process` (exactly as
        long as it): what voice detection and the recogniser hear while the robot is silent
        (see :class:`~agentcade.voice.vad.SileroDetector`)."""
        self.shifts: list[int] = []
        """Every alignment's correction (samples; for benchmarks and tests)."""
        self._model = EchoModel(tuning)
        self.clean = False
        """Whether :attr:`last_clean` has the robot's echo taken out (the linear model of it,
        :mod:`agentcade.voice.echo_model`, is trusted for the frames of the last
        :meth:`process`; also when none of the robot's voice is in them)."""
        self.measured = False
        """Whether, in the frames of the last :meth:`process`, the model measured what it
        leaves of the robot's echo (``EchoModel.learn``): what voice detection hears in
        :attr:`last_clean` there is what the model leaves."""
        self.last_clean = b""
        """The microphone's own samples behind the last output of :meth:`process`, with the
        model's echo taken out once it has learned the room (else as heard; whether that can
        be trusted: :attr:`clean`): AEC3's suppressor takes a voice quieter than the robot's
        echo away with it, the model leaves it standing."""

    @property
    def converged(self) -> bool:
        """Whether AEC3 has heard enough of the robot's voice to remove it well (before
        that, a start over the robot asks for more: ``Tuning.warming_prob``)."""
        return self.reference_ms >= self._t.converged_ms

    @property
    def onset(self) -> bool:
        """Whether the robot began a sentence after a pause less than ``tuning.onset_ms`` before the
        frames being processed (AEC3 lets such an onset through: a start over the robot
        then asks for more, ``Tuning.warming_prob``)."""
        lag = median_high(self._lags) if self._lags else 0  # its echo comes that much later
        return self._processed - self._onset - lag < self._t.onset_ms * RATE // 1000

    @property
    def resumed(self) -> bool:
        """Whether the robot's voice resumed after a pause inside a sentence (``tuning.pause_ms``)
        less than ``tuning.resume_after_pause_ms`` before the frames being processed (its echo's lag
        counted, as for :attr:`onset`)."""
        lag = median_high(self._lags) if self._lags else 0
        since = self._processed - self._resume - lag
        return 0 <= since < self._t.resume_after_pause_ms * RATE // 1000

    @property
    def over_echo(self) -> bool:
        """Whether the last frames processed were louder than the robot's echo could be
        (:attr:`loudness` at least ``tuning.over_echo``): somebody else is talking."""
        return self.loudness >= self._t.over_echo

    @property
    def heard_over_echo(self) -> bool:
        """Whether the microphone's own samples behind the last output were louder than the
        robot's echo and the room could make them (``tuning.heard_over_echo``): somebody else
        is talking, however much of their voice the canceller took away with the robot's."""
        return self.heard_loudness >= self._t.heard_over_echo

    @property
    def audible(self) -> bool:
        """Whether the robot's voice may still be heard in the frames being processed: while
        it plays, and for the room's lag and reverb after (``tuning.echo_after_ms``); 250 ms
        when the lag is not known yet."""
        lag = median_high(self._lags) if self._lags else self._t.align_search_ms[1] * RATE // 1000
        return self._ref_end + lag + self._t.echo_after_ms * RATE // 1000 > self._processed

    def robot_voice(self, *, speaking: bool) -> RobotVoice:
        """What voice detection must know of the robot's voice in the frames just processed
        (``speaking``: the robot plays sound now)."""
        return RobotVoice(
            speaking=self.audible or speaking, clean=self.clean, measured=self.measured,
            converged=self.converged, onset=self.onset, resumed=self.resumed, behind=self.behind,
            over_echo=self.over_echo, heard_over_echo=self.heard_over_echo,
        )

    @property
    def louder(self) -> bool:
        """Whether the frames just processed were louder than the robot's echo could be now:
        the canceller's output (:attr:`over_echo`), or the microphone's own samples
        (:attr:`heard_over_echo`: the canceller takes part of a voice away with the robot's)."""
        return (self.over_echo and math.isfinite(self.loudness)) or self.heard_over_echo

    @property
    def _ref_end(self) -> int:
        return self._ref_start + len(self._reference) // 2

    @property
    def playing(self) -> bool:
        """Whether the robot's voice is (still) in the frames being processed."""
        return self._ref_end > self._processed

    def opened(self, *, now: float | None = None) -> None:
        """The microphone was opened: its frames begin a new timeline, at the present.

        The robot may be speaking already (the clip was laid while no microphone was open,
        by the wall clock): what is left of it is moved onto the new timeline, so the
        canceller hears its echo from the first frame.
        """
        now = time.time() if now is None else now
        origin = self.present(now)
        self._ref_start -= origin
        self._onset -= origin
        self._resume -= origin
        self._arrived = self._processed = 0
        self._rest = b""
        self._gaps.clear()
        self._clock.clear()
        self._held, self._held_samples, self._align = [], 0, None
        self._model.rebase(origin)
        self._far_rms.clear()
        self._far_pcm.clear()
        self.loudness = self.heard_loudness = self.periodicity = 0.0
        self._closed = False
        played = min(len(self._reference) // 2, max(0, -self._ref_start))
        del self._reference[:2 * played]
        self._ref_start += played

    def closed(self, *, now: float | None = None) -> None:
        """The microphone was closed: until it opens again, what the robot plays is laid by
        the wall clock (see :meth:`opened`)."""
        now = time.time() if now is None else now
        self._anchor = (self.present(now), now)
        self._closed = True

    def arrived(self, frame: bytes, *, at: float | None = None, missing: int = 0) -> None:
        """A microphone frame arrived from the robot (call before it waits in any queue):
        ``at`` is when the SDK received it (``time.time()``), ``missing`` the samples lost
        just before it."""
        self._closed = False
        self._arrived += missing + len(frame) // 2
        self._gaps.append((missing, at))
        if at is not None:
            self._clock.append((self._arrived, at))
            first, first_at = self._clock[0]
            if at - first_at >= 1.0:
                rate = (self._arrived - first) / (at - first_at)
                self._rate = min(max(rate, RATE / 2), RATE * 16)

    def present(self, now: float | None = None) -> int:
        """The timeline position the robot's microphone is at ``now`` (``time.time()``)."""
        now = time.time() if now is None else now
        if self._closed:  # no frames to follow: the wall clock alone
            return self._anchor[0] + round(max(now - self._anchor[1], 0.0) * self._rate)
        if not self._clock:
            return self._arrived
        position, at = self._clock[-1]
        ahead = min(max(now - at, 0.0), self._t.max_lag_s) * self._rate
        return max(self._arrived, position + round(ahead))

    def play(self, pcm: bytes, *, now: float | None = None) -> None:
        """A clip starts playing now: its samples (16 kHz mono s16le) are the reference from
        the timeline's present on (or right after the clip still playing)."""
        start = max(self.present(now), self._ref_end)
        if start > self._ref_end or not self._reference:
            self._onset = start  # a sentence after a pause, not one that follows on
        if self._misses < self._t.align_give_up and self._align is None:
            free = self._ref_end if self._reference else self._processed
            self._align = (start, free, start + _voice_begins(pcm, self._t.align_voice_ms))
        if not self._reference:
            self._ref_start = start
        else:
            self._reference += bytes(2 * (start - self._ref_end))
        self._reference += pcm
        self._model.lay(start, pcm)

    def stop(self, *, now: float | None = None) -> None:
        """The sound was stopped: nothing after the present comes out of the speaker."""
        present = self.present(now)
        keep = max(0, present - self._ref_start)
        del self._reference[2 * keep:]
        self._model.cut(present)

    @property
    def rate(self) -> float:
        """The microphone's samples per second by the host's clock (16,000 at real time; a
        simulated robot may run faster)."""
        return self._rate

    @property
    def behind(self) -> bool:
        """Whether the host processes the microphone late (``tuning.behind_ms``)."""
        return self.late_ms > self._t.behind_ms

    def process(self, frame: bytes, *, now: float | None = None) -> bytes:
        """One microphone frame (16 kHz mono s16le), in arrival order, with the echo removed.

        Whole 10 ms frames are processed; a remainder waits for the next call, so the
        output may be up to 10 ms shorter or longer than the input. While a sentence's echo
        is being found (:meth:`play`), frames wait and the output is empty; they come out
        together once it is. ``now``: when it is processed (``time.time()``; a replay gives
        the time it was), for :attr:`behind`.
        """
        gap, at = self._gaps.popleft() if self._gaps else (0, None)
        if at is not None:
            now = time.time() if now is None else now
            self.late_ms = (now - at) * 1000
            self._follow_lateness(now)
        if self._align is None:
            done = [self._cancel(gap, frame)]
        else:
            self._held.append((gap, frame))
            self._held_samples += gap + len(frame) // 2
            if not self._aligned():
                self.last_input = self.last_clean = b""
                return b""
            held, self._held, self._held_samples = self._held, [], 0
            done = [self._cancel(gap, frame) for gap, frame in held]
        self.last_input = b"".join(part.heard for part in done)
        self.clean = all(part.clean for part in done) and not self.behind
        self.measured = any(part.measured for part in done)
        self.last_clean = b"".join(part.cleaned for part in done)
        return b"".join(part.out for part in done)

    def _follow_lateness(self, now: float) -> None:
        """Keep the worst lateness while the host is behind; :attr:`caught_up` once it is not."""
        self.caught_up = None
        if self.behind:
            worst, since = self._late or (0.0, now)
            self._late = (max(worst, self.late_ms), since)
        elif self._late is not None:
            (worst, since), self._late = self._late, None
            self.caught_up = (worst, (now - since) * 1000)

    def _aligned(self) -> bool:
        """Whether the held frames reach far enough to find the pending clip's echo (then
        the clip is moved to where it was found)."""
        import numpy as np

        assert self._align is not None
        start, free, voiced = self._align
        window = self._t.align_window_ms * RATE // 1000
        usual = median_high(self._lags) if self._lags else None
        if usual is not None and len(self._lags) >= self._t.align_learn:
            spread = self._t.align_spread_ms * RATE // 1000
            lo, hi = usual - spread, usual + spread
        else:
            lo, hi = (ms * RATE // 1000 for ms in self._t.align_search_ms)
        base = self._processed + len(self._rest) // 2
        if base + self._held_samples < voiced + hi + window and self._held_samples < 2 * RATE:
            return False
        self._align = None
        mic = np.zeros(self._held_samples)
        at = 0
        for gap, frame in self._held:
            at += gap
            pcm = np.frombuffer(frame[: len(frame) - len(frame) % 2], np.int16)
            mic[at:at + len(pcm)] = pcm
            at += len(pcm)
        offset = voiced - self._ref_start
        ref = np.frombuffer(bytes(self._reference[2 * offset:2 * (offset + window)]), np.int16)
        if len(ref) < window // 2:  # stopped at once: too little of it to find
            return True
        at = max(voiced - base, 0)
        found = _find_echo(mic, at, ref.astype(np.float64), max(lo, 0), hi,
                           self._t.align_min_match)
        if found is None:
            self._misses += 1
            return True
        lag, gain, match = found
        if match >= self._t.model_min_match:
            self._model.place(start, base + at + lag - voiced)
        self._misses = 0
        self._lags.append(lag)
        self._gains.append(gain)
        if usual is not None:
            self._move(start, free, lag - usual)
        return True

    def _move(self, start: int, free: int, shift: int) -> None:
        """Move the clip laid at ``start`` (and all after it) by ``shift`` samples, into the
        silence before it (from ``free``) at most."""
        shift = max(shift, max(free, self._processed) - start)
        if start == self._ref_start:
            self._ref_start += shift
        elif shift > 0:
            i = 2 * (start - self._ref_start)
            self._reference[i:i] = bytes(2 * shift)
        elif shift < 0:
            i = 2 * (start - self._ref_start)
            del self._reference[i + 2 * shift:i]
        self._onset += shift
        self.shifts.append(shift)

    def _cancel(self, gap: int, frame: bytes) -> _Cancelled:
        """The whole frames ready, each way (see :class:`_Cancelled`)."""
        if gap:  # what the robot played while the lost samples were heard
            at = self._processed
            lost = self._far(gap)
            for i in range(0, len(lost) - FRAME_BYTES + 1, FRAME_BYTES):
                self._far_level(lost[i:i + FRAME_BYTES], at + i // 2)
        data = self._rest + frame
        whole = len(data) - len(data) % FRAME_BYTES
        self._rest = data[whole:]
        cleaned, clean = self._model.cancel(self._processed, data[:whole])
        out = bytearray()
        rtc = self._rtc
        for i in range(0, whole, FRAME_BYTES):
            at = self._processed
            far = self._far(FRAME_SAMPLES)
            self._far_level(far, at)
            if self.playing:
                self.reference_ms += FRAME_MS
            self._apm.process_reverse_stream(rtc.AudioFrame(far, RATE, 1, FRAME_SAMPLES))
            near = rtc.AudioFrame(bytearray(data[i:i + FRAME_BYTES]), RATE, 1, FRAME_SAMPLES)
            self._apm.process_stream(near)
            out += memoryview(near.data).cast("B")
        self._measure(bytes(out), data[:whole], whole // FRAME_BYTES)
        measured = False
        if self._lags and self._room and self.loudness < 1.0:  # nobody louder than the echo
            measured = self._model.learn(median_high(self._room))
        return _Cancelled(bytes(out), data[:whole], cleaned, clean, measured)

    def _far_level(self, far: bytes, at: int) -> None:
        """The robot's 10 ms of voice at ``at`` and its loudness: kept for :meth:`_measure`,
        and a resume after a pause noted (:attr:`resumed`)."""
        level = rms(far)
        self._far_rms.append(level)
        self._far_pcm.append(far)
        if level < self._t.far_quiet:
            self._far_quiet += 1
            return
        if self._far_quiet * FRAME_MS >= self._t.pause_ms:
            self._resume = at
        self._far_quiet = 0

    def _measure(self, out: bytes, heard: bytes, frames: int) -> None:
        """:attr:`loudness` of ``out`` (the last ``frames`` frames processed): its RMS over
        the most the robot's echo could be in it: the echo's gain times the loudness of what
        was played then (the room's lag earlier, and its reverb before that); and
        :attr:`heard_loudness` of ``heard`` (the microphone's samples behind it), over that
        and the room's noise together."""
        self.periodicity = 0.0
        if not frames or not self._lags:
            self.loudness = self.heard_loudness = 0.0
            return
        gain = median_high(self._gains)
        lag = median_high(self._lags) // FRAME_SAMPLES
        history = list(self._far_rms)
        end = len(history) - lag + 1 + self._t.echo_early_frames
        before = frames + self._t.echo_early_frames + self._t.echo_tail_frames
        window = history[max(0, end - before):max(0, end)]
        played = max(window, default=0.0)
        level = rms(out)
        self.loudness = level / (gain * played) if played > 0 else math.inf if level else 0.0
        heard_level = rms(heard)
        if played < self._t.far_quiet:  # none of the robot's voice: the room alone
            self._room.append(heard_level)
        room = median_high(self._room) if self._room else 0.0
        self.heard_loudness = heard_level / math.hypot(gain * played, room) if room else 0.0
        if self.louder:  # the output when it was the louder, else the microphone
            strength, period = voice_period(out if self.over_echo and math.isfinite(self.loudness)
                                            else heard)
            # The robot's own voice, where the echo was underestimated (a sentence's onset),
            # repeats at the pitch the robot played then: it is no other voice
            robot = b"".join(list(self._far_pcm)[max(0, len(history) - lag - frames):
                                                 max(0, len(history) - lag)])
            own, own_period = voice_period(robot) if played >= self._t.far_quiet else (0.0, 0)
            same = own >= self._t.own_voice_periodicity and any(
                abs(period - k * own_period) <= self._t.same_pitch * period
                for k in (0.5, 1, 2))
            self.periodicity = 0.0 if same else strength

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


def voice_period(pcm: bytes) -> tuple[float, int]:
    """How much ``pcm`` (16 kHz mono s16le, tens of ms) repeats itself at a voice's pitch
    period, and that period (samples): the highest normalised autocorrelation at a lag of
    2-16 ms (500-60 Hz). A voiced syllable scores 0.5-0.95; noise (a fan, a television's
    burst) under 0.3, however loud."""
    import numpy as np

    x = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], np.int16).astype(np.float64)
    lo, hi = RATE // 500, RATE // 60
    if len(x) < 2 * hi:
        return 0.0, 0
    x -= x.mean()
    n = len(x)
    spectrum = np.fft.rfft(x, 2 * n)
    lagged = np.fft.irfft(spectrum * np.conj(spectrum))[:hi + 1]
    energy = np.concatenate([[0.0], np.cumsum(x * x)])
    lags = np.arange(lo, hi + 1)
    head, tail = energy[n - lags], energy[n] - energy[lags]
    scale = np.sqrt(head * tail)
    scores = np.where(scale > 0, lagged[lo:hi + 1] / np.where(scale > 0, scale, 1.0), 0.0)
    best = int(np.argmax(scores))
    return float(scores[best]), lo + best


def _voice_begins(pcm: bytes, voice_ms: int) -> int:
    """Where the voice begins in a clip (samples into it): its first 10 ms frame at least
    half as loud as its loudest in ``tuning.align_voice_ms``. A clip that begins quietly (a breath,
    an "s") is found by its voice: its first moments are lost in the tail of the sentence
    before and the room's noise."""
    import numpy as np

    head = np.frombuffer(pcm[:2 * min(len(pcm) // 2, voice_ms * RATE // 1000)], np.int16)
    frames = len(head) // FRAME_SAMPLES
    if not frames:
        return 0
    levels = np.sqrt(np.mean(
        head[:frames * FRAME_SAMPLES].astype(np.float64).reshape(frames, -1) ** 2, axis=1))
    return int(np.argmax(levels >= levels.max() / 2)) * FRAME_SAMPLES


def _find_echo(
    mic: np.ndarray, start: int, ref: np.ndarray, lo: int, hi: int, min_match: float,
) -> tuple[int, float, float] | None:
    """The lag in ``lo..hi`` at which ``ref`` (laid at ``mic[start]``) is heard best in
    ``mic``, how loud it is heard there (the echo's gain) and how well it matched (the
    normalised correlation), or None when nothing there
    resembles it (``tuning.align_min_match``). Both are
    differenced first: a fan's rumble and the voice's low frequencies would blur the peak."""
    import numpy as np

    ref = np.diff(ref)
    seg = np.diff(mic[start + lo:start + hi + len(ref) + 1])
    if len(seg) < len(ref) or not ref.any():
        return None
    dots = np.correlate(seg, ref, mode="valid")
    energy = np.cumsum(np.concatenate(([0.0], seg * seg)))
    norms = np.sqrt(energy[len(ref):] - energy[:-len(ref)]) * np.sqrt(ref @ ref) + 1e-9
    score = dots / norms[: len(dots)]
    best = int(np.argmax(score))
    if score[best] < min_match:
        return None
    return lo + best, float(dots[best] / (ref @ ref)), float(score[best])


def make_echo_canceller() -> tuple[EchoCanceller | None, str | None]:
    """``(canceller, None)``, or ``(None, why)`` when it cannot load here."""
    try:
        return EchoCanceller(), None
    except (ImportError, OSError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
