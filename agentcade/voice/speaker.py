"""The robot with a voice: ``speak(text)`` is TTS on the robot's speaker, sentence by sentence.

:class:`VoiceRobot` is a :class:`~agentcade.device.robots.Robot` (the output queue's
interface) around an :class:`~agentcade.device.robots.SdkRobot`: directives go to the
SDK robot unchanged; :meth:`VoiceRobot.speak` splits the text into sentences
(:mod:`agentcade.voice.sentences`), synthesises the next one while the current one plays
(a zero-capacity channel: at most one sentence ahead) and plays each with
:class:`~agentcade.device.audio.RobotAudio`. Cancelling ``speak`` (a barge-in) stops the
sound on the robot at once and synthesises nothing more.

The first sound waits for as little as it can (issue 55): with the neural voice, which
synthesises clause by clause, a reply's first clause is a clip of its own (its pause kept
at its end) played while the rest of the sentence is synthesised, and it begins
:data:`REPLY_LEAD_S` before its voice. The voice keeps the clauses it has said
(:class:`~agentcade.voice.neural.Said`, found by their exact text only), so a verdict, a
hint, a fixed line said before sounds at once; :meth:`VoiceRobot.prepare` synthesises the
first words of lines code will say ahead, and stops when a voice is heard
(:meth:`VoiceRobot.voice_heard`: the recogniser and the reply need the cores then).

Full duplex: a voice that begins over the robot is not yet known to be a child's (what the
echo canceller leaves of the robot's own voice can sound like one). :meth:`VoiceRobot.hold`
pauses the sound at once (the child hears the robot stop as soon as they start) and nothing
more is said; :meth:`VoiceRobot.release` picks the sentence up again from a gap between
syllables just before where it paused (:func:`~agentcade.voice.pcm.resume_point`), when the
listener found no child; a confirmed barge-in cancels ``speak`` as before. Without the
robot's voice in the room, telling a child from an echo is easy.

Half duplex: :attr:`VoiceRobot.deaf` is true while the robot speaks and for
:data:`ECHO_TAIL` seconds after (the room's echo of its own voice, and microphone frames
still on their way), so the listener drops what the microphone hears then.

Trace records: ``speech_text`` (text, sentences) when a reply reaches the voice,
``speech_start`` (sentence, index, synth_ms, reference_ms: the echo reference's
resampling, audio_ms) when a sentence's sound starts, ``speech_end`` (sentence, index,
outcome, ms), ``tts_failed`` (sentence, error: the sentence is skipped, never half said),
``speech_held`` (sentence, into_ms: paused for a voice over it), ``speech_resumed``
(sentence, at_ms: where it goes on, paused_ms), ``speech_failed`` (sentence, error: the robot
went away mid-reply; the rest of the reply is dropped, the program goes on).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import trio

from agentcade.core.errors import DeviceError, VoiceError
from agentcade.core.protocol import Directive
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.audio import SPEAKER_RATE, RobotAudio
from agentcade.device.robots import SPEAKER, Outcome, SdkRobot
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.pcm import leading_silence, resample, resume_point
from agentcade.voice.phones import first_clause
from agentcade.voice.sentences import split_sentences
from agentcade.voice.tts import NeuralSynthesizer, Synthesizer

__all__ = ["ECHO_TAIL", "REPLY_LEAD_S", "VoiceRobot"]

ECHO_TAIL = 0.3
"""Seconds after the robot stops speaking during which the microphone is still ignored."""
REPLY_LEAD_S = 0.005
"""Silence kept before the voice of a reply's first clip. The neural voice begins each clause
40 ms before its voice (``neural.LEAD_S``: the pause before a clause inside a reply); before
a reply that is only 40 ms more for the child to wait."""


class VoiceRobot:
    """See the module docstring. The SDK robot is closed by whoever opened it."""

    def __init__(
        self,
        robot: SdkRobot,
        synthesizer: Synthesizer,
        *,
        trace: Trace = NULL_TRACE,
        echo_tail: float = ECHO_TAIL,
        print_speech: bool = True,
    ) -> None:
        self.inner = robot
        self.name = robot.name
        self.audio = RobotAudio(robot)
        self.synthesizer = synthesizer
        self._trace = trace
        self._echo_tail = echo_tail
        self._print = print_speech
        self._speaking = 0
        self._quiet_at = -float("inf")
        self._quiet = trio.Event()
        self._quiet.set()
        self.record: Callable[[bytes], None] | None = None
        """Given each clip as it starts to play (``--record``)."""
        self.echo: EchoCanceller | None = None
        """Full duplex: told every clip (at 16 kHz) as it starts to play, and when it stops."""
        self.now_saying: tuple[str, float] | None = None
        """The sentence sounding now and when (trio time) it started."""
        self._sound_started = trio.Event()
        self._hold: _Hold | None = None
        """While the sound is paused for a voice over it."""
        self._last_hold = _Hold()
        self._clip_scope: trio.CancelScope | None = None
        self.holds = 0
        """How many times the sound was paused for a voice over it."""
        self._voices = 0
        """Voices heard so far (:meth:`voice_heard`)."""
        self.first_sound_sooner = True
        """Say the first clause of a reply as soon as it is synthesised (:meth:`_clips`),
        from its voice (:data:`REPLY_LEAD_S`); False: the first sentence whole, as the
        voice gives it (a benchmark's reference)."""
        self.sound_starts: list[float] = []
        """Wall-clock time (``time.time()``) of every sentence's first sound, in order."""

    # -- Robot -----------------------------------------------------------------------------

    @property
    def capabilities(self) -> tuple[str, ...]:
        return self.inner.capabilities

    @property
    def away_reason(self) -> str | None:
        """Why the SDK robot is unreachable now, if it says (the output queue then skips
        directives at once); None when it is there or cannot tell."""
        reason = getattr(self.inner, "away_reason", None)
        return reason if isinstance(reason, str) else None

    @property
    def device(self) -> Any:
        """The simulated device, when the SDK robot is a ``SimRobot`` (``/screen``, tests)."""
        return getattr(self.inner, "device", None)

    async def execute(self, directive: Directive) -> Any | None:
        return await self.inner.execute(directive)

    async def wait_job(self, handle: Any, limit: float) -> Outcome:
        return await self.inner.wait_job(handle, limit)

    async def aclose(self) -> None:
        """Nothing to release: the SDK robot and the synthesizer belong to their openers."""
        await trio.lowlevel.checkpoint()

    # -- half duplex -----------------------------------------------------------------------

    @property
    def speaking(self) -> bool:
        return self._speaking > 0

    @property
    def deaf(self) -> bool:
        """Whether the microphone must be ignored now (speaking, or just stopped)."""
        return self.speaking or trio.current_time() < self._quiet_at + self._echo_tail

    async def wait_quiet(self) -> None:
        """Wait until the robot is not speaking and the echo tail has passed."""
        while True:
            await self._quiet.wait()
            remaining = self._quiet_at + self._echo_tail - trio.current_time()
            if remaining <= 0 and not self.speaking:
                return
            await trio.sleep(max(remaining, 0.01))

    @property
    def held(self) -> bool:
        """Whether the sound is paused for a voice over it (see the module docstring)."""
        return self._hold is not None

    def hold(self) -> None:
        """Pause the sound now: a voice began over the robot (not yet known to be a child's).

        The clip sounding stops on the robot at once; nothing more is played until
        :meth:`release` (go on) or :meth:`drop_hold` (a child: the sentence is not resumed).
        """
        if self._hold is not None:
            return
        self._hold = self._last_hold = _Hold(time.time())
        self.holds += 1
        if self._clip_scope is not None:
            self._clip_scope.cancel()

    def release(self) -> None:
        """The voice over the robot was not a child's: the paused sentence goes on."""
        self._end_hold(kept=True)

    def drop_hold(self) -> None:
        """The voice over the robot was a child's: the paused sentence is not resumed (the
        turn is being cancelled; ``speak`` stops if it is not)."""
        self._end_hold(kept=False)

    def _end_hold(self, *, kept: bool) -> None:
        hold, self._hold = self._hold, None
        if hold is not None:
            hold.kept = kept
            hold.over.set()

    @staticmethod
    async def _wait_hold(hold: _Hold | None) -> bool:
        """Wait until ``hold`` is over; whether to go on (True unless it was dropped)."""
        if hold is None:
            await trio.lowlevel.checkpoint()
            return True
        await hold.over.wait()
        return hold.kept

    async def wait_sentences(self, count: int) -> None:
        """Wait until ``count`` sentences have started to sound (``sound_starts``)."""
        while len(self.sound_starts) < count:
            await self._sound_started.wait()

    # -- speech ----------------------------------------------------------------------------

    async def speak(self, text: str) -> None:
        """Say ``text`` on the robot, sentence by sentence (see the module docstring).

        Raises:
            DeviceError: the robot could not play (the output queue traces it).
        """
        sentences = split_sentences(text)
        if not sentences:
            await trio.lowlevel.checkpoint()
            return
        self._trace.record("speech_text", text=text, sentences=len(sentences))
        if self._print:
            sys.stdout.write(f"{SPEAKER}：{text}\n")
            sys.stdout.flush()
        if not self.audio.can_play:  # firmware without host PCM: the SDK robot prints it
            await trio.lowlevel.checkpoint()
            return
        self._speaking += 1
        self._quiet = trio.Event()
        try:
            send, receive = trio.open_memory_channel[_Clip](0)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._synthesize_all, sentences, send)
                async with receive:
                    async for index, sentence, pcm, synth_ms, reference, reference_ms in receive:
                        if pcm is None:
                            continue
                        try:
                            if not await self._play(index, sentence, pcm,
                                                    (synth_ms, reference_ms), reference):
                                nursery.cancel_scope.cancel()  # a child's voice stopped it
                                break
                        except DeviceError as exc:
                            # The robot went away mid-reply (a Daemon restart, the robot
                            # dropping off): the rest of the reply cannot be said; listening
                            # reopens the microphone when it is back. Never fatal.
                            self._trace.record("speech_failed", sentence=sentence,
                                               error=exc.reason)
                            sys.stderr.write(f"agentcade: 机器人暂时连不上，这句没说完：{exc.reason}\n")
                            nursery.cancel_scope.cancel()
                            break
        finally:
            self._speaking -= 1
            if not self._speaking:
                self._quiet_at = trio.current_time()
                self._quiet.set()

    def _clips(self, sentences: list[str]) -> list[tuple[str, bool]]:
        """What is synthesised and played as one clip, in order, and whether it keeps its
        last clause's pause: each sentence, but the first clause of the first one alone when
        the voice synthesises clause by clause (the neural voice: said alone, it sounds the
        same), so that the first sound waits for that clause only."""
        synthesizer = self.synthesizer
        if self.first_sound_sooner and isinstance(synthesizer, NeuralSynthesizer):
            split = first_clause(sentences[0])
            if split is not None:
                return [(split[0], True), (split[1], False), *((s, False) for s in sentences[1:])]
        return [(sentence, False) for sentence in sentences]

    async def prepare(self, texts: Sequence[str]) -> None:
        """Synthesise ahead the first clip of each line code may say (the neural voice keeps
        what it said and then says it without waiting: the rest of a line is synthesised
        while its first clip plays); nothing for another voice."""
        synthesizer = self.synthesizer
        if not isinstance(synthesizer, NeuralSynthesizer):
            await trio.lowlevel.checkpoint()
            return
        firsts = [self._clips(sentences)[0][0] for text in texts if (sentences := split_sentences(text))]
        voices = self._voices
        for first in firsts:
            if self._voices != voices:  # somebody talks: the cores are the recogniser's
                return
            try:
                await synthesizer.prepare([first])
            except VoiceError as exc:  # said later, it is synthesised then (and fails there)
                self._trace.record("tts_failed", sentence=None, error=str(exc))
                return

    def voice_heard(self) -> None:
        """A voice began in the room: what :meth:`prepare` has not synthesised yet is left
        (the clause in progress ends): the recogniser, then the reply, need the cores."""
        self._voices += 1

    async def _synthesize_all(
        self,
        sentences: list[str],
        send: trio.MemorySendChannel[_Clip],
    ) -> None:
        async with send:
            for index, (sentence, pause_after) in enumerate(self._clips(sentences)):
                started = trio.current_time()
                pcm: bytes | None
                try:
                    synthesizer = self.synthesizer
                    pcm = await (synthesizer.synthesize(sentence, pause_after=True)
                                 if pause_after and isinstance(synthesizer, NeuralSynthesizer)
                                 else synthesizer.synthesize(sentence))
                except VoiceError as exc:
                    self._trace.record("tts_failed", sentence=sentence, error=str(exc))
                    sys.stderr.write(f"agentcade: 语音合成失败，这句没说：{exc}\n")
                    pcm = None
                if pcm and index == 0 and self.first_sound_sooner:
                    pcm = _from_voice(pcm)
                synth_ms = _ms(started)
                reference = None
                if pcm and self.echo is not None:  # what the echo canceller will expect
                    reference = await trio.to_thread.run_sync(resample, pcm, SPEAKER_RATE, 16000)
                await send.send((index, sentence, pcm or None, synth_ms, reference,
                                 _ms(started) - synth_ms))

    async def _play(
        self, index: int, sentence: str, pcm: bytes, ms: tuple[int, int], reference: bytes | None
    ) -> bool:
        """Play one sentence; False when a hold over it was dropped (a child spoke).
        ``ms``: how long its synthesis and its echo reference's resampling took."""
        if not await self._wait_hold(self._hold):  # held before it began
            return False
        started = trio.current_time()
        self.sound_starts.append(time.time())
        self._sound_started.set()
        self._sound_started = trio.Event()
        self.now_saying = (sentence, started)
        if self.record is not None:
            self.record(pcm)
        self._trace.record("speech_start", sentence=sentence, index=index, synth_ms=ms[0],
                           reference_ms=ms[1], audio_ms=round(len(pcm) / 48))
        outcome = "cancelled"
        offset = 0
        """Where in ``pcm`` the clip being played begins (after a hold, where it goes on)."""
        try:
            while True:
                sent: list[float] = []
                with trio.CancelScope() as scope:
                    self._clip_scope = scope
                    try:
                        outcome = await self.audio.play(
                            pcm[offset:], on_sound=self._on_sound(reference, offset, sent))
                    finally:
                        self._clip_scope = None
                if not scope.cancelled_caught:
                    return True
                # Held: paused where it was; go on from a gap just before, or not at all.
                # The canceller is told once the robot has stopped (on a busy host that can
                # be long after the hold), not before: echo it does not expect is a voice.
                if self.echo is not None:
                    self.echo.stop()
                hold = self._last_hold
                paused_at = offset + max(0, self._played(sent))
                self._trace.record("speech_held", sentence=sentence, index=index,
                                   into_ms=round(paused_at / 48))
                if not await self._wait_hold(hold):
                    outcome = "stopped"
                    return False
                offset = resume_point(pcm, paused_at, SPEAKER_RATE)
                self._trace.record("speech_resumed", sentence=sentence, index=index,
                                   at_ms=round(offset / 48),
                                   paused_ms=round((time.time() - hold.at) * 1000))
        finally:
            self.now_saying = None
            if self.echo is not None and outcome != "completed":
                self.echo.stop()  # stopped or failed: no more of it comes out of the speaker
            self._trace.record("speech_end", sentence=sentence, index=index, outcome=outcome,
                               ms=_ms(started))

    def _played(self, sent: list[float]) -> int:
        """Bytes of the clip played when it was stopped: by the microphone's clock when the
        echo canceller follows it (a simulated robot may run faster than real time), else by
        the wall clock. ``sent``: when the clip began to sound."""
        if not sent:
            return 0
        seconds = self.audio.stopped_at - sent[0]
        if self.echo is not None:  # the microphone's samples per second: 16,000 at real time
            return round(seconds * self.echo.rate) * 3  # 16 kHz samples -> bytes at 24 kHz
        return round(seconds * SPEAKER_RATE) * 2

    def _on_sound(
        self, reference: bytes | None, offset: int, sent: list[float]
    ) -> Callable[[float], None]:
        """What ``audio.play`` calls as each clip starts to sound: the echo canceller is given
        the 16 kHz reference from ``offset`` (bytes of the 24 kHz clip) on, whole, with the
        first clip (one clip is 87 s of speech); ``sent`` keeps when."""
        echo = self.echo
        laid = b""
        if echo is not None and reference is not None:
            laid = reference[2 * (offset // 2 * 2 // 3):]

        def on_sound(at: float) -> None:
            nonlocal laid
            sent.append(at)
            if laid and echo is not None:
                echo.play(laid, now=at)
                laid = b""

        return on_sound


class _Hold:
    """One pause for a voice over the robot: when it began, how it ended."""

    def __init__(self, at: float = 0.0) -> None:
        self.at = at
        self.over = trio.Event()
        self.kept = True
        """The sentence goes on (``release``), or not (``drop_hold``)."""


_Clip = tuple[int, str, bytes | None, int, bytes | None, int]
"""(index, sentence, 24 kHz PCM or None when synthesis failed, synth_ms, 16 kHz reference,
reference_ms: its resampling)."""


def _from_voice(pcm: bytes) -> bytes:
    """``pcm`` (24 kHz) beginning :data:`REPLY_LEAD_S` before its first sound."""
    lead = round(leading_silence(pcm, SPEAKER_RATE) * SPEAKER_RATE) - round(REPLY_LEAD_S * SPEAKER_RATE)
    return pcm[2 * lead:] if lead > 0 and 2 * lead < len(pcm) else pcm


def _ms(started: float) -> int:
    return round((trio.current_time() - started) * 1000)
