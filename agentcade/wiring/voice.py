"""The voice loop of ``agentcade run``: listen, recognise, hand the words to the main agent.

:class:`VoiceLoop` runs on a pipeline built over a :class:`~agentcade.voice.speaker.VoiceRobot`
(so everything the main agent and the games say is spoken by TTS on the robot):

* the boot greeting names each game with its ``summary`` (``router.greeting``), said once
  the microphone hears (full duplex: a child may say what to play over it);
* while the microphone is open (:class:`MicGate`: the desktop's
  ``ctrl.microphone.open/close`` toggle it), it hears one utterance at a time
  (:class:`~agentcade.voice.listener.Listener`) and calls ``agent.on_user(text)``, which
  returns once the first reply was played;
* with ``BARGE_IN=voice`` (the default) it listens while the robot speaks, with the robot's
  own voice taken out (:class:`~agentcade.voice.echo.EchoCanceller`): speech over the robot
  is a barge-in; with ``touch`` it is deaf while the robot speaks (half duplex);
* a barge-in — that speech while the robot speaks (or has words queued to say), or a
  back-touch press while it does anything (speaks, moves, draws) — stops the sound at once
  and ``agent.interrupt()`` cancels the turn the way
  ``end`` does; listening goes on. A voice over the robot first only pauses it
  (``VoiceRobot.hold``): with the robot quiet, a child goes on talking and the barge-in is
  confirmed; what its own echo left ends with its voice, and the sentence goes on
  (``VoiceRobot.release``, from a gap just before where it paused). A voice while the
  robot draws in silence talks over nothing: it is a line like any other, and the host
  answers that the game is still busy while the drawing goes on.

A failed recognition is traced (``asr_failed``), the family hears one short line, and the
loop listens again; so does an utterance that held a voice (``Tuning.voiced_enough_s``) but gave
no usable text (``asr_empty``: never silence after a child spoke; never for a noise, which
Silero does not take for a voice). Once the greeting is said, the first words of the host's
own lines (the games' list, the line above...) are synthesised ahead (``VoiceRobot.prepare``).
The embedded recogniser is told what may be said now, and
an utterance ends as soon as its words can be acted on (:mod:`agentcade.wiring.hearing`); a microphone that closes (robot gone) is reopened after a second.

Trace records: ``voice_listening``, ``utterance`` (text, speech_end, asr_final,
first_audio: wall-clock times; asr_ms, reply_ms), ``barge_in``, ``asr_failed``,
``microphone_failed``.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Literal

import trio

from agentcade.core.errors import DeviceError, VoiceError, lone_exception
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.audio import MicFrame
from agentcade.device.robots import SdkRobot
from agentcade.main.agent import MainAgent
from agentcade.main.router import greeting
from agentcade.sim.audio import SimMicrophone
from agentcade.voice.asr import Heard, Recognizer
from agentcade.voice.config import BargeIn
from agentcade.voice.echo import EchoCanceller, make_echo_canceller
from agentcade.voice.listener import Listener, MicrophoneClosed
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.voice.speaker import VoiceRobot
from agentcade.voice.tuning import TUNING, Tuning
from agentcade.wiring import hearing

__all__ = [
    "NOT_HEARD",
    "MicGate",
    "VoiceLoop",
    "follow_desktop_microphone",
    "mic_command",
    "parse_over",
    "running",
    "say_into_microphone",
]

NOT_HEARD = "我刚才没听清，能再说一遍吗？"
"""Said when the recogniser failed (the service is down or refused), or heard a voice but no
words."""
REOPEN_DELAY = 1.0
GREET_AFTER_MIC_S = 2.0
"""How long the greeting waits for the microphone to open before it is said anyway."""
FULL_DUPLEX_MAX_SPEED = 2.0
"""The fastest simulated robot that listens while it speaks (``BARGE_IN=voice``); faster, it
falls back to touch, with one line saying so. The echo canceller places each sentence by
the microphone's frames and the host's clock: at N times real time every host delay counts
N times. At 2x a riddle game with six lines over the robot was right in 4 runs of 4 and the
robot set itself off 0 times in 88 sentences (tests/bench/bench_barge_game.py); at 4x (the
default of ``agentcade e2e --robot sim``) it heard itself several times a game."""


class MicGate:
    """Whether the microphone should be open (desktop ``ctrl.microphone.open/close``)."""

    def __init__(self, *, open_: bool = True) -> None:
        self._open = open_
        self._changed = trio.Event()

    @property
    def is_open(self) -> bool:
        return self._open

    def set(self, open_: bool) -> None:
        """Open or close (call from trio; from another thread use ``run_sync_soon``)."""
        if open_ != self._open:
            self._open = open_
            self._changed.set()
            self._changed = trio.Event()

    async def wait(self, open_: bool) -> None:
        while self._open != open_:
            await self._changed.wait()


class VoiceLoop:
    """See the module docstring."""

    def __init__(
        self,
        agent: MainAgent,
        robot: VoiceRobot,
        recognizer: Recognizer,
        *,
        vad: Tuning | None = None,
        trace: Trace = NULL_TRACE,
        gate: MicGate | None = None,
        greet: bool = True,
        on_utterance: Callable[[bytes], None] | None = None,
        barge_in: BargeIn = "touch",
        speed: float = 1.0,
    ) -> None:
        self.on_utterance = on_utterance
        if barge_in == "voice" and speed > FULL_DUPLEX_MAX_SPEED:
            sys.stderr.write(f"agentcade: 模拟的小懒比实际快 {speed:g} 倍，听不准自己的回声，"
                             f"这次说话打断不了它，摸后背还能打断（--sim-speed "
                             f"{FULL_DUPLEX_MAX_SPEED:g} 以内可以说话打断）。\n")
            trace.record("echo_unavailable", error=f"simulated robot at {speed:g}x")
            barge_in = "touch"
        if barge_in == "voice" and robot.echo is None:
            echo, why = make_echo_canceller()
            if echo is None:
                sys.stderr.write(f"agentcade: 回声消除用不了（{why}），说话打断不了小懒，"
                                 "摸后背还能打断。\n")
                trace.record("echo_unavailable", error=why)
                barge_in = "touch"
            robot.echo = echo
        elif barge_in != "voice":
            robot.echo = None
        self.barge_in: BargeIn = barge_in
        self.agent = agent
        self.robot = robot
        self.recognizer = recognizer
        if isinstance(recognizer, LocalRecognizer):
            recognizer.bias = lambda: hearing.phrases(agent)
        self.vad = vad or TUNING
        self.listener: Listener | None = None
        """The listener of the microphone open now (benchmarks judge other knobs on it)."""
        self.trace = trace
        self.gate = gate or MicGate()
        self.greet = greet
        self.heard: list[Heard] = []
        self.barge_ins = 0
        self._heard_changed = trio.Event()
        self._mic_open = trio.Event()
        """Set once the microphone's first frame came (the echo canceller then knows where
        the robot's sound will be heard)."""
        self._greeted = trio.Event()
        """Set once the greeting was said (or at once, with no greeting)."""
        self.prepared = trio.Event()
        """Set once the host's own lines were synthesised ahead (:meth:`_prepare`)."""

    # -- for scenario feeders and tests ----------------------------------------------------

    async def wait_listening(self) -> None:
        """Wait until the microphone hears and the greeting is over."""
        await self._mic_open.wait()
        await self._greeted.wait()

    async def wait_heard(self, count: int) -> None:
        """Wait until ``count`` utterances have been recognised (wrap in ``fail_after``)."""
        while len(self.heard) < count:
            await self._heard_changed.wait()

    async def wait_ready_for_speech(self) -> None:
        """Wait until the robot listens: greeting over, nothing pending, not speaking."""
        await self.wait_listening()
        while True:
            await self.agent.wait_idle()
            await self.robot.wait_quiet()
            if self.agent.output.idle and not self.robot.deaf:
                return

    # -- the loop --------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen and answer until cancelled; greet once the microphone hears."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch_touch)
            if self.greet:
                nursery.start_soon(self._greet)
            else:
                self._greeted.set()
            nursery.start_soon(self._prepare)
            task_status.started()
            while True:
                await self.gate.wait(True)
                with trio.CancelScope() as scope:
                    nursery.start_soon(self._close_when_gated, scope)
                    try:
                        await self._listen()
                    except (MicrophoneClosed, DeviceError) as exc:
                        self.trace.record("microphone_failed", error=str(exc) or type(exc).__name__)
                        sys.stderr.write(f"agentcade: 麦克风断开了（{str(exc) or '没有声音'}），一秒后重新打开。\n")
                        await trio.sleep(REOPEN_DELAY)
                scope.cancel()

    async def _greet(self) -> None:
        """The boot greeting, said once the microphone hears (unless the desktop keeps it
        closed): a child may talk over it, and to tell the child from the robot's echo the
        canceller must have the greeting on the microphone's timeline: a sentence begun
        before its first frame came is heard where the canceller cannot tell."""
        if self.gate.is_open:
            with trio.move_on_after(GREET_AFTER_MIC_S):  # a microphone that fails to open
                await self._mic_open.wait()
        await self.agent.say(greeting(self.agent.registry.games))
        self._greeted.set()

    async def _prepare(self) -> None:
        """Once the greeting is said, the first words of the host's own lines are synthesised
        ahead (``VoiceRobot.prepare``): said later, they sound at once."""
        await self._greeted.wait()
        await self.robot.prepare([NOT_HEARD, *self.agent.fixed_lines()])
        self.prepared.set()

    async def _close_when_gated(self, scope: trio.CancelScope) -> None:
        await self.gate.wait(False)
        scope.cancel()

    def _talking(self) -> bool:
        """Whether the robot speaks or has words still to say: what a child's voice talks
        over. A silent drawing is not talked over: a line said while the game draws is
        answered as busy (我还在准备呢) and the drawing goes on."""
        return self.robot.speaking or self.agent.output.words_pending

    def _acting(self) -> bool:
        """Whether the robot does anything it was asked to (speaks, moves, draws): what a
        touch on its back stops."""
        return self.robot.speaking or not self.agent.output.idle

    async def _listen(self) -> None:
        with lone_exception():  # MicrophoneClosed and DeviceError reach run() as themselves
            await self._listen_grouped()

    async def _listen_grouped(self) -> None:
        async with self.robot.audio.microphone() as mic, trio.open_nursery() as relay:
            echo = self.robot.echo if self.barge_in == "voice" else None
            if echo is not None:
                echo.opened()  # a new stream: the canceller follows its timeline from here
            try:
                await self._hear_all(mic, relay, echo)
            finally:
                if echo is not None:
                    echo.closed()

    async def _hear_all(
        self, mic: trio.MemoryReceiveChannel[MicFrame], relay: trio.Nursery,
        echo: EchoCanceller | None,
    ) -> None:
        # The echo canceller counts frames as they arrive, before any queue.
        send_frames, frames = trio.open_memory_channel[bytes](math.inf)
        relay.start_soon(_relay, mic, send_frames, echo, self._mic_open,
                         lambda: self.robot.deaf)
        self.listener = listener = Listener(
            frames, self.recognizer, vad=self.vad,
            deaf=lambda: self.robot.deaf, trace=self.trace, on_utterance=self.on_utterance,
            echo=echo, speaking=self._talking, on_barge_in=lambda: self._barge_in("voice"),
            on_hold=self.robot.hold, on_release=self.robot.release,
            actionable=lambda text: hearing.actionable(self.agent, text),
            on_voice=self.robot.voice_heard,
        )
        self.trace.record("voice_listening", recognizer=self.recognizer.name,
                          barge_in=self.barge_in)
        # The microphone is read all the time (full duplex: a line said over the robot
        # must be heard while an answer plays); lines are answered one after another.
        send, receive = trio.open_memory_channel[Heard](math.inf)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._answer_all, receive)
            while True:
                try:
                    heard = await listener.hear()
                except VoiceError as exc:
                    self.trace.record("asr_failed", error=str(exc))
                    sys.stderr.write(f"agentcade: 语音识别失败：{exc}\n")
                    await self.agent.say(NOT_HEARD)
                    continue
                self.heard.append(heard)
                self._heard_changed.set()
                self._heard_changed = trio.Event()
                if heard.text.strip():
                    send.send_nowait(heard)
                elif heard.voiced_seconds >= self.vad.voiced_enough_s and heard.audio_seconds:
                    self.trace.record("asr_empty", voiced_ms=round(heard.voiced_seconds * 1000))
                    send.send_nowait(heard)

    async def _answer_all(self, receive: trio.MemoryReceiveChannel[Heard]) -> None:
        async with receive:
            async for heard in receive:
                await self._answer(heard)

    async def _answer(self, heard: Heard) -> None:
        before = len(self.robot.sound_starts)
        if heard.text.strip():
            await self.agent.on_user(heard.text)
        else:
            await self.agent.say(NOT_HEARD)
        starts = self.robot.sound_starts[before:]
        first_audio = starts[0] if starts else None
        self.trace.record(
            "utterance",
            text=heard.text,
            speech_end=round(heard.speech_end, 3),
            asr_final=round(heard.asr_final, 3),
            first_audio=None if first_audio is None else round(first_audio, 3),
            asr_ms=heard.asr_ms,
            reply_ms=None if first_audio is None else round((first_audio - heard.speech_end) * 1000),
        )

    async def _watch_touch(self) -> None:
        async with contextlib.aclosing(self.robot.audio.inputs()) as events:
            async for event in events:
                if event.source != "back_touch" or event.action != "press":
                    continue
                if self.barge_in == "off" or not self._acting():
                    continue
                self._barge_in("touch")

    def _barge_in(self, by: Literal["voice", "touch"]) -> None:
        """Stop the robot now: the sound, what is queued, and the turn in flight."""
        self.robot.drop_hold()  # paused for this voice: it does not go on
        if not (self._talking() if by == "voice" else self._acting()):
            return
        self.barge_ins += 1
        saying = self.robot.now_saying
        self.trace.record(
            "barge_in", by=by, speaking=self.robot.speaking, at=round(time.time(), 3),
            sentence=saying[0] if saying else None,
            into_ms=round((trio.current_time() - saying[1]) * 1000) if saying else None,
        )
        # The echo canceller is told the sound stopped by the robot's voice itself, once the
        # robot has really stopped (on a busy host that is long after this): echo it did not
        # expect would be heard as the child's voice.
        self.agent.interrupt()


