"""Hearing one utterance, the trio edge: microphone frames in, a recognised line out.

Each frame goes through the echo canceller (full duplex: the robot's own voice taken out) and voice
detection; what it meant is told to the turn-taking machine (:mod:`agentcade.voice.turn_taking`,
whose docstring is the theory of operation), whose decisions are carried out here: the robot's
sound paused, stopped or let go on, a recognition started on a pause (a
:class:`~agentcade.voice.asr.Speculative` recogniser) or cancelled when the voice comes back, the
utterance ended. Any other recogniser is streamed to as the line is heard. Half duplex (no
canceller), what is heard while ``deaf()`` is dropped.

Trace records: the machine's decisions (:func:`~agentcade.voice.turn_taking.traced`), ``asr_final``
(text, asr_ms, recognizer, early), ``speech_dropped`` (half duplex), ``host_behind`` (late_ms, ms:
the host processed the microphone late, then caught up).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from agentcade.core.errors import DeviceError, lone_exception
from agentcade.core.judge.numerals import number_may_go_on
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.voice import turn_taking as turn
from agentcade.voice.asr import Heard, Recognizer, Speculative
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.tuning import MIC_RATE, TUNING, Tuning
from agentcade.voice.vad import SileroDetector, make_detector

__all__ = ["Listener", "MicrophoneClosed"]

BYTES_PER_MS = MIC_RATE * 2 / 1000
_UNHEARD = (turn.State.RELEASED, turn.State.DROPPED)  # keeps no audio: never recognised


class MicrophoneClosed(DeviceError):
    """The robot's microphone stream ended (robot gone, or the session closed)."""

    def __init__(self) -> None:
        super().__init__("unavailable", "microphone.read", "the microphone stream ended")


@dataclass
class _Guess:
    """One speculative recognition: its scope, and its text when done."""

    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    done: trio.Event = field(default_factory=trio.Event)
    text: str | None = None


