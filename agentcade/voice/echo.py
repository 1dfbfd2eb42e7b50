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

The clock still leaves each clip off by its own few milliseconds: on a recorded run
(84 sentences) the echo came 81–108 ms after where its reference was laid, 16 ms between
the 10th and 90th percentile. AEC3 follows a delay that stays put; one that moves at every
sentence costs it each sentence's first moments, where the robot's own voice got through.
So each clip is placed by its sound as well: the first ``ALIGN_WINDOW_MS`` of its echo is
found in the microphone's frames (the correlation of their differences, within
``ALIGN_SPREAD_MS`` of the room's usual lag once ``ALIGN_LEARN`` sentences have taught it;
from where its voice begins, a sentence's first breath or "s" is lost in the fan) and the
clip is moved there, into the silence before it. The frames wait meanwhile (a sentence's first 200–250 ms; they come out together
once it is placed): on a recorded run (36 sentences alone, 20 lines over the robot at each
loudness), replayed, the robot no longer started itself (1 → 0) and a quiet child was
found more often (16 → 17 of 20). A robot that does not hear itself is no longer waited for after ``ALIGN_GIVE_UP``
sentences.

The placing also measures how loud the robot's echo comes back (its gain). What AEC3 lets
through of the robot's voice is never louder than that echo; a child as loud as the robot
is several times louder. :attr:`EchoCanceller.loudness` says how much louder the output is
than the echo could be in it, and a sound at least ``OVER_ECHO`` times louder is somebody
else (:attr:`EchoCanceller.over_echo`), even while the stricter start below applies: on the
recorded run, with the stricter start kept all along, a child at ×1 was found 20/20 with
p50 240 ms instead of 19/20 with 480 ms, and the robot started itself no more often (0).
Such a sound starts an utterance after ``VadConfig.over_echo_ms`` (64) of speech. In the
riddle game, where the robot's sentences are cut short before the canceller has heard
enough of them, the six lines said over it stopped it after p50 283 ms instead of 502 ms
with this off, and the robot set itself off no more often (3 and 4 times in 107 sentences
played with nobody interrupting; tests/bench/bench_barge_game.py, five runs each).
A quiet child (×0.25) is no louder than the echo and gains nothing from it.

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