async def _relay(
    mic: trio.MemoryReceiveChannel[MicFrame], out: trio.MemorySendChannel[bytes],
    echo: EchoCanceller | None, heard: trio.Event, deaf: Callable[[], bool] = lambda: False,
) -> None:
    """Every frame of ``mic`` to ``out`` (counted by ``echo`` as it arrives); ``heard`` is set
    at the first.

    Half duplex (no ``echo``): a frame that arrives while ``deaf()`` (the robot speaks, or
    just stopped) is passed on empty, judged deaf when it *arrives*: the listener may read it
    much later (a recognition takes a few hundred ms, frames wait meanwhile), when the robot
    is long silent, and must not hear the robot's own voice in it then."""
    async with out:
        async for frame in mic:
            if echo is not None:
                echo.arrived(frame.data, at=frame.at, missing=frame.missing)
                out.send_nowait(frame.data)
            else:
                out.send_nowait(b"" if deaf() else frame.data)
            heard.set()


@asynccontextmanager
async def running(loop: VoiceLoop) -> AsyncIterator[VoiceLoop]:
    """Run ``loop`` in the background for the length of the block (tests, scenarios)."""
    async with trio.open_nursery() as nursery:
        await nursery.start(loop.run)
        try:
            yield loop
        finally:
            nursery.cancel_scope.cancel()


