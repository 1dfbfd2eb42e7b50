"""Hearing one utterance: microphone frames -> voice detection -> ASR -> text (trio).

:meth:`Listener.hear` waits for speech, then streams the utterance to the recognizer as it
is heard — the pre-roll first — and returns a :class:`Heard` with the text and its times.

Half duplex (no echo canceller): everything heard while ``deaf()`` (the robot speaks) is
dropped. Full duplex (an :class:`~agentcade.voice.echo.EchoCanceller`): every frame has
the robot's own voice removed and is heard; speech that starts while the robot speaks, or
goes on when the robot begins to speak, calls ``on_barge_in`` at once (the sound stops)
and is recognised like any other line. While the robot's voice may be in the frames
(``EchoCanceller.audible``: it plays, and its echo's lag and reverb after) voice detection
and the recogniser are given the canceller's output; while it is silent, the microphone's
own samples, as half duplex is (see :meth:`~agentcade.voice.vad.SileroDetector.feed`).

Trace records: ``speech_heard`` when an utterance ends (audio_ms, voiced_ms),
``asr_final`` (text, asr_ms: from the end of speech to the final text), ``speech_dropped``
(half duplex: the robot began to speak before the utterance ended: it is not recognised),
``speech_over_robot`` (full duplex: speech started while the robot spoke).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import trio

from agentcade.core.errors import DeviceError, lone_exception
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.voice.asr import Recognizer
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.vad import Detector, SileroDetector, VadConfig, make_detector

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
        echo: EchoCanceller | None = None,
        speaking: Callable[[], bool] = lambda: False,
        on_barge_in: Callable[[], None] | None = None,
    ) -> None:
        self._echo = echo
        """Full duplex when set: every frame has the robot's echo removed and nothing is
        dropped while it speaks; else half duplex (``deaf``)."""
        self._speaking = speaking
        self._on_barge_in = on_barge_in
        """Called the moment speech starts while ``speaking()``: the sound must stop."""
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

    def _tell(self, detector: Detector, echo: EchoCanceller) -> None:
        """What voice detection must know of the robot's voice in the frames just processed."""
        detector.robot_speaking = echo.audible or self._speaking()
        if isinstance(detector, SileroDetector):
            detector.echo_converged = echo.converged
            detector.echo_onset = echo.onset
            detector.over_echo = echo.over_echo

    async def hear(self) -> Heard:
        """The next utterance, recognised (its text may be "": nothing understood).

        Raises:
            MicrophoneClosed: the microphone stream ended.
            VoiceError: the recognizer failed.
        """
        detector = self._detector
        detector.reset()
        echo = self._echo
        while True:
            frame = await self._frame()
            if echo is None and self._deaf():
                detector.reset()
                continue
            mic = None
            if echo is not None:
                frame = echo.process(frame)
                if not frame:  # it waits while the robot's sentence is placed
                    continue
                mic = echo.last_input
                self._tell(detector, echo)
            step = detector.feed(frame, mic)
            if step.kind == "start":
                break
        barged = False

        def over_robot() -> None:
            """The child talks while the robot speaks: stop it (once an utterance)."""
            nonlocal barged
            barged = True
            self._trace.record("speech_over_robot", voiced_ms=round(detector.voiced_ms))
            if self._on_barge_in is not None:
                self._on_barge_in()

        if echo is not None and self._speaking():
            over_robot()
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
                    mic = None
                    if echo is not None:
                        frame = echo.process(frame)
                        if not barged and self._speaking():
                            # The robot began to speak (the reply to the line before) while
                            # the child was still talking: they talk over it, so it stops.
                            over_robot()
                        if not frame:  # waiting while the robot's sentence is placed
                            continue
                        mic = echo.last_input
                        self._tell(detector, echo)
                    elif self._deaf():  # the robot began to speak: half duplex, drop it
                        dropped = True
                        detector.reset()
                        nursery.cancel_scope.cancel()
                        return
                    step = detector.feed(frame, mic)
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
        with lone_exception():  # the recogniser's VoiceError, the microphone's end: as they are
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
