"""A linear model of the robot's echo: what it played, as the room returns it, taken out of
the microphone's own samples — leaving a child quieter than that echo standing.

Why beside AEC3 (:mod:`agentcade.voice.echo`): AEC3's suppressor takes out whatever it
cannot tell from the robot's voice, and a child quieter than the robot's echo (a quiet
child a metre away, the robot's speaker a few centimetres from its microphone) goes with
it. Measured on a recorded run (``tests/bench/bench_barge.py --capture``: fan RMS 700, echo
0.3, 24 lines said over the robot at a quarter of a normal voice): Silero's longest run of
speech (p >= 0.5) was 0–64 ms in AEC3's output for 8 of the 24 lines; on the microphone with
this model's echo taken out, 128–1056 ms: the quiet child (~790 RMS) stands over the fan
(~540) and what is left of the echo. The echo is linear enough: a filter fitted to one
sentence leaves ~585 RMS of the microphone's ~1080 where the fan alone is ~540 — about a
quarter of the echo (the microphone's Opus coding, each sentence's place to a fraction of a
sample), under the fan's noise.

What makes it work is the place of each sentence: the robot's sentences come back tens of
samples apart from where their reference is laid (1300–1580 samples after, on that run),
and an adaptive filter that must follow such jumps in a fan's noise never settles (a
partitioned frequency-domain NLMS took ~6 dB off). The canceller already finds each
sentence's echo to the sample (its placing, ``EchoCanceller._aligned``); here each sentence
is laid where its echo was found (:meth:`EchoModel.place`), so the room's response is the
same for all of them and is learned once, by least squares over every sentence heard with
nobody louder than the echo (:meth:`EchoModel.learn`; a quiet voice in it is uncorrelated
with the robot's and only adds noise), refreshed every ``tuning.model_learn_s`` of echo with older
sentences counting less (``tuning.model_forget``: a room changes).

It is trusted (:attr:`EchoModel.trusted`) once what it leaves of the robot's voice, measured
on the frames it learned from where that voice stood out of the room, is at most
``tuning.trust_left`` of that voice and lost in the room's own noise (``tuning.trust_masked``); voice
detection then also asks Silero whether it hears what is left (those frames are
:meth:`EchoModel.learn`'s ``True``); and for a frame only
when every sentence in it was placed by its echo. A room whose echo it cannot model (a long
reverb; a sentence not found) is never trusted: the canceller's output alone is judged then,
as before.

Sans-IO: numbers in, numbers out; no trio.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from agentcade.voice.tuning import MIC_RATE, TUNING, Tuning

__all__ = ["EchoModel"]

RATE = MIC_RATE


@dataclass
class _Clip:
    laid: int
    """Where the canceller laid it (its timeline, samples)."""
    pcm: np.ndarray
    lag: int | None = None
    """How much later than laid its echo comes (None: not found)."""

    @property
    def end(self) -> int:
        return self.laid + len(self.pcm)


class EchoModel:
    """See the module docstring. Positions are the echo canceller's timeline (samples)."""

    def __init__(self, tuning: Tuning = TUNING) -> None:
        self._t = tuning
        self._unplaced_lag = tuning.align_search_ms[1] * RATE // 1000
        """How late the echo of a clip not placed may come."""
        self._clips: list[_Clip] = []
        self._h: np.ndarray | None = None
        self._rxx = np.zeros(self._t.model_taps)
        self._rxy = np.zeros(self._t.model_taps)
        self._since = 0
        """Samples learned from since the last solution."""
        self._left: deque[tuple[float, float]] = deque(maxlen=self._t.trust_frames)
        """What the model left of the echo in the last frames learned from: a share of the
        echo, and of the room's noise."""
        self._x = np.zeros(0)
        """The reference behind the last :meth:`cancel` (for :meth:`learn`)."""
        self._mic = np.zeros(0)
        """... and the microphone (for :meth:`learn`)."""
        self._est = np.zeros(0)
        self._placed = False

    def lay(self, at: int, pcm: bytes) -> None:
        """A clip (16 kHz mono s16le) laid at ``at``: its echo is not placed yet."""
        samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], np.int16).astype(np.float64)
        self._clips.append(_Clip(at, samples))

    def place(self, at: int, lag: int) -> None:
        """The echo of the clip laid at ``at`` comes ``lag`` samples after it."""
        for clip in self._clips:
            if clip.laid == at:
                clip.lag = lag

    def cut(self, at: int) -> None:
        """Nothing laid from ``at`` on was played (the sound was stopped)."""
        kept = []
        for clip in self._clips:
            if clip.laid < at:
                clip.pcm = clip.pcm[: at - clip.laid]
                kept.append(clip)
        self._clips = kept

    def rebase(self, origin: int) -> None:
        """The timeline begins again at ``origin`` (a microphone opened)."""
        for clip in self._clips:
            clip.laid -= origin

    def _reference(self, lo: int, hi: int) -> tuple[np.ndarray, bool]:
        """The robot's voice over ``lo..hi``, each clip where its echo comes, and whether
        every clip there was placed."""
        out = np.zeros(hi - lo)
        placed = True
        for clip in self._clips:
            if clip.lag is None:  # its echo comes somewhere in the next quarter second
                placed = placed and not (clip.laid < hi and clip.end + self._unplaced_lag > lo)
                continue
            a, b = clip.laid + clip.lag, clip.end + clip.lag
            x, y = max(a, lo), min(b, hi)
            if x < y:
                out[x - lo:y - lo] += clip.pcm[x - a:y - a]
        return out, placed

    def cancel(self, at: int, near: bytes) -> tuple[bytes, bool]:
        """``near`` (the microphone at ``at``…, s16le) with the modelled echo taken out, and
        whether that can be trusted (see the module docstring). Clips whose echo is over
        are forgotten."""
        mic = np.frombuffer(near[: len(near) - len(near) % 2], np.int16).astype(np.float64)
        n = len(mic)
        self._mic = mic
        self._clips = [c for c in self._clips
                       if c.end + (self._unplaced_lag if c.lag is None else c.lag) + self._t.model_taps > at]
        taps, pre = self._t.model_taps, self._t.model_pre
        self._x, self._placed = self._reference(at + pre - taps + 1, at + n + pre)
        if self._h is None or not self._x.any():
            self._est = np.zeros(n)
            return near[: 2 * n], self._placed and self.trusted
        self._est = _convolve_valid(self._x, self._h)
        out = np.clip(np.rint(mic - self._est), -32768, 32767).astype(np.int16).tobytes()
        return out, self._placed and self.trusted

    @property
    def trusted(self) -> bool:
        """Whether the model leaves little enough of the robot's echo (``tuning.trust_left``)."""
        if self._h is None or len(self._left) < self._t.trust_frames // 4:
            return False
        middle = len(self._left) // 2
        return (sorted(share for share, _ in self._left)[middle] <= self._t.trust_left
                and sorted(masked for _, masked in self._left)[middle] <= self._t.trust_masked)

    def learn(self, room: float) -> bool:
        """Learn from the frames of the last :meth:`cancel` (call only when nobody was
        louder than the robot's echo in them); ``room``: the room's own noise (RMS). True
        when what the model leaves of the echo there was measured (it stood out of the
        room): then what is left in the frames is the robot's voice the model missed."""
        if not self._placed or not self._x.any():
            return False
        mic = self._mic
        n = len(mic)
        x = self._x
        taps = self._t.model_taps
        if len(x) != n + taps - 1 or float(np.sqrt(np.mean(x[taps - 1:] ** 2))) < self._t.model_quiet_rms:
            return False
        measured = False
        if self._h is not None:
            echo = float(np.sqrt(np.mean(self._est ** 2)))
            if echo > max(room, self._t.model_quiet_rms):  # where it stands out of the room (``tuning.trust_masked``)
                left = float(np.sqrt(np.mean((mic - self._est) ** 2)))
                left = math.sqrt(max(left * left - room * room, 0.0))
                self._left.append((left / echo, left / room if room else math.inf))
                measured = True
        # p[j] = sum_t mic[t] x[t + pre - j];  r[m] = sum_t x[t] x[t - m] (t in this chunk)
        self._rxy += _correlate_valid(x, mic)[::-1]
        self._rxx += _correlate_valid(x, x[self._t.model_taps - 1:])[::-1]
        self._since += n
        if self._since >= self._t.model_learn_s * RATE:
            self._solve()
        return measured

    def _solve(self) -> None:
        r = self._rxx.copy()
        r[0] *= 1 + self._t.model_ridge
        try:
            self._h = _toeplitz_solve(r, self._rxy)
        except np.linalg.LinAlgError:
            return
        self._rxx *= self._t.model_forget
        self._rxy *= self._t.model_forget
        self._since = 0


