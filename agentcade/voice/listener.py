"""Hearing one utterance: microphone frames -> voice detection -> ASR -> text (trio).

:meth:`Listener.hear` waits for speech (dropping everything heard while ``deaf()``: the
robot speaks, half duplex), then streams the utterance to the recognizer as it is heard
— the pre-roll first — and returns a :class:`Heard` with the text and its times.

Trace records: ``speech_heard`` when an utterance ends (audio_ms, voiced_ms),
``asr_final`` (text, asr_ms: from the end of speech to the final text), ``speech_dropped``
(the robot began to speak before the utterance ended: it is not recognised).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import trio

from agentcade.core.errors import DeviceError
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.voice.asr import Recognizer
from agentcade.voice.vad import VadConfig, make_detector

__all__ = ["Heard", "Listener", "MicrophoneClosed"]

BYTES_PER_SECOND = 32000


class MicrophoneClosed(DeviceError):
    """The robot's microphone stream ended (robot gone, or the session closed)."""

    def __init__(self) -> None:
        super().__init__("unavailable", "microphone.read", "the microphone stream ended")


@dataclass(frozen=True)
class Heard:
    """One recognised utterance. Times are wall-clock (``time.time()``)."""

    text: str
    audio_seconds: float
    voiced_seconds: float
    speech_end: float
    asr_final: float

    @property
    def asr_ms(self) -> int:
        return round((self.asr_final - self.speech_end) * 1000)


class Listener:
    """Reads frames from one microphone channel; one :meth:`hear` at a time."""

    def __init__(
        self,
        frames: trio.MemoryReceiveChannel[bytes],
        recognizer: Recognizer,
        *,
        vad: VadConfig | None = None,
        deaf: Callable[[], bool] = lambda: False,
        trace: Trace = NULL_TRACE,
        on_utterance: Callable[[bytes], None] | None = None,
    ) -> None:
        self._on_utterance = on_utterance
        """Given each recognised utterance's audio (``--record``)."""
        self._frames = frames
        self._recognizer = recognizer
        self._detector = make_detector(vad)
        self._deaf = deaf
        self._trace = trace

    async def _frame(self) -> bytes:
        try:
            return await self._frames.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise MicrophoneClosed from None

    async def hear(self) -> Heard:
        """The next utterance, recognised (its text may be "": nothing understood).

        Raises:
            MicrophoneClosed: the microphone stream ended.
            VoiceError: the recognizer failed.
        """
        detector = self._detector
        detector.reset()
        while True:
            frame = await self._frame()
            if self._deaf():
                detector.reset()
                continue
            step = detector.feed(frame)
            if step.kind == "start":
                break
        send, receive = trio.open_memory_channel[bytes](math.inf)
        send.send_nowait(step.audio)
        kept = [step.audio] if self._on_utterance is not None else None
        total = len(step.audio)
        speech_end = 0.0

        dropped = False

        async def follow() -> None:
            nonlocal total, speech_end, dropped
            async with send:
                while True:
                    frame = await self._frame()
                    if self._deaf():  # the robot began to speak: half duplex, drop it
                        dropped = True
                        detector.reset()
                        nursery.cancel_scope.cancel()
                        return
                    step = detector.feed(frame)
                    send.send_nowait(step.audio)
                    if kept is not None:
                        kept.append(step.audio)
                    total += len(step.audio)
                    if step.kind == "end":
                        speech_end = time.time()
                        self._trace.record(
                            "speech_heard", audio_ms=round(total * 1000 / BYTES_PER_SECOND),
                            voiced_ms=round(detector.voiced_ms),
                        )
                        return

        text = ""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow)
            text = await self._recognizer.transcribe(receive)
        asr_final = time.time()
        if dropped:
            self._trace.record("speech_dropped", audio_ms=round(total * 1000 / BYTES_PER_SECOND))
            return Heard("", total / BYTES_PER_SECOND, detector.voiced_ms / 1000, asr_final, asr_final)
        if kept is not None and self._on_utterance is not None:
            self._on_utterance(b"".join(kept))
        heard = Heard(text, total / BYTES_PER_SECOND, detector.voiced_ms / 1000, speech_end, asr_final)
        self._trace.record("asr_final", text=text, asr_ms=heard.asr_ms, recognizer=self._recognizer.name)
        return heard