if TYPE_CHECKING:
    import numpy as np

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
runs. Placing each sentence by its echo (below) did not make it unneeded: on a recorded run
of 100 sentences, replayed, without it (or with 300 ms) the robot started itself twice.
Counted from when the sentence's echo begins (the room's usual lag after it was laid): from
where it was laid, the greeting's sentences, said one after another, set the robot off in
2 of 3 runs, 640-660 ms in; counted from its echo, in none of 4. Counting a pause after a
comma as an onset too cost a quiet child over the robot more than it saved
(tests/bench/bench_barge.py: found 15/40 instead of 30/40)."""
MAX_LAG_S = 2.0
"""How far the present may be carried beyond the last frame read (a host that is further
behind than this has lost frames, which the next frame reports)."""
ALIGN_WINDOW_MS = 120
"""How much of a sentence's echo is matched against its reference to place it (see
:meth:`EchoCanceller.play`)."""
ALIGN_VOICE_MS = 600
"""How far into a sentence its voice is looked for to place it by (see
:func:`_voice_begins`)."""
ALIGN_SEARCH_MS = (0, 250)
"""Where the echo of a sentence is looked for, after where its reference was laid, until
the room's usual lag is known."""
ALIGN_SPREAD_MS = 30
"""Once it is known, how far from the usual lag a sentence's echo is looked for."""
ALIGN_LEARN = 3
"""Sentences whose echo is looked for over all of ``ALIGN_SEARCH_MS`` before the room's
usual lag (the median of theirs) narrows the search: one sentence alone may be far off (one
begun before the microphone's first frame came was heard 136 ms after where it was laid,
the rest 80 ms, and every sentence searched near it was misplaced). :attr:`EchoCanceller
.loudness` is measured from the first: a lag 50 ms off matters little to it, and a child
talking over the greeting's first sentences is found by it (without it, over a canceller
still learning, not found at all in 2 runs of 8, and after 1.0-1.9 s in the rest)."""
ALIGN_MIN_MATCH = 0.2
"""The least normalised correlation of reference and microphone that counts as the echo
found (a room that returns none of the robot's voice, or a child over all of it, is left
where the clock put it)."""
MODEL_MIN_MATCH = 0.3
"""The least normalised correlation at which a sentence's echo found places it in the model
of the robot's echo (``EchoModel.place``; below it, the model is not trusted while the
sentence plays): a sentence placed where its echo is not leaves all of it, judged as a
child. On a recorded run, sentences found where their echo was scored 0.2-0.85, and pieces
of sentences found elsewhere 0.06-0.13; beside two busy processes the robot once stopped
itself with the model trusted over a sentence laid late, at the start of its reference.
Also never while the host is behind (:attr:`EchoCanceller.behind`)."""
ALIGN_GIVE_UP = 3
"""Sentences in a row without their echo found after which no more are aligned (a robot
that does not hear itself: holding its microphone's frames would only be a delay)."""
OVER_ECHO = 1.5
"""How much louder than the robot's echo could be a sound must be to be somebody else."""
HEARD_OVER_ECHO = 2.0
"""How much louder than the robot's echo and the room's own noise together could be the
microphone's own samples must be to hold somebody else's voice (:attr:`EchoCanceller
.heard_over_echo`). The canceller's suppressor takes part of a voice away while the robot's
is in the frames; the microphone keeps all of it. A 七 said over the robot at a normal voice
(simulated room, fan RMS 700, echo 0.3) was 2.7-4.0 times this bound in its two loudest
frames, where the canceller's output was 1.26-1.89 times its own; the microphone holds
nothing the robot says louder than its echo (a reverb's reflections add ~15 %)."""
ROOM_LEVELS = 50
"""Microphone frames with none of the robot's voice in them whose loudness (their median)
is the room's own noise, for :attr:`EchoCanceller.heard_loudness`."""
ECHO_TAIL_FRAMES = 12
"""10 ms frames of the robot's voice before the room's lag whose reverb may still be heard."""
ECHO_EARLY_FRAMES = 6
"""10 ms frames of the robot's voice after the room's lag that may already be heard (a
sentence placed a little late: its echo comes sooner than the usual lag says)."""
ECHO_AFTER_MS = 150
"""How long after the room's lag the robot's voice may still be heard once its reference ended
(the reverb: the simulated room's reflections come 23 and 51 ms after the direct path)."""
RESUME_MS = 300
"""How long after the robot's voice resumes inside a sentence, after a pause of at least
``PAUSE_MS`` (a comma, a colon: the neural voice pauses 180 ms there), a start over it asks
for more (:attr:`EchoCanceller.resumed`, ``VadConfig.resume_prob``): AEC3 lets part of such
an onset through too. On a recorded run with the neural voices (40 sentences; replayed by
tests/bench/replay_barge.py), 3 of the 5 false starts came 110-210 ms after a pause of
the robot's own voice inside a sentence; of 40 lines a child said over it, 2 began there."""
PAUSE_MS = 120
"""A pause of the robot's voice inside its sentence (see ``RESUME_MS``)."""
FAR_QUIET = 200.0
"""The RMS under which the robot's own 10 ms of voice is a pause (its clip, not the room)."""
BEHIND_MS = 300
"""How late a frame may be processed (after the SDK received it) before the host counts as
behind (:attr:`EchoCanceller.behind`): a starved host lays the robot's voice late and
processes its echo late, and then a start over the robot asks for more
(``VadConfig.warming_prob``). A host keeping up processes each 60 ms frame within a few
milliseconds; a sentence's first frames wait ~150 ms while its echo is found (``ALIGN_*``)."""
CONVERGED_MS = 10_000
"""How much of the robot's voice AEC3 hears before it is trusted (see :attr:`EchoCanceller
.converged`): in the simulated room its first two or three sentences still leave enough
of the robot's voice to start an utterance."""


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

    def __init__(self, *, align: bool = True) -> None:
        import numpy  # noqa: F401 - placing and measuring (imported where used: not in a bundle)
        from livekit import rtc

        from agentcade.voice.echo_model import EchoModel

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
        """10 ms frames of the robot's voice in a row under ``FAR_QUIET``, up to the last."""
        """Timeline position where the robot last began to speak after a pause."""
        self.reference_ms = 0
        """How much of the robot's voice the canceller has been given so far."""
        self._align: tuple[int, int, int] | None = None
        """(where the clip was laid, where the zeros before it begin, where its voice begins)
        of a clip whose echo has not yet been found: frames wait in ``_held`` till it is."""
        self._held: list[tuple[int, bytes]] = []
        """(samples lost before it, frame) waiting for the alignment, in arrival order."""
        self._held_samples = 0
        self._lags: deque[int] = deque(maxlen=9)
        """Where the echo of the last sentences was found, after where they were laid."""
        self._gains: deque[float] = deque(maxlen=9)
        """How loud the echo of the last sentences was heard (a share of what was played)."""
        self._far_rms: deque[float] = deque(maxlen=64)
        """The loudness of what the robot played in each 10 ms frame processed, newest last."""
        self.loudness = 0.0
        """How much louder the last output was than the robot's echo could be (>= 1: a voice
        that is not the robot's; 0 when unknown)."""
        self.heard_loudness = 0.0
        """How much louder the microphone's own samples behind the last output were than the
        robot's echo and the room's noise together could be (0 when unknown)."""
        self._room: deque[float] = deque(maxlen=ROOM_LEVELS)
        """The microphone's loudness in the last frames without the robot's voice."""
        self._misses = 0 if align else ALIGN_GIVE_UP
        self.last_input = b""
        """The microphone's own samples behind the last output of :meth:`process` (exactly as
        long as it): what voice detection and the recogniser hear while the robot is silent
        (see :class:`~agentcade.voice.vad.SileroDetector`)."""
        self.shifts: list[int] = []
        """Every alignment's correction (samples; for benchmarks and tests)."""
        self._model = EchoModel()
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
        that, a start over the robot asks for more: ``VadConfig.warming_prob``)."""
        return self.reference_ms >= CONVERGED_MS

    @property
    def onset(self) -> bool:
        """Whether the robot began a sentence after a pause less than ``ONSET_MS`` before the
        frames being processed (AEC3 lets such an onset through: a start over the robot
        then asks for more, ``VadConfig.warming_prob``)."""
        lag = median_high(self._lags) if self._lags else 0  # its echo comes that much later
        return self._processed - self._onset - lag < ONSET_MS * RATE // 1000

    @property
    def resumed(self) -> bool:
        """Whether the robot's voice resumed after a pause inside a sentence (``PAUSE_MS``)
        less than ``RESUME_MS`` before the frames being processed (its echo's lag
        counted, as for :attr:`onset`)."""
        lag = median_high(self._lags) if self._lags else 0
        return 0 <= self._processed - self._resume - lag < RESUME_MS * RATE // 1000

    @property
    def over_echo(self) -> bool:
        """Whether the last frames processed were louder than the robot's echo could be
        (:attr:`loudness` at least ``OVER_ECHO``): somebody else is talking."""
        return self.loudness >= OVER_ECHO

    @property
    def heard_over_echo(self) -> bool:
        """Whether the microphone's own samples behind the last output were louder than the
        robot's echo and the room could make them (:data:`HEARD_OVER_ECHO`): somebody else
        is talking, however much of their voice the canceller took away with the robot's."""
        return self.heard_loudness >= HEARD_OVER_ECHO

    @property
    def audible(self) -> bool:
        """Whether the robot's voice may still be heard in the frames being processed: while
        it plays, and for the room's lag and reverb after (:data:`ECHO_AFTER_MS`); 250 ms
        when the lag is not known yet."""
        lag = median_high(self._lags) if self._lags else ALIGN_SEARCH_MS[1] * RATE // 1000
        return self._ref_end + lag + ECHO_AFTER_MS * RATE // 1000 > self._processed

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
        self.loudness = self.heard_loudness = 0.0
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
        ahead = min(max(now - at, 0.0), MAX_LAG_S) * self._rate
        return max(self._arrived, position + round(ahead))

    def play(self, pcm: bytes, *, now: float | None = None) -> None:
        """A clip starts playing now: its samples (16 kHz mono s16le) are the reference from
        the timeline's present on (or right after the clip still playing)."""
        start = max(self.present(now), self._ref_end)
        if start > self._ref_end or not self._reference:
            self._onset = start  # a sentence after a pause, not one that follows on
        if self._misses < ALIGN_GIVE_UP and self._align is None:
            free = self._ref_end if self._reference else self._processed
            self._align = (start, free, start + _voice_begins(pcm))
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
        """Whether the host processes the microphone late (:data:`BEHIND_MS`)."""
        return self.late_ms > BEHIND_MS

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
            self.late_ms = ((time.time() if now is None else now) - at) * 1000
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

    def _aligned(self) -> bool:
        """Whether the held frames reach far enough to find the pending clip's echo (then
        the clip is moved to where it was found)."""
        import numpy as np

        assert self._align is not None
        start, free, voiced = self._align
        window = ALIGN_WINDOW_MS * RATE // 1000
        usual = median_high(self._lags) if self._lags else None
        if usual is not None and len(self._lags) >= ALIGN_LEARN:
            spread = ALIGN_SPREAD_MS * RATE // 1000
            lo, hi = usual - spread, usual + spread
        else:
            lo, hi = (ms * RATE // 1000 for ms in ALIGN_SEARCH_MS)
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
        found = _find_echo(mic, at, ref.astype(np.float64), max(lo, 0), hi)
        if found is None:
            self._misses += 1
            return True
        lag, gain, match = found
        if match >= MODEL_MIN_MATCH:
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
                self._far_level(rms(lost[i:i + FRAME_BYTES]), at + i // 2)
        data = self._rest + frame
        whole = len(data) - len(data) % FRAME_BYTES
        self._rest = data[whole:]
        cleaned, clean = self._model.cancel(self._processed, data[:whole])
        out = bytearray()
        rtc = self._rtc
        for i in range(0, whole, FRAME_BYTES):
            at = self._processed
            far = self._far(FRAME_SAMPLES)
            self._far_level(rms(far), at)
            if self.playing:
                self.reference_ms += 10
            self._apm.process_reverse_stream(rtc.AudioFrame(far, RATE, 1, FRAME_SAMPLES))
            near = rtc.AudioFrame(bytearray(data[i:i + FRAME_BYTES]), RATE, 1, FRAME_SAMPLES)
            self._apm.process_stream(near)
            out += memoryview(near.data).cast("B")
        self._measure(bytes(out), data[:whole], whole // FRAME_BYTES)
        measured = False
        if self._lags and self._room and self.loudness < 1.0:  # nobody louder than the echo
            measured = self._model.learn(median_high(self._room))
        return _Cancelled(bytes(out), data[:whole], cleaned, clean, measured)

    def _far_level(self, level: float, at: int) -> None:
        """The loudness of the robot's 10 ms of voice at ``at``: kept for :meth:`_measure`,
        and a resume after a pause noted (:attr:`resumed`)."""
        self._far_rms.append(level)
        if level < FAR_QUIET:
            self._far_quiet += 1
            return
        if self._far_quiet * 10 >= PAUSE_MS:
            self._resume = at
        self._far_quiet = 0

    def _measure(self, out: bytes, heard: bytes, frames: int) -> None:
        """:attr:`loudness` of ``out`` (the last ``frames`` frames processed): its RMS over
        the most the robot's echo could be in it: the echo's gain times the loudness of what
        was played then (the room's lag earlier, and its reverb before that); and
        :attr:`heard_loudness` of ``heard`` (the microphone's samples behind it), over that
        and the room's noise together."""
        if not frames or not self._lags:
            self.loudness = self.heard_loudness = 0.0
            return
        gain = median_high(self._gains)
        lag = median_high(self._lags) // FRAME_SAMPLES
        history = list(self._far_rms)
        end = len(history) - lag + 1 + ECHO_EARLY_FRAMES
        window = history[max(0, end - frames - ECHO_EARLY_FRAMES - ECHO_TAIL_FRAMES):max(0, end)]
        played = max(window, default=0.0)
        level = rms(out)
        self.loudness = level / (gain * played) if played > 0 else math.inf if level else 0.0
        heard_level = rms(heard)
        if played < FAR_QUIET:  # none of the robot's voice: the room alone
            self._room.append(heard_level)
        room = median_high(self._room) if self._room else 0.0
        self.heard_loudness = heard_level / math.hypot(gain * played, room) if room else 0.0

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


def _voice_begins(pcm: bytes) -> int:
    """Where the voice begins in a clip (samples into it): its first 10 ms frame at least
    half as loud as its loudest in ``ALIGN_VOICE_MS``. A clip that begins quietly (a breath,
    an "s") is found by its voice: its first moments are lost in the tail of the sentence
    before and the room's noise."""
    import numpy as np

    head = np.frombuffer(pcm[:2 * min(len(pcm) // 2, ALIGN_VOICE_MS * RATE // 1000)], np.int16)
    frames = len(head) // FRAME_SAMPLES
    if not frames:
        return 0
    levels = np.sqrt(np.mean(
        head[:frames * FRAME_SAMPLES].astype(np.float64).reshape(frames, -1) ** 2, axis=1))
    return int(np.argmax(levels >= levels.max() / 2)) * FRAME_SAMPLES


def _find_echo(
    mic: np.ndarray, start: int, ref: np.ndarray, lo: int, hi: int
) -> tuple[int, float, float] | None:
    """The lag in ``lo..hi`` at which ``ref`` (laid at ``mic[start]``) is heard best in
    ``mic``, how loud it is heard there (the echo's gain) and how well it matched (the
    normalised correlation), or None when nothing there
    resembles it (:data:`ALIGN_MIN_MATCH`). Both are
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
    if score[best] < ALIGN_MIN_MATCH:
        return None
    return lo + best, float(dots[best] / (ref @ ref)), float(score[best])


def make_echo_canceller() -> tuple[EchoCanceller | None, str | None]:
    """``(canceller, None)``, or ``(None, why)`` when it cannot load here."""
    try:
        return EchoCanceller(), None
    except (ImportError, OSError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
