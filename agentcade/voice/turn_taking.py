"""Turn-taking, sans-IO: who has the floor, decided frame by frame.

Theory of operation. One :class:`TurnTaking` follows one utterance, from the first frame
listened to until it ends. It is told, in order, what each microphone frame meant
(:class:`Frame`: the voice detector's step, and what the echo canceller knows of the robot's
voice in it), that a frame came that could not be judged yet (:class:`Waiting`: the
canceller holds frames while it places the robot's sentence), that the robot's voice made
the frame unusable (:class:`Deaf`: half duplex), and that a speculative recognition finished
(:class:`Recognised`). It answers with decisions (:class:`Hold`, :class:`BargeIn`,
:class:`Release`, :class:`Speculate`, :class:`Abandon`, :class:`End`, :class:`Drop`) that the
trio edge (:mod:`agentcade.voice.listener`) carries out. It reads no clock and touches no
audio: the same events give the same decisions, so its tests replay event sequences.

The states (:class:`State`)::

    LISTENING --start (robot silent)----------------> HEARING
    LISTENING --start over the robot, can hold------> HELD        (Hold: the sound pauses)
    LISTENING --start over the robot, cannot hold---> HEARING     (BargeIn)
    HELD      --confirmed a child-------------------> HEARING     (BargeIn, confirmed)
    HELD      --silence, or the voice ended---------> RELEASED    (Release: the robot goes on)
    HEARING   --the robot begins to speak-----------> HEARING     (BargeIn; once)
    HEARING   --voice paused ``speculate_ms``-------> HEARING     (Speculate)
    HEARING   --voice came back---------------------> HEARING     (Abandon the speculation)
    HEARING   --an actionable text recognised-------> ENDED       (End, early)
    HEARING   --the detector ended it---------------> ENDED       (End)
    any live  --half duplex, the robot spoke--------> DROPPED     (Drop)

A voice that starts while the robot's voice may be in the frames may be that voice (what
the canceller left of it): the robot is paused, not stopped (``Hold``), until the voice is
told from the robot's: a child goes on after the robot's voice has left the frames
(``confirm_ms``; ``confirm_clean_ms`` for a voice begun where the model of the echo took the
echo out: it is not the robot's), is louder than the robot's echo could be
(``confirm_loud_ms`` of such frames), or goes on ``confirm_long_ms`` whatever is in the
frames (a busy host can take half a second to stop the robot); the canceller's residue ends
with the robot's voice (``release_ms`` of silence, or the detector's end, first). A frame
louder than the echo that does not repeat at a voice's pitch, or repeats at the pitch the
robot played then (:attr:`Frame.periodicity` under ``loud_periodicity``), is noise: a
television's burst, or the robot's own onset where its echo was underestimated. It counts
towards no confirmation, neither as loud nor as voice. A start in
the quiet is a child's; if the robot then begins to speak (the reply to the line before)
while the child still talks, they talk over it and it stops at once.

A recogniser that recognises a whole clip at once (the embedded one) is asked as soon as
the voice pauses (``speculate_ms``), while the silence window runs; the voice coming back
abandons that recognition (a child who pauses mid-line, 我猜……十五, is not cut off). A text
the host can act on at once ends the utterance there, except a round number whose units may
still come (十 of 十……五), which waits for ``number_wait_ms`` of silence. Every knob is in
:mod:`agentcade.voice.tuning`.

Illegal events (anything after the utterance is over, a recognition nobody asked for, a
second start) raise :class:`TurnTakingError`: the edge has a bug.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agentcade.core.errors import AgentcadeError
from agentcade.voice.tuning import TUNING, Tuning

__all__ = [
    "Abandon",
    "BargeIn",
    "Deaf",
    "Decision",
    "Drop",
    "End",
    "Event",
    "Frame",
    "Hold",
    "Recognised",
    "Release",
    "Speculate",
    "State",
    "TurnTaking",
    "TurnTakingError",
    "Waiting",
    "traced",
]


class TurnTakingError(AgentcadeError, RuntimeError):
    """An event the machine cannot take in its state (a bug in its edge)."""


class State(enum.Enum):
    LISTENING = "listening"
    """No utterance yet."""
    HEARING = "hearing"
    """An utterance under way, the robot not paused for it."""
    HELD = "held"
    """An utterance under way that paused the robot: a child's, or the robot's own echo?"""
    ENDED = "ended"
    """The utterance is over and is to be recognised."""
    RELEASED = "released"
    """It was the robot's own voice: no utterance, the robot goes on."""
    DROPPED = "dropped"
    """Half duplex: the robot spoke over it; it is not recognised."""