def mic_command(frame: object) -> bool | None:
    """``True``/``False`` for a desktop ``ctrl.microphone.open``/``close`` frame, else None."""
    if isinstance(frame, bytes):
        return None
    message: object = frame
    if isinstance(frame, str):
        try:
            message = json.loads(frame)
        except ValueError:
            return None
    kind = message.get("type") if isinstance(message, dict) else None
    return {"ctrl.microphone.open": True, "ctrl.microphone.close": False}.get(str(kind))


def follow_desktop_microphone(robot: SdkRobot, gate: MicGate, agent: MainAgent) -> bool:
    """Honour the desktop's microphone toggle (Application mode); False if there is none.

    The transport calls back on its own thread: the change is handed to trio with
    ``run_sync_soon`` (robot-sdk.md §6, caveat 1). Closing also cancels the turn.
    """
    transport = getattr(robot.sdk, "_transport", None)
    register = getattr(transport, "set_desktop_callback", None)
    if register is None:
        return False
    token = trio.lowlevel.current_trio_token()

    def apply(open_: bool) -> None:
        gate.set(open_)
        if not open_:
            agent.interrupt()

    def on_frame(frame: object) -> None:
        wanted = mic_command(frame)
        if wanted is not None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(apply, wanted)

    register(on_frame)
    return True