def _toeplitz_solve(r: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x`` with ``T x = b``, ``T`` the symmetric Toeplitz matrix whose first column is
    ``r``: Levinson's recursion, O(n²) — 13 ms for 1,024 taps here where a general solve
    takes 42-56 ms, on the thread that hears the microphone.

    Raises:
        np.linalg.LinAlgError: ``T`` is not positive definite.
    """
    n = len(b)
    f = np.zeros(n)
    x = np.zeros(n)
    if r[0] <= 0:
        raise np.linalg.LinAlgError("not positive definite")
    f[0] = 1 / r[0]
    x[0] = b[0] / r[0]
    for k in range(1, n):
        rk = r[k:0:-1]
        ef = float(rk @ f[:k])
        ex = float(rk @ x[:k])
        if ef * ef >= 1:
            raise np.linalg.LinAlgError("not positive definite")
        back = np.concatenate(([0.0], f[k - 1::-1]))
        f[:k + 1] = (f[:k + 1] - ef * back) / (1 - ef * ef)
        x[:k + 1] += (b[k] - ex) * f[k::-1]
    return x


def _fft_size(n: int) -> int:
    return 1 << max(n - 1, 1).bit_length()


def _convolve_valid(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``np.convolve(x, h, "valid")``, by FFT."""
    size = _fft_size(len(x) + len(h))
    full = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(h, size), size)
    return full[len(h) - 1:len(x)]


def _correlate_valid(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``np.correlate(x, y, "valid")`` (``len(x) >= len(y)``), by FFT."""
    size = _fft_size(len(x) + len(y))
    full = np.fft.irfft(np.fft.rfft(x, size) * np.conj(np.fft.rfft(y, size)), size)
    return full[:len(x) - len(y) + 1]