# --- events ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One microphone frame, judged."""

    kind: Literal["quiet", "start", "voice", "end"]
    """The voice detector's step."""
    ms: float
    """How long the frame is."""
    voiced_ms: float
    """The detector's voiced time of the utterance so far."""
    silence_ms: float = 0.0
    """The detector's silence in a row at its end."""
    speaking: bool = False
    """The robot is playing sound now."""
    audible: bool = False
    """The robot's voice may be in this frame (it plays, or its echo's lag and reverb)."""
    taken_out: bool = False
    """The frame was judged with the robot's echo taken out by the model of it."""
    louder: bool = False
    """The frame is louder than the robot's echo could be (somebody else is talking)."""
    heard_over_echo: bool = False
    """The microphone's own samples are louder than the echo and the room could make them."""
    periodicity: float = 0.0
    """How much the sound that was louder repeats at a voice's pitch (0-1; 0 when nothing was
    louder, or when it repeats at the pitch the robot played then): a child's voice does, a
    television's noise does not."""


@dataclass(frozen=True)
class Waiting:
    """A frame came that cannot be judged yet (the canceller holds it while it places the
    robot's sentence); ``speaking``: whether the robot plays sound now."""

    speaking: bool


@dataclass(frozen=True)
class Deaf:
    """Half duplex: the robot spoke, this frame is dropped (and so is a voice under way)."""


@dataclass(frozen=True)
class Recognised:
    """The speculative recognition ``guess`` finished with a text the host can act on at
    once (``actionable``), perhaps a round number whose units may still come
    (``may_go_on``)."""

    guess: int
    actionable: bool
    may_go_on: bool = False


Event = Frame | Waiting | Deaf | Recognised


# --- decisions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hold:
    """Pause the robot's sound: a voice began over it (``clean``: where its echo was taken
    out)."""

    voiced_ms: float
    clean: bool


@dataclass(frozen=True)
class BargeIn:
    """Stop the robot for good: a child talks over it (``confirmed``: after a hold)."""

    voiced_ms: float
    confirmed: bool
    clean: bool = False


@dataclass(frozen=True)
class Release:
    """The voice that paused the robot was its own: let it go on; no utterance."""

    voiced_ms: float


@dataclass(frozen=True)
class Speculate:
    """Recognise what was said so far (the utterance's audio up to this frame)."""

    guess: int
    voiced_ms: float
    silence_ms: float


@dataclass(frozen=True)
class Abandon:
    """The voice went on: that recognition is not the line's."""

    guess: int


@dataclass(frozen=True)
class End:
    """The utterance ended: ``early`` when a recognised text is acted on before the silence
    window (``guess``: which), else by the detector (``guess``: the latest speculation still
    standing, whose text is the line's, or None: recognise it all now)."""

    early: bool
    guess: int | None
    voiced_ms: float
    silence_ms: float


@dataclass(frozen=True)
class Drop:
    """Half duplex: the utterance is dropped unrecognised."""


Decision = Hold | BargeIn | Release | Speculate | Abandon | End | Drop


@dataclass
class _Guess:
    id: int
    silence_ms: float
    """The silence when it was asked: less silence later means the voice came back."""
    waiting: bool = False
    """Actionable, but a round number waiting for ``number_wait_ms`` of silence."""