class Listener:
    """Reads frames from one microphone channel; one :meth:`hear` at a time. ``echo``: full
    duplex; ``actionable(text)``: whether a text can be acted on at once (its utterance then
    ends early); without ``on_hold`` a voice over the robot stops it at once; ``on_voice()``
    is called as each utterance begins (work that can wait gives the cores to hearing it)."""

    def __init__(
        self, frames: trio.MemoryReceiveChannel[bytes], recognizer: Recognizer, *,
        vad: Tuning | None = None, deaf: Callable[[], bool] = lambda: False,
        trace: Trace = NULL_TRACE, on_utterance: Callable[[bytes], None] | None = None,
        echo: EchoCanceller | None = None, speaking: Callable[[], bool] = lambda: False,
        on_barge_in: Callable[[], None] | None = None, on_hold: Callable[[], None] | None = None,
        on_release: Callable[[], None] | None = None,
        actionable: Callable[[str], bool] = lambda text: False,
        on_voice: Callable[[], None] | None = None) -> None:
        self._frames, self._recognizer, self._trace = frames, recognizer, trace
        self.tuning = vad or TUNING  # read at each utterance: a benchmark may try others
        self._detector = make_detector(self.tuning)
        self._deaf, self._echo, self._speaking = deaf, echo, speaking
        self._on_hold, self._on_utterance, self._actionable = on_hold, on_utterance, actionable
        self._on_barge_in = on_barge_in or (lambda: None)
        self._on_release = on_release or (lambda: None)
        self._on_voice = on_voice or (lambda: None)

    async def hear(self) -> Heard:
        """The next utterance, recognised (its text "": nothing understood; the robot's own
        echo is none). Raises :class:`MicrophoneClosed`, or ``VoiceError`` (recognizer failed)."""
        while (heard := await self._hear_once()) is None:
            pass
        return heard

    async def _next(self) -> tuple[bytes, turn.Event]:
        """The next microphone frame: its audio for the utterance, and what it meant."""
        try:
            frame = await self._frames.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise MicrophoneClosed from None
        detector, echo = self._detector, self._echo
        if echo is None:
            if not frame or self._deaf():  # empty: deaf when it arrived
                detector.reset()
                return b"", turn.Deaf()
            step = detector.feed(frame)
            return step.audio, turn.Frame(step.kind, len(frame) / BYTES_PER_MS, detector.voiced_ms,
                                     detector.silence_ms)
        frame = echo.process(frame)
        speaking = self._speaking()
        if not frame:  # it waits while the robot's sentence is placed
            return b"", turn.Waiting(speaking)
        detector.robot = echo.robot_voice(speaking=speaking)
        if (late := echo.caught_up) is not None:  # the host had fallen behind the microphone
            self._trace.record("host_behind", late_ms=round(late[0]), ms=round(late[1]))
        step = detector.feed(frame, echo.last_clean)
        return step.audio, turn.Frame(
            step.kind, len(frame) / BYTES_PER_MS, detector.voiced_ms, detector.silence_ms,
            speaking=speaking, audible=echo.audible, louder=echo.louder,
            taken_out=isinstance(detector, SileroDetector) and detector.echo_taken_out,
            heard_over_echo=echo.heard_over_echo, periodicity=echo.periodicity)

    async def _hear_once(self) -> Heard | None:
        detector, trace = self._detector, self._trace
        detector.reset()
        speculative = self._recognizer if isinstance(self._recognizer, Speculative) else None
        machine = turn.TurnTaking(tuning=self.tuning, can_hold=self._on_hold is not None,
                                  speculative=speculative is not None)
        audio, event = await self._next()
        while (decisions := machine.feed(event)) == [] and machine.state is turn.State.LISTENING:
            audio, event = await self._next()
        self._on_voice()
        kept, guesses, ended = [audio], dict[int, _Guess](), [0.0]
        send, receive = trio.open_memory_channel[bytes](math.inf)
        send.send_nowait(audio)
        text = ""

        def carry_out(decisions: list[turn.Decision]) -> None:
            for d in decisions:
                if (record := turn.traced(d, round(sum(map(len, kept)) / BYTES_PER_MS))):
                    trace.record(record[0], **record[1])
                if isinstance(d, turn.Hold) and self._on_hold is not None:
                    self._on_hold()
                elif isinstance(d, turn.BargeIn | turn.Release):
                    (self._on_barge_in if isinstance(d, turn.BargeIn) else self._on_release)()
                elif isinstance(d, turn.Speculate):
                    guesses[d.guess] = _Guess()
                    nursery.start_soon(recognize, b"".join(kept), d)
                elif isinstance(d, turn.Abandon):
                    guesses[d.guess].scope.cancel()
                elif isinstance(d, turn.End):
                    ended[0] = time.time()
            if machine.cut:
                detector.reset()
                nursery.cancel_scope.cancel()

        async def recognize(pcm: bytes, asked: turn.Speculate) -> None:
            assert speculative is not None
            guess = guesses[asked.guess]
            with guess.scope:
                guess.text = await speculative.recognize(pcm, asked.voiced_ms)
            guess.done.set()
            if guess.text is not None and machine.state is turn.State.HEARING:
                carry_out(machine.feed(turn.Recognised(
                    asked.guess, self._actionable(guess.text), number_may_go_on(guess.text))))

        async def follow() -> None:
            async with send:
                carry_out(decisions)
                while not machine.done:
                    audio, event = await self._next()
                    decisions_now = machine.feed(event)
                    if isinstance(event, turn.Frame) and machine.state not in _UNHEARD:
                        kept.append(audio)
                        if speculative is None:
                            send.send_nowait(audio)
                    carry_out(decisions_now)

        try:
            with lone_exception():  # the recogniser's VoiceError, the microphone's end: as they are
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(follow)
                    if speculative is None:
                        text = await self._recognizer.transcribe(receive)
        finally:
            if machine.held:
                self._on_release()  # never left paused: the microphone closed, or cancelled
        seconds = (sum(map(len, kept)) / BYTES_PER_MS / 1000, detector.voiced_ms / 1000)
        if machine.state is turn.State.RELEASED:
            return None
        if machine.state is turn.State.DROPPED:
            trace.record("speech_dropped", audio_ms=round(seconds[0] * 1000))
            return Heard("", *seconds, time.time(), time.time())
        end = machine.end
        assert end is not None
        if speculative is not None:
            guess = guesses.get(end.guess) if end.guess is not None else None
            if guess is not None:
                await guess.done.wait()  # the same words: their recognition is (nearly) done
                text = guess.text or ""
            else:
                text = await speculative.recognize(b"".join(kept), detector.voiced_ms)
        if self._on_utterance is not None:
            self._on_utterance(b"".join(kept))
        heard = Heard(text, *seconds, ended[0], time.time(), end.early)
        trace.record("asr_final", text=text, asr_ms=heard.asr_ms,
                     recognizer=self._recognizer.name, early=end.early)
        return heard
