"""Loudness voice detection, sans-IO: frames in, the utterance's audio out.

The SDK's detector (``watcherobot.voice.device.SDKVoiceDevice.utterance``) with its
defaults: a frame whose RMS is at least ``threshold`` (550) is voiced; the first voiced
frame starts an utterance, which begins with up to ``pre_roll_ms`` (300) of the audio
before it (the soft start of the first word); ``silence_ms`` (800) of unvoiced frames
end it, and so does ``max_ms`` (30 s). Settings can tune all four
(``VAD_THRESHOLD``, ``VAD_SILENCE_MS``, ``VAD_PRE_ROLL_MS``, ``VAD_MAX_MS``).

:meth:`LoudnessDetector.feed` takes one frame and returns what it means, so the trio
listener only moves bytes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

from agentcade.voice.pcm import rms

__all__ = ["LoudnessDetector", "Step", "VadConfig"]

RATE = 16000
BYTES_PER_MS = RATE * 2 // 1000


@dataclass(frozen=True)
class VadConfig:
    """The detector's knobs; the defaults are the SDK's (``ConversationConfig``)."""

    threshold: float = 550
    silence_ms: int = 800
    pre_roll_ms: int = 300
    max_ms: int = 30_000


@dataclass(frozen=True)
class Step:
    """What one frame meant.

    ``kind``: ``quiet`` (no utterance; ``audio`` is empty), ``start`` (an utterance began;
    ``audio`` is the pre-roll and this frame), ``voice`` (more of it), ``end`` (this frame
    ended it; ``audio`` is the frame, part of the utterance's trailing silence).
    """

    kind: Literal["quiet", "start", "voice", "end"]
    audio: bytes = b""


class LoudnessDetector:
    """One utterance at a time; call :meth:`reset` to drop a half-heard one."""

    def __init__(self, config: VadConfig | None = None) -> None:
        self.config = config or VadConfig()
        self._pre: deque[bytes] = deque()
        self._pre_bytes = 0
        self._speaking = False
        self._silence_ms = 0.0
        self._length_ms = 0.0
        self.voiced_ms = 0.0
        """Voiced time of the current (or last) utterance."""

    @property
    def speaking(self) -> bool:
        return self._speaking

    def reset(self) -> None:
        """Forget everything heard (used while the robot speaks: half duplex)."""
        self._pre.clear()
        self._pre_bytes = 0
        self._speaking = False
        self._silence_ms = self._length_ms = 0.0

    def feed(self, frame: bytes) -> Step:
        cfg = self.config
        ms = len(frame) / BYTES_PER_MS
        voiced = rms(frame) >= cfg.threshold
        if not self._speaking:
            if not voiced:
                self._pre.append(frame)
                self._pre_bytes += len(frame)
                while self._pre and self._pre_bytes > cfg.pre_roll_ms * BYTES_PER_MS:
                    self._pre_bytes -= len(self._pre.popleft())
                return Step("quiet")
            audio = b"".join(self._pre) + frame
            self._pre.clear()
            self._pre_bytes = 0
            self._speaking = True
            self._silence_ms = 0.0
            self._length_ms = ms
            self.voiced_ms = ms
            return Step("start", audio)
        self._length_ms += ms
        if voiced:
            self._silence_ms = 0.0
            self.voiced_ms += ms
        else:
            self._silence_ms += ms
        if self._silence_ms >= cfg.silence_ms or self._length_ms >= cfg.max_ms:
            self._speaking = False
            self._silence_ms = self._length_ms = 0.0
            return Step("end", frame)
        return Step("voice", frame)