class TurnTaking:
    """See the module docstring. ``can_hold``: the robot can be paused (else a voice over it
    stops it at once); ``speculative``: recognitions are asked on pauses."""

    def __init__(
        self, *, tuning: Tuning = TUNING, can_hold: bool = True, speculative: bool = False
    ) -> None:
        self.tuning = tuning
        self.state = State.LISTENING
        self._can_hold = can_hold
        self._speculative = speculative
        self._quiet_start = True
        """The utterance began with none of the robot's voice in the frames."""
        self._barged = False
        """The robot was paused or stopped for this utterance already."""
        self._held_at = 0.0
        """While held: the voiced ms when the hold began."""
        self._clean_at: float | None = None
        """... and when the robot's voice had left the frames (None: not yet)."""
        self._clean_start = False
        """... and whether it began on a clean microphone."""
        self._loud_ms = 0.0
        """... and how long it was louder than the robot's echo could be."""
        self._noise_ms = 0.0
        """... and how much of its voiced time was louder than the echo but no voice's (a
        television's burst: it counts towards no confirmation)."""
        self._voiced_step = 0.0
        """The voiced ms the last frame added."""
        self._guess: _Guess | None = None
        self._guesses = 0
        self._silence_ms = 0.0
        self._voiced_ms = 0.0
        self._taken = False
        self.end: End | None = None
        """How the utterance ended (once ENDED)."""

    @property
    def held(self) -> bool:
        """Whether the robot is paused for this utterance (the edge must never leave it so)."""
        return self.state is State.HELD

    @property
    def done(self) -> bool:
        return self.state in (State.ENDED, State.RELEASED, State.DROPPED)

    @property
    def cut(self) -> bool:
        """Whether the utterance stopped before the detector ended it (released, dropped, or
        ended early): what still runs for it is to be cancelled, its frames not kept."""
        return self.state in (State.RELEASED, State.DROPPED) or (
            self.state is State.ENDED and self.end is not None and self.end.early)

    def feed(self, event: Event) -> list[Decision]:
        """What to do about ``event``.

        Raises:
            TurnTakingError: the event cannot happen in this state.
        """
        handler = _TABLE.get((self.state, type(event)))
        if handler is None:
            raise TurnTakingError(f"{type(event).__name__} in state {self.state.name}")
        return handler(self, event)

    # --- LISTENING -----------------------------------------------------------------------

    def _listening_frame(self, frame: Frame) -> list[Decision]:
        self._see(frame)
        if frame.kind == "quiet":
            return []
        if frame.kind != "start":
            raise TurnTakingError(f"a {frame.kind} frame before any start")
        self.state = State.HEARING
        self._quiet_start = not (frame.speaking or frame.audible)
        if self._quiet_start:
            return []
        # The frame that started it counts when the microphone heard it louder than the
        # robot's echo could be (a 七 may have only one more such frame after it).
        loud = frame.heard_over_echo and frame.periodicity >= self.tuning.loud_periodicity
        return self._over_robot(sure=False, loud_ms=frame.ms if loud else 0.0)

    def _listening_deaf(self, event: Deaf) -> list[Decision]:
        return []

    # --- an utterance under way ----------------------------------------------------------

    def _over_robot(self, *, sure: bool, loud_ms: float = 0.0) -> list[Decision]:
        """The child talks while the robot speaks: stop it, or pause it until the voice is
        confirmed when it may be the robot's own echo."""
        self._barged = True
        clean = self._taken
        if sure or not self._can_hold:
            return [BargeIn(self._voiced_ms, confirmed=False, clean=clean)]
        self.state = State.HELD
        self._held_at = self._voiced_ms
        self._loud_ms, self._noise_ms = loud_ms, 0.0
        self._clean_start = clean
        self._clean_at = self._held_at if clean else None
        return [Hold(self._voiced_ms, clean)]

    def _waiting(self, event: Waiting) -> list[Decision]:
        if event.speaking and not self._barged:
            # The robot began to speak (the reply to the line before) while the child was
            # still talking: they talk over it, so it stops.
            return self._over_robot(sure=self._quiet_start)
        return []

    def _frame(self, frame: Frame) -> list[Decision]:
        decisions = self._waiting(Waiting(frame.speaking))
        self._see(frame)
        if frame.kind in ("start", "quiet"):
            raise TurnTakingError(f"a {frame.kind} frame inside an utterance")
        if self.state is State.HELD:
            decisions += self._confirm(frame)
            if self.done:  # released: it was the robot's own voice
                return decisions
        if frame.kind == "end":
            self.state = State.ENDED
            guess = self._guess.id if self._guess is not None else None
            self.end = End(False, guess, self._voiced_ms, self._silence_ms)
            return [*decisions, self.end]
        if self._speculative and self.state is State.HEARING:
            decisions += self._pause(frame)
        return decisions

    def _confirm(self, frame: Frame) -> list[Decision]:
        """While held: a child (barge-in), the robot's own voice (release), or undecided."""
        t = self.tuning
        noise = (frame.louder or frame.heard_over_echo) and frame.periodicity < t.loud_periodicity
        self._noise_ms += self._voiced_step if noise else 0.0
        voiced = self._voiced_ms - self._noise_ms
        if not frame.audible or frame.taken_out:
            self._clean_at = voiced if self._clean_at is None else self._clean_at
        elif frame.louder and not noise:
            self._loud_ms += frame.ms
        confirm_ms = t.confirm_clean_ms if self._clean_start else t.confirm_ms
        if (voiced - self._held_at >= t.confirm_long_ms or self._loud_ms >= t.confirm_loud_ms
                or (self._clean_at is not None and voiced - self._clean_at >= confirm_ms)):
            self.state = State.HEARING
            return [BargeIn(self._voiced_ms, confirmed=True)]
        if frame.kind == "end" or self._silence_ms >= t.release_ms:
            self.state = State.RELEASED
            return [Release(self._voiced_ms)]
        return []

    def _pause(self, frame: Frame) -> list[Decision]:
        """Speculate on a pause; abandon a speculation the voice went on after; act on a
        waiting one once the silence is long enough."""
        t = self.tuning
        decisions: list[Decision] = []
        guess = self._guess
        if guess is not None and self._silence_ms < guess.silence_ms:
            decisions.append(Abandon(guess.id))  # the silence was broken: more is coming
            self._guess = guess = None
        if guess is not None and guess.waiting and self._silence_ms >= t.number_wait_ms:
            return [*decisions, self._end_early(guess)]
        if frame.kind == "voice" and guess is None and self._silence_ms >= t.speculate_ms:
            self._guesses += 1
            self._guess = _Guess(self._guesses, self._silence_ms)
            decisions.append(Speculate(self._guesses, self._voiced_ms, self._silence_ms))
        return decisions

    def _recognised(self, event: Recognised) -> list[Decision]:
        guess = self._guess
        if event.guess > self._guesses:
            raise TurnTakingError(f"recognition {event.guess} was never asked for")
        if guess is None or guess.id != event.guess or not event.actionable:
            return []  # abandoned meanwhile, or nothing to act on at once
        if event.may_go_on and self._silence_ms < self.tuning.number_wait_ms:
            guess.waiting = True  # 十 of 十……五: acted on after number_wait_ms (_pause)
            return []
        return [self._end_early(guess)]

    def _end_early(self, guess: _Guess) -> End:
        self.state = State.ENDED
        self.end = End(True, guess.id, self._voiced_ms, self._silence_ms)
        return self.end

    def _deaf(self, event: Deaf) -> list[Decision]:
        self.state = State.DROPPED
        return [Drop()]

    def _see(self, frame: Frame) -> None:
        self._voiced_step = frame.voiced_ms - self._voiced_ms
        self._voiced_ms = frame.voiced_ms
        self._silence_ms = frame.silence_ms
        self._taken = frame.taken_out


