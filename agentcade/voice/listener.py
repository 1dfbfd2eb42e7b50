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

A recogniser that can recognise a clip at once (:class:`Speculative`: the embedded one) is
not streamed to: the child is answered the moment they stop. When the voice has stopped for
:data:`SPECULATE_MS`, what was said so far is recognised while the silence window runs; if the
voice comes back, that recognition is dropped (a child who pauses mid-sentence, 我猜……十五,
is not cut off); if the text is something the host can act on at once (``actionable``: a
number in 猜数字, an answer, 结束游戏), the utterance ends there (a round number whose units
may still come, 十 of 十……五, once the silence reaches :data:`NUMBER_WAIT_MS`); otherwise the
normal window ends it, and the text already recognised is used, not recognised again.

A voice over the robot first pauses it (``on_hold``); :meth:`Listener._confirm` tells a child
from what the canceller left of the robot's own voice: a child goes on once the robot's voice
has left the frames, or is louder than its echo could be (a one-syllable 七 is over before
the robot's voice has left the frames; the microphone's own samples say so best, the
canceller takes part of a voice away with the robot's); the canceller's residue ends with
the robot's voice, and the sentence goes on (``on_release``). Where the model of the robot's
echo is trusted (``EchoCanceller.clean``) and Silero does not hear what it leaves
(``SileroDetector.echo_taken_out``), the microphone with that echo taken out is judged
instead of the canceller's output, and the robot's voice counts as out of the frames: a
voice begun there is a child's after :data:`CONFIRM_CLEAN_MS` more of it (AEC3's suppressor
takes a child quieter than the robot's echo away; the model leaves it standing).

Trace records: ``asr_speculate`` (voiced_ms, silence_ms) when a pause's recognition starts,
``speech_heard`` when an utterance ends (audio_ms, voiced_ms, early: ended
before the silence window),
``asr_final`` (text, asr_ms: from the end of speech to the final text), ``speech_dropped``
(half duplex: the robot began to speak before the utterance ended: it is not recognised),
``speech_over_robot`` (full duplex: speech started while the robot spoke),
``barge_in_confirmed`` and ``barge_in_released`` (voiced_ms) for a voice that paused the
robot, ``host_behind``
(full duplex: the host processed the microphone more than ``echo.BEHIND_MS`` late, then
caught up: how late at worst and for how long; meanwhile a start over the robot asks for
more).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import trio

from agentcade.core.errors import DeviceError, lone_exception
from agentcade.core.judge.numerals import number_may_go_on
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.voice.asr import Recognizer
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.vad import Detector, SileroDetector, VadConfig, make_detector

__all__ = [
    "CONFIRM_CLEAN_MS",
    "CONFIRM_LONG_MS",
    "CONFIRM_LOUD_MS",
    "CONFIRM_MS",
    "NUMBER_WAIT_MS",
    "RELEASE_MS",
    "SPECULATE_MS",
    "Heard",
    "Listener",
    "MicrophoneClosed",
    "Speculative",
]

BYTES_PER_SECOND = 32000
SPECULATE_MS = 32
"""Silence after the voice before what was said is recognised (the silence window, 800 ms,
goes on meanwhile): one of Silero's chunks, in practice the first 60 ms microphone frame that
ends past the voice. Against 96 ms (the second frame), each said in turn in the same run of
tests/bench/bench_hearing.py: judged answers voice to voice p50 503 ms instead of 581 (the
voice gone before recognition 64 ms instead of 125), and 557 against 587 in another; beside
a fan 705 against 913; with as many recognitions started per line (1.0: Silero does not
drop between a child's syllables) and the same lines heard. A pause that is not the end
costs a recognition thrown away; one inside a number (十……五) waits :data:`NUMBER_WAIT_MS`."""
NUMBER_WAIT_MS = 480
"""Silence after a text that ends on a round number whose units may still come (十, 二十:
``number_may_go_on``) before it is acted on: 十……五 with a pause of up to about this long is
15, not 10 then 5. Every other actionable text is acted on as soon as it is recognised."""


CONFIRM_MS = 128
"""Voice after the robot paused for it, with the robot's voice out of the room, that makes it
a child's (a barge-in)."""
CONFIRM_LONG_MS = 384
"""Voice after the robot paused for it that makes it a child's however much of the robot's
voice may still be in the frames. A false start of 50 robot sentences at load 4 went on
for 192 ms after the hold while the busy host had not yet stopped the robot."""
CONFIRM_LOUD_MS = 120
"""Voice after the robot paused for it, louder than the robot's echo could be while that echo
may be in the frames (the canceller's output, ``EchoCanceller.over_echo``, or the
microphone's own samples, ``heard_over_echo``; two 60 ms microphone frames, the one that
started it counted when the microphone heard it so), that makes it a child's: a one-syllable
answer (七) is over before the robot's voice has left the frames, but a child at a normal
voice is several times louder than the echo. What the canceller left of the robot's voice
paused it with 0 or 60 ms of it (160 sentences at load 4); 七 with 120 to 240. By the output
alone, a 七 whose second loud frame the canceller had taken most of away (1.26-1.41 times
the echo) was released: 2 of 20 at no load."""
CONFIRM_CLEAN_MS = 64
"""Voice after the robot paused for it that makes it a child's when it began on a clean
microphone (``SileroDetector.echo_taken_out``: the model of the robot's echo took that echo out of
what was judged, so the voice is not the robot's; a one-syllable 七 said quietly is over
before ``CONFIRM_MS`` more of it)."""
RELEASE_MS = 160
"""Silence after the robot paused for a voice that makes it no child's: the robot goes on."""


@runtime_checkable
class Speculative(Protocol):
    """A recogniser that recognises a whole clip at once, fast enough to start on a pause."""

    async def recognize(self, pcm: bytes, voiced_ms: float) -> str: ...


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
    early: bool = False
    """Ended before the silence window: the text could be acted on at once."""

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
        actionable: Callable[[str], bool] = lambda text: False,
        on_hold: Callable[[], None] | None = None,
        on_release: Callable[[], None] | None = None,
    ) -> None:
        self._on_hold = on_hold
        """Called the moment a voice starts while ``speaking()``: the sound must pause, until
        the voice is confirmed (``on_barge_in``) or found to be no child (``on_release``).
        Without it, a start over the robot is a barge-in at once."""
        self._on_release = on_release
        self._actionable = actionable
        """Whether a text can be acted on at once (then its utterance ends early)."""
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
        self._late: tuple[float, float] | None = None
        """While the host is behind: (the worst lateness so far in ms, since when)."""

    async def _frame(self) -> bytes:
        try:
            return await self._frames.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise MicrophoneClosed from None

    def _tell(self, detector: Detector, echo: EchoCanceller) -> None:
        """What voice detection must know of the robot's voice in the frames just processed."""
        detector.robot_speaking = echo.audible or self._speaking()
        if isinstance(detector, SileroDetector):
            detector.echo_clean = echo.clean
            detector.echo_measured = echo.measured
            detector.echo_converged = echo.converged
            detector.echo_onset = echo.onset
            detector.echo_resumed = echo.resumed
            detector.host_behind = self._behind(echo)
            detector.over_echo = echo.over_echo

    @staticmethod
    def _taken_out(detector: Detector) -> bool:
        """Whether the frame just judged had the robot's echo taken out by the model of it
        (``SileroDetector.echo_taken_out``): the robot's voice is not in what was judged."""
        return isinstance(detector, SileroDetector) and detector.echo_taken_out

    def _behind(self, echo: EchoCanceller) -> bool:
        """Whether the host is behind the microphone now; ``host_behind`` traced once it has
        caught up (how late at worst, for how long)."""
        if echo.behind:
            if self._late is None:
                self._late = (echo.late_ms, time.time())
            else:
                self._late = (max(self._late[0], echo.late_ms), self._late[1])
            return True
        if self._late is not None:
            worst, since = self._late
            self._late = None
            self._trace.record("host_behind", late_ms=round(worst),
                               ms=round((time.time() - since) * 1000))
        return False

    async def hear(self) -> Heard:
        """The next utterance, recognised (its text may be "": nothing understood).

        A voice over the robot that turns out to be none (see :meth:`_confirm`) is no
        utterance: the robot goes on and this waits for the next.

        Raises:
            MicrophoneClosed: the microphone stream ended.
            VoiceError: the recognizer failed.
        """
        while True:
            heard = await self._hear_once()
            if heard is not None:
                return heard

    async def _hear_once(self) -> Heard | None:
        detector = self._detector
        detector.reset()
        echo = self._echo
        while True:
            frame = await self._frame()
            if echo is None and (not frame or self._deaf()):  # empty: deaf when it arrived
                detector.reset()
                continue
            mic = None
            if echo is not None:
                frame = echo.process(frame)
                if not frame:  # it waits while the robot's sentence is placed
                    continue
                mic = echo.last_clean
                self._tell(detector, echo)
            step = detector.feed(frame, mic)
            if step.kind == "start":
                break
        barged = False
        held: float | None = None
        """While the robot is paused for this voice: its voiced ms when the hold began."""
        clean: float | None = None
        """... and when the robot's voice had left the frames (its sound stopped, the room's
        lag and reverb over; or its echo was taken out, :meth:`_taken_out`): None until
        then."""
        clean_start = False
        """... and whether it began on a clean microphone (then ``CONFIRM_CLEAN_MS``)."""
        loud = 0.0
        """... and how long it has been louder than the robot's echo could be while that echo
        may be in the frames (``EchoCanceller.over_echo``): somebody else talking."""
        released = False

        def over_robot(*, sure: bool, loud_ms: float = 0.0) -> None:
            """The child talks while the robot speaks: stop it (once an utterance), or pause
            it until the voice is confirmed when it may be the robot's own echo (``loud_ms``:
            how much of the voice so far was louder than that echo could be)."""
            nonlocal barged, held, loud, clean, clean_start
            barged = True
            hold = not sure and self._on_hold is not None
            self._trace.record("speech_over_robot", voiced_ms=round(detector.voiced_ms),
                               held=hold, clean=self._taken_out(detector))
            if hold:
                assert self._on_hold is not None
                held = detector.voiced_ms
                loud = loud_ms
                clean_start = self._taken_out(detector)
                clean = held if clean_start else None
                self._on_hold()
            elif self._on_barge_in is not None:
                self._on_barge_in()

        def louder(echo: EchoCanceller) -> bool:
            """Whether the frame just processed was louder than the robot's echo could be
            now: the canceller's output (``over_echo``), or the microphone's own samples
            (``heard_over_echo``: the canceller takes part of a voice away with the
            robot's)."""
            return (echo.over_echo and math.isfinite(echo.loudness)) or echo.heard_over_echo

        def confirm(step_kind: str, frame_ms: float) -> bool:
            """While held: go on (True), or confirm it a child (barge-in), or let the robot go
            on (released: False, this utterance is dropped)."""
            nonlocal held, clean, loud, released, clean_start
            if held is None:
                return True
            if echo is None or not echo.audible or self._taken_out(detector):
                clean = detector.voiced_ms if clean is None else clean
            elif louder(echo):
                loud += frame_ms
            verdict = self._confirm(detector, held, clean, loud, step_kind,
                                    CONFIRM_CLEAN_MS if clean_start else CONFIRM_MS)
            if verdict is None:
                return True
            voiced_ms = round(detector.voiced_ms)
            held = clean = None
            loud = 0.0
            clean_start = False
            if verdict:
                self._trace.record("barge_in_confirmed", voiced_ms=voiced_ms)
                if self._on_barge_in is not None:
                    self._on_barge_in()
                return True
            released = True
            self._trace.record("barge_in_released", voiced_ms=voiced_ms)
            if self._on_release is not None:
                self._on_release()
            return False

        # A start while the robot's voice may be in the frames (it speaks, or its echo is
        # still heard) may be that voice; one begun in the quiet is a child's.
        quiet_start = echo is None or not (self._speaking() or echo.audible)
        if not quiet_start:
            # The frame that started it counts when the microphone heard it louder than the
            # robot's echo could be (a 七 may have only one more such frame after it).
            over_robot(sure=False, loud_ms=len(frame) * 1000 / BYTES_PER_SECOND
                       if echo is not None and echo.heard_over_echo else 0.0)
        send, receive = trio.open_memory_channel[bytes](math.inf)
        send.send_nowait(step.audio)
        speculative = self._recognizer if isinstance(self._recognizer, Speculative) else None
        kept = [step.audio] if self._on_utterance is not None or speculative else None
        total = len(step.audio)
        speech_end = 0.0

        dropped = False
        ended = False
        early = False
        guess: _Guess | None = None
        """The recognition of what was said before the latest pause."""

        def end_early() -> None:
            """The guess's text is acted on now: the utterance ends here."""
            nonlocal early, speech_end
            early = True
            speech_end = time.time()
            self._trace.record(
                "speech_heard", audio_ms=round(total * 1000 / BYTES_PER_SECOND),
                voiced_ms=round(detector.voiced_ms), early=True,
                silence_ms=round(detector.silence_ms),
            )
            detector.reset()
            nursery.cancel_scope.cancel()

        async def recognize(pcm: bytes, mark: _Guess) -> None:
            assert speculative is not None
            with mark.scope:
                mark.text = await speculative.recognize(pcm, mark.voiced_ms)
            mark.done.set()
            if mark.scope.cancelled_caught or mark.text is None:
                return
            if not ended and guess is mark and self._actionable(mark.text):
                if number_may_go_on(mark.text) and detector.silence_ms < NUMBER_WAIT_MS:
                    mark.waiting = True  # 十 of 十……五: acted on after NUMBER_WAIT_MS (pause())
                    return
                end_early()

        def pause(step_kind: str) -> None:
            """Speculate on a pause; drop a speculation the voice went on after; act on a
            waiting one once the silence is long enough."""
            nonlocal guess
            if guess is not None and detector.silence_ms < guess.silence_ms:
                guess.scope.cancel()  # the silence was broken by speech: more is coming
                guess = None
            if guess is not None and guess.waiting and detector.silence_ms >= NUMBER_WAIT_MS:
                end_early()
                return
            if (step_kind == "voice" and guess is None and kept is not None
                    and detector.silence_ms >= SPECULATE_MS):
                guess = _Guess(detector.voiced_ms, detector.silence_ms)
                self._trace.record("asr_speculate", voiced_ms=round(detector.voiced_ms),
                                   silence_ms=round(detector.silence_ms))
                nursery.start_soon(recognize, b"".join(kept), guess)

        async def follow() -> None:
            nonlocal total, speech_end, dropped, ended
            async with send:
                while True:
                    frame = await self._frame()
                    mic = None
                    if echo is not None:
                        frame = echo.process(frame)
                        if not barged and self._speaking():
                            # The robot began to speak (the reply to the line before) while
                            # the child was still talking: they talk over it, so it stops.
                            over_robot(sure=quiet_start)
                        if not frame:  # waiting while the robot's sentence is placed
                            continue
                        mic = echo.last_clean
                        self._tell(detector, echo)
                    elif not frame or self._deaf():  # the robot spoke: half duplex, drop it
                        dropped = True
                        detector.reset()
                        nursery.cancel_scope.cancel()
                        return
                    step = detector.feed(frame, mic)
                    if not confirm(step.kind, len(frame) * 1000 / BYTES_PER_SECOND):  # the robot's own voice: it goes on
                        detector.reset()
                        nursery.cancel_scope.cancel()
                        return
                    if speculative is None:
                        send.send_nowait(step.audio)
                    if kept is not None:
                        kept.append(step.audio)
                    total += len(step.audio)
                    if step.kind == "end":
                        ended = True
                        speech_end = time.time()
                        self._trace.record(
                            "speech_heard", audio_ms=round(total * 1000 / BYTES_PER_SECOND),
                            voiced_ms=round(detector.voiced_ms),
                        )
                        return
                    if speculative is not None and held is None:
                        pause(step.kind)

        text = ""
        try:
            with lone_exception():  # the recogniser's VoiceError, the microphone's end: as they are
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(follow)
                    if speculative is None:
                        text = await self._recognizer.transcribe(receive)
        finally:
            if held is not None and self._on_release is not None:
                self._on_release()  # never left paused: the microphone closed, or cancelled
        if released:
            return None
        if speculative is not None and not dropped:
            last = guess
            if early and last is not None and last.text is not None:
                text = last.text
            elif last is not None:
                await last.done.wait()  # the same words: their recognition is (nearly) done
                text = last.text or ""
            else:
                assert kept is not None
                text = await speculative.recognize(b"".join(kept), detector.voiced_ms)
        asr_final = time.time()
        if dropped:
            self._trace.record("speech_dropped", audio_ms=round(total * 1000 / BYTES_PER_SECOND))
            return Heard("", total / BYTES_PER_SECOND, detector.voiced_ms / 1000, asr_final, asr_final)
        if kept is not None and self._on_utterance is not None:
            self._on_utterance(b"".join(kept))
        heard = Heard(text, total / BYTES_PER_SECOND, detector.voiced_ms / 1000, speech_end,
                      asr_final, early)
        self._trace.record("asr_final", text=text, asr_ms=heard.asr_ms,
                           recognizer=self._recognizer.name, early=early)
        return heard


    @staticmethod
    def _confirm(
        detector: Detector, held: float, clean: float | None, loud: float, step_kind: str,
        confirm_ms: float = CONFIRM_MS,
    ) -> bool | None:
        """Whether a voice that paused the robot is a child's: True once it has gone on for
        ``confirm_ms`` (:data:`CONFIRM_MS`; :data:`CONFIRM_CLEAN_MS` for one that began on a
        clean microphone) with the robot's voice out of the frames (what the canceller
        leaves of it ends with it; a child goes on), or :data:`CONFIRM_LOUD_MS` louder than
        the robot's echo could be while it may be heard, or :data:`CONFIRM_LONG_MS` since the
        hold (on a busy host the robot can take half a second to stop, and a short line is
        over by then; what the canceller leaves comes in short bursts); False once
        :data:`RELEASE_MS` of silence came first or the utterance ended; None while
        undecided."""
        voiced = detector.voiced_ms
        if (voiced - held >= CONFIRM_LONG_MS or loud >= CONFIRM_LOUD_MS
                or (clean is not None and voiced - clean >= confirm_ms)):
            return True
        if step_kind == "end" or detector.silence_ms >= RELEASE_MS:
            return False
        return None


class _Guess:
    """One speculative recognition: the voice it covers, the silence after it then, its text
    when done."""

    def __init__(self, voiced_ms: float, silence_ms: float) -> None:
        self.voiced_ms = voiced_ms
        self.silence_ms = silence_ms
        self.scope = trio.CancelScope()
        self.done = trio.Event()
        self.text: str | None = None
        self.waiting = False
        """Recognised and actionable, but waiting for :data:`NUMBER_WAIT_MS` of silence."""
