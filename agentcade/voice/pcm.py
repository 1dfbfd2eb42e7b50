"""16-bit PCM for the voice layer: loudness, resampling and decoding through PyAV.

Every function works on ``bytes`` of signed 16-bit little-endian mono samples (what the
robot plays at 24 kHz and hears at 16 kHz). Resampling and decoding go through PyAV
(FFmpeg's swresample and decoders, installed with the robot SDK): a linear interpolator
aliases (a 15 kHz tone taken from 44.1 to 24 kHz kept 3,949 of 5,657 RMS; swresample leaves
about 20), and resampling each chunk of a stream on its own loses samples at every edge.
So a stream gets one :class:`Resampler` that keeps its filter state from chunk to chunk.

These calls do real work (a 10 s clip is a few milliseconds, a long one more): async
callers run them in a worker thread (``trio.to_thread.run_sync``), never on the event loop.
"""

from __future__ import annotations

import io
import math
import sys
import wave
from array import array

import av
from av.audio.frame import AudioFrame
from av.audio.resampler import AudioResampler

from agentcade.core.errors import VoiceError

__all__ = [
    "Resampler", "WavError", "decode_audio", "leading_silence", "resample", "resume_point", "rms",
    "seconds", "to_wav",
]


class WavError(VoiceError, ValueError):
    """Bytes that are no audio we can decode (a speech service or espeak-ng sent them)."""


def _samples(pcm: bytes) -> array[int]:
    samples = array("h")
    samples.frombytes(pcm[: len(pcm) - len(pcm) % 2])
    if sys.byteorder == "big":  # pragma: no cover - the hosts are little-endian
        samples.byteswap()
    return samples


def rms(pcm: bytes) -> float:
    """Root mean square of the samples (0 for no samples)."""
    samples = _samples(pcm)
    if not samples:
        return 0.0
    return math.sqrt(math.fsum(x * x for x in samples) / len(samples))


def seconds(pcm: bytes, rate: int) -> float:
    """How long ``pcm`` lasts at ``rate`` Hz."""
    return len(pcm) / (2 * rate)


def leading_silence(pcm: bytes, rate: int) -> float:
    """Seconds before the first sound of ``pcm`` (a sample over 32, -60 dB): what a clip
    says nothing in before its voice (the whole clip when it is all silence)."""
    samples = _samples(pcm)
    first = next((i for i, x in enumerate(samples) if abs(x) > 32), len(samples))
    return first / rate


def resume_point(pcm: bytes, position: int, rate: int, *, back_ms: int = 300) -> int:
    """Where to pick ``pcm`` up again after it was paused at byte ``position``: the start of
    its quietest 20 ms in the ``back_ms`` before, so a sentence goes on from a gap between
    syllables instead of from the middle of one (a byte offset, on a sample).

    Said again from there, the listener hears the word it was cut in whole; from the
    exact point it would hear half a syllable.
    """
    position = max(0, min(position - position % 2, len(pcm) - len(pcm) % 2))
    window = 2 * rate // 50
    earliest = max(0, position - 2 * rate * back_ms // 1000)
    if position - earliest < window:
        return earliest
    best, quietest = position, math.inf
    for start in range(position - window, earliest - 1, -window // 2):
        level = rms(pcm[start:start + window])
        if level < quietest:
            best, quietest = start, level
    return best


def _frame_bytes(frame: AudioFrame) -> bytes:
    return bytes(frame.planes[0])[: frame.samples * 2]


class Resampler:
    """One stream's resampler, from ``source_rate`` to ``target_rate`` (mono s16).

    Feed the stream's chunks in order with :meth:`feed`, then :meth:`flush` once: the
    output is the whole stream resampled, with nothing lost or doubled at chunk edges
    (the filter's history carries over). Not thread-safe: one stream, one caller.
    """

    def __init__(self, source_rate: int, target_rate: int) -> None:
        self.source_rate = source_rate
        self.target_rate = target_rate
        self._same = source_rate == target_rate
        self._resampler = AudioResampler(format="s16", layout="mono", rate=target_rate)
        self._odd = b""

    def feed(self, pcm: bytes) -> bytes:
        """The resampled audio ready so far for this next chunk of the stream."""
        pcm = self._odd + pcm
        usable = len(pcm) - len(pcm) % 2
        self._odd = pcm[usable:]
        if self._same or not usable:
            return pcm[:usable]
        frame = AudioFrame(format="s16", layout="mono", samples=usable // 2)
        frame.planes[0].update(pcm[:usable])
        frame.sample_rate = self.source_rate
        return b"".join(_frame_bytes(f) for f in self._resampler.resample(frame))

    def flush(self) -> bytes:
        """The rest of the stream (the filter's tail); the resampler is done after it."""
        self._odd = b""
        if self._same:
            return b""
        return b"".join(_frame_bytes(f) for f in self._resampler.resample(None))


def resample(pcm: bytes, source_rate: int, target_rate: int) -> bytes:
    """A whole clip resampled (one :class:`Resampler`, fed once and flushed)."""
    resampler = Resampler(source_rate, target_rate)
    return resampler.feed(pcm) + resampler.flush()


def to_wav(pcm: bytes, rate: int) -> bytes:
    """A mono 16-bit WAV file of ``pcm``."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return buffer.getvalue()


def decode_audio(data: bytes) -> tuple[bytes, int]:
    """``(mono s16 PCM, rate)`` of an audio file (WAV, MP3, Ogg … whatever FFmpeg reads).

    Several channels are mixed down. Chunk sizes of a WAV are not trusted (espeak-ng's
    streamed WAV says 0x7fffffff): the audio runs to the end of the bytes.

    Raises:
        WavError: the bytes hold no audio FFmpeg can decode.
    """
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise WavError("no audio in the file")
            stream = container.streams.audio[0]
            rate = stream.rate or stream.codec_context.sample_rate
            mono = AudioResampler(format="s16", layout="mono", rate=rate)
            out = bytearray()
            for frame in container.decode(stream):
                for converted in mono.resample(frame):
                    out += _frame_bytes(converted)
            for converted in mono.resample(None):
                out += _frame_bytes(converted)
    except WavError:
        raise
    except (av.FFmpegError, ValueError, IndexError) as exc:
        raise WavError(f"not an audio file ({type(exc).__name__})") from None
    if not out:
        raise WavError("the file holds no samples")
    return bytes(out), int(rate)
