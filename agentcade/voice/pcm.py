"""16-bit PCM helpers the voice layer needs, in pure Python (no ``audioop``: it is gone in 3.13).

Pure functions on ``bytes`` of signed 16-bit little-endian mono samples: loudness (RMS, as
the SDK's detector computes it), linear resampling (espeak-ng speaks 22050 Hz; the robot
plays 24 kHz and hears 16 kHz), and WAV in and out (an OpenAI-compatible ASR takes a WAV
file; espeak-ng's ``--stdout`` WAV has placeholder sizes, so the reader trusts the data).
"""

from __future__ import annotations

import io
import math
import struct
import sys
import wave
from array import array

from agentcade.core.errors import VoiceError

__all__ = ["WavError", "read_wav", "resample", "rms", "seconds", "to_wav"]


class WavError(VoiceError, ValueError):
    """Bytes that are not a 16-bit PCM WAV file (a speech service or espeak-ng sent them)."""


def _samples(pcm: bytes) -> array[int]:
    samples = array("h")
    samples.frombytes(pcm[: len(pcm) - len(pcm) % 2])
    if sys.byteorder == "big":  # pragma: no cover - the hosts are little-endian
        samples.byteswap()
    return samples


def _bytes(samples: array[int]) -> bytes:
    if sys.byteorder == "big":  # pragma: no cover
        samples = array("h", samples)
        samples.byteswap()
    return samples.tobytes()


def rms(pcm: bytes) -> float:
    """Root mean square of the samples (0 for no samples)."""
    samples = _samples(pcm)
    if not samples:
        return 0.0
    return math.sqrt(math.fsum(x * x for x in samples) / len(samples))


def seconds(pcm: bytes, rate: int) -> float:
    """How long ``pcm`` lasts at ``rate`` Hz."""
    return len(pcm) / (2 * rate)


def resample(pcm: bytes, source_rate: int, target_rate: int) -> bytes:
    """Linear-interpolation resampling; good enough for speech, and portable."""
    if source_rate == target_rate:
        return pcm[: len(pcm) - len(pcm) % 2]
    samples = _samples(pcm)
    if not samples:
        return b""
    count = int(len(samples) * target_rate / source_rate)
    step = source_rate / target_rate
    last = len(samples) - 1
    out = array("h", bytes(2 * count))
    for i in range(count):
        position = i * step
        j = int(position)
        if j >= last:
            out[i] = samples[last]
            continue
        frac = position - j
        a = samples[j]
        out[i] = int(a + (samples[j + 1] - a) * frac)
    return _bytes(out)


def to_wav(pcm: bytes, rate: int) -> bytes:
    """A mono 16-bit WAV file of ``pcm``."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return buffer.getvalue()


def read_wav(data: bytes) -> tuple[bytes, int]:
    """``(mono PCM, rate)`` of a 16-bit PCM WAV (stereo is mixed down).

    Chunk sizes of ``data`` are not trusted (a streamed WAV, like espeak-ng's, says
    0x7fffffff): the audio runs to the end of the bytes.

    Raises:
        WavError: not a RIFF/WAVE file with 16-bit PCM.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise WavError("not a WAV file")
    offset = 12
    rate = channels = bits = 0
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        body = offset + 8
        if chunk == b"fmt ":
            fmt, channels, rate = struct.unpack_from("<HHI", data, body)
            bits = struct.unpack_from("<H", data, body + 14)[0]
            if fmt not in (1, 0xFFFE) or bits != 16:
                raise WavError("WAV is not 16-bit PCM")
        elif chunk == b"data":
            if not rate:
                raise WavError("WAV has no fmt chunk before its data")
            pcm = data[body:body + size] if size < len(data) - body else data[body:]
            pcm = pcm[: len(pcm) - len(pcm) % (2 * channels)]
            if channels > 1:
                pcm = _mix_down(pcm, channels)
            return pcm, rate
        offset = body + size + (size & 1)
    raise WavError("WAV has no data chunk")


def _mix_down(pcm: bytes, channels: int) -> bytes:
    samples = _samples(pcm)
    mono = array("h", (
        int(sum(samples[i:i + channels]) / channels) for i in range(0, len(samples), channels)
    ))
    return _bytes(mono)