def traced(decision: Decision, audio_ms: int) -> tuple[str, dict[str, object]] | None:
    """The trace record of a decision, if it has one (``audio_ms``: the utterance's audio so
    far): ``speech_over_robot``, ``barge_in_confirmed``, ``barge_in_released``,
    ``asr_speculate``, ``speech_heard``."""
    d = decision
    if isinstance(d, Hold) or (isinstance(d, BargeIn) and not d.confirmed):
        return "speech_over_robot", {"voiced_ms": round(d.voiced_ms),
                                     "held": isinstance(d, Hold), "clean": d.clean}
    if isinstance(d, BargeIn | Release):
        kind = "barge_in_confirmed" if isinstance(d, BargeIn) else "barge_in_released"
        return kind, {"voiced_ms": round(d.voiced_ms)}
    if isinstance(d, Speculate):
        return "asr_speculate", {"voiced_ms": round(d.voiced_ms),
                                 "silence_ms": round(d.silence_ms)}
    if isinstance(d, End):
        early = {"early": True, "silence_ms": round(d.silence_ms)} if d.early else {}
        return "speech_heard", {"audio_ms": audio_ms, "voiced_ms": round(d.voiced_ms), **early}
    return None


_Handler = Callable[[TurnTaking, "Event"], list[Decision]]
_TABLE: dict[tuple[State, type], _Handler] = {
    (State.LISTENING, Frame): TurnTaking._listening_frame,  # type: ignore[dict-item]
    (State.LISTENING, Waiting): lambda machine, event: [],
    (State.LISTENING, Deaf): TurnTaking._listening_deaf,  # type: ignore[dict-item]
    (State.HEARING, Frame): TurnTaking._frame,  # type: ignore[dict-item]
    (State.HEARING, Waiting): TurnTaking._waiting,  # type: ignore[dict-item]
    (State.HEARING, Deaf): TurnTaking._deaf,  # type: ignore[dict-item]
    (State.HEARING, Recognised): TurnTaking._recognised,  # type: ignore[dict-item]
    (State.HELD, Frame): TurnTaking._frame,  # type: ignore[dict-item]
    (State.HELD, Waiting): lambda machine, event: [],
    (State.HELD, Deaf): TurnTaking._deaf,  # type: ignore[dict-item]
    # A speculation still running when the detector ended the line: the edge awaits its
    # text, and its verdict no longer matters.
    (State.ENDED, Recognised): lambda machine, event: [],
}
"""(state, event) -> what happens; a pair not here is illegal."""
