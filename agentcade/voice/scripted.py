"""A recogniser that knows what will be said: the scenario's lines, in order.

No offline Chinese ASR installs on the machines this runs on (robot-sdk.md §9), so a
scenario played into the simulated microphone (``agentcade run --robot sim --say-file``,
and the end-to-end tests) is recognised by script. It is still a check of the audio
path: :meth:`ScriptedRecognizer.transcribe` reads the utterance the voice detector cut,
and refuses (:class:`~agentcade.core.errors.VoiceError`) audio that cannot be the line — too
little voiced audio, or far too short or long for the line's length — before it answers
with the line.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass

import trio

from agentcade.core.errors import VoiceError
from agentcade.voice.pcm import rms
from agentcade.voice.tuning import TUNING, Tuning

__all__ = ["Received", "ScriptedRecognizer"]

FRAME = 1920
"""60 ms at 16 kHz: the unit voiced audio is measured in."""
MIN_SECONDS_PER_CHAR = 0.06
MAX_SECONDS_PER_CHAR = 1.5


@dataclass(frozen=True)
class Received:
    """What one call heard."""

    line: str
    seconds: float
    voiced_seconds: float


class ScriptedRecognizer:
    """Answers each utterance with the next line, after checking it is plausible audio.

    Args:
        lines: what will be said, in order.
        vad: the loudness threshold that counts a frame as voiced.
        latency: seconds from the end of the audio to the answer (the benchmark's fixed
            provider latency; the plausibility check runs inside it).
    """

    name = "scripted"

    def __init__(
        self, lines: Sequence[str], *, vad: Tuning | None = None, latency: float = 0.0
    ) -> None:
        self._lines = list(lines)
        self._threshold = (vad or TUNING).threshold
        self._latency = latency
        self.received: list[Received] = []

    def expect(self, line: str) -> None:
        """Add ``line`` to what will be said (a driver that decides its lines as it goes)."""
        self._lines.append(line)

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        pcm = b"".join([chunk async for chunk in audio])
        answer_at = trio.current_time() + self._latency  # the check below is part of it
        try:
            return self._answer(pcm)
        finally:
            await trio.sleep_until(answer_at)

    def _answer(self, pcm: bytes) -> str:
        if not self._lines:
            raise VoiceError("the scenario has no more lines, but someone spoke")
        line = self._lines[0]
        seconds = len(pcm) / 32000
        voiced = sum(
            FRAME for i in range(0, len(pcm), FRAME) if rms(pcm[i:i + FRAME]) >= self._threshold
        ) / 32000
        chars = max(1, len(line.strip()))
        if voiced < min(0.3, chars * MIN_SECONDS_PER_CHAR) or not (
            chars * MIN_SECONDS_PER_CHAR <= seconds <= chars * MAX_SECONDS_PER_CHAR + 2.0
        ):
            raise VoiceError(
                f"heard {seconds:.1f} s ({voiced:.1f} s voiced), which cannot be {line!r}"
            )
        self._lines.pop(0)
        self.received.append(Received(line, seconds, voiced))
        return line

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()