def parse_over(line: str) -> tuple[int | None, str]:
    """``/over MS TEXT`` -> ``(MS, TEXT)``: TEXT is said MS ms after the robot starts its next
    sentence (talking over it); any other line -> ``(None, line)``."""
    match = re.fullmatch(r"/over\s+(\d{1,6})\s+(.+)", line.strip())
    if match is None:
        return None, line
    return int(match.group(1)), match.group(2).strip()


async def say_into_microphone(
    loop: VoiceLoop,
    microphone: SimMicrophone,
    lines: Sequence[str],
    speak: Callable[[str], Awaitable[bytes]],
    *,
    line_timeout: float = 60.0,
    trace: Trace = NULL_TRACE,
    speed: float = 1.0,
) -> None:
    """Say each line into a simulated microphone when the robot listens (a scenario).

    ``speak`` turns a line into 16 kHz mono PCM (espeak-ng). After each line the next
    waits until it was heard and every reply to it was said; a line not heard within
    ``line_timeout`` s is traced ``scenario_line_not_heard`` and the scenario goes on.
    ``/over MS TEXT`` is said MS ms (of the device's audio time: ``speed`` is how much
    faster than real time it runs) after the robot starts the first sentence of its reply
    to the line before, over it (without waiting for that reply to be said).
    Each line is traced ``scenario_line`` when it begins to be spoken (``over`` and ``at``,
    the wall-clock time, with it). Returns once the last line's replies were said.
    """
    starts_before = len(loop.robot.sound_starts)
    for raw in lines:
        over, line = parse_over(raw)
        pcm = await speak(line)
        count = len(loop.heard)
        if over is None:
            await loop.wait_ready_for_speech()
        else:  # over the first sentence of the reply to the line before
            await loop.robot.wait_sentences(starts_before + 1)
            started = loop.robot.sound_starts[starts_before]
            await trio.sleep(max(0.0, started + over / 1000 / speed - time.time()))
        starts_before = len(loop.robot.sound_starts)
        fields: dict[str, object] = {"over": over} if over is not None else {}
        trace.record("scenario_line", text=line, audio_ms=round(len(pcm) / 32),
                     at=round(time.time(), 3), **fields)
        microphone.feed(pcm + bytes(SCENARIO_SILENCE_BYTES))
        with trio.move_on_after(line_timeout) as scope:
            await loop.wait_heard(count + 1)
        if scope.cancelled_caught:
            trace.record("scenario_line_not_heard", text=line)
        await microphone.drained()
    await loop.wait_ready_for_speech()


SCENARIO_SILENCE_BYTES = 32000
"""One second of silence after each scenario line (so voice detection hears it end)."""
