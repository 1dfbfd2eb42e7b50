"""The simulated robot's room: a fan, a television, a quiet child and the robot's own echo.

A real family room is never quiet, and the voice detection that works at a desk fails
there (the loudness detector never ended an utterance over a fan). ``agentcade run --robot
sim --room "noise=700,bursts=on,voice=0.25,echo=0.3"`` puts the simulated microphone in
such a room; every key is optional:

``noise``  steady fan-like noise (low-passed), its RMS (0..8000; default 0)
``bursts`` ``on``/``off``: loud noise bursts now and then *between* lines, as from a
           television, with no speech in them (default off)
``voice``  the child's loudness factor (0.05..4; default 1; 0.25 is a quiet child)
``echo``   the share of the robot's own speaker output that returns into its microphone,
           40–120 ms late with a short reverb (0..1; default 0)
``child``  the child's voice: ``neural`` (the natural offline voice; default) or ``espeak``
           (espeak-ng, which a recogniser hears far worse)

:func:`parse_room` turns the option into a :class:`Room` (or :class:`RoomError`, one line);
:class:`RoomMixer` makes each microphone frame from the child's voice, the noise and the
echo. Pure Python, seeded: the same room sounds the same on every run.
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Callable
from dataclasses import dataclass

from agentcade.core.errors import InputError

__all__ = ["Room", "RoomError", "RoomMixer", "parse_room"]

RATE = 16000
_NOISE_LOOP_SECONDS = 4.0
_BURST_RMS = 3000.0
_BURST_SECONDS = (0.4, 1.5)
_BURST_GAP_SECONDS = (1.5, 5.0)
_REVERB = ((0.0, 1.0), (0.023, 0.35), (0.051, 0.15))
"""(extra delay in s, gain) of the echo's taps: the direct path, then two reflections."""

SpeakerTap = Callable[[float, int], "array[int]"]
"""``tap(start, n)``: the n samples (16 kHz) the speaker played at the microphone's sample
positions ``start``… (one clock for both, as on the device: the echo follows the
microphone's samples, not the host's wall clock)."""


class RoomError(InputError, ValueError):
    """A ``--room`` value that cannot be: the message is the one line to print."""


@dataclass(frozen=True)
class Room:
    """What the simulated microphone hears besides the child (see the module docstring)."""

    noise: float = 0.0
    bursts: bool = False
    voice: float = 1.0
    echo: float = 0.0
    echo_delay: float = 0.07
    """Seconds from the speaker to the microphone (40–120 ms in a real robot)."""
    seed: int = 20
    child: str = "neural"
    """The voice the simulated child speaks with (``neural`` or ``espeak``)."""

    @property
    def quiet(self) -> bool:
        """Whether the room adds nothing and changes nothing (the microphone's fast path)."""
        return not self.noise and not self.bursts and self.voice == 1.0 and not self.echo


_RANGES: dict[str, tuple[float, float]] = {"noise": (0, 8000), "voice": (0.05, 4), "echo": (0, 1)}
CHILD_VOICES = ("neural", "espeak")
_KEYS = "keys: noise, bursts, voice, echo, child"


def parse_room(spec: str) -> Room:
    """``"noise=700,bursts=on,voice=0.25,echo=0.3"`` as a :class:`Room`.

    Raises:
        RoomError: an unknown key, a value that is not a number (or on/off), or out of range.
    """
    values: dict[str, float | bool] = {}
    child = "neural"
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, raw = (s.strip() for s in part.partition("="))
        if not sep or not raw:
            raise RoomError(f"--room: {part!r} is not KEY=VALUE ({_KEYS})")
        if key == "bursts":
            if raw.lower() not in ("on", "off"):
                raise RoomError(f"--room: bursts is on or off, not {raw!r}")
            values[key] = raw.lower() == "on"
            continue
        if key == "child":
            if raw.lower() not in CHILD_VOICES:
                raise RoomError(f"--room: child is {' or '.join(CHILD_VOICES)}, not {raw!r}")
            child = raw.lower()
            continue
        if key not in _RANGES:
            raise RoomError(f"--room: unknown key {key!r} ({_KEYS})")
        try:
            number = float(raw)
        except ValueError:
            raise RoomError(f"--room: {key} must be a number, not {raw!r}") from None
        low, high = _RANGES[key]
        if not low <= number <= high:
            raise RoomError(f"--room: {key} must be between {low:g} and {high:g}, not {raw}")
        values[key] = number
    return Room(
        noise=float(values.get("noise", 0.0)),
        bursts=bool(values.get("bursts", False)),
        voice=float(values.get("voice", 1.0)),
        echo=float(values.get("echo", 0.0)),
        child=child,
    )


def _noise_loop(rms: float, rng: random.Random, *, smooth: float) -> array[int]:
    """A loop of low-passed white noise scaled to ``rms`` (a fan: most energy low)."""
    n = int(_NOISE_LOOP_SECONDS * RATE)
    raw: list[float] = []
    level = 0.0
    for _ in range(n):
        level += smooth * (rng.gauss(0.0, 1.0) - level)
        raw.append(level)
    have = math.sqrt(math.fsum(x * x for x in raw) / n) or 1.0
    scale = rms / have
    return array("h", (max(-32768, min(32767, round(x * scale))) for x in raw))


class RoomMixer:
    """Makes the microphone's frames in a :class:`Room` (one per microphone)."""

    def __init__(self, room: Room, speaker: SpeakerTap | None = None) -> None:
        self.room = room
        self._speaker = speaker
        rng = random.Random(room.seed)
        self._rng = rng
        self._fan = _noise_loop(room.noise, rng, smooth=0.3) if room.noise else None
        self._burst_noise = _noise_loop(_BURST_RMS, rng, smooth=0.6) if room.bursts else None
        self._pos = 0
        self._burst_left = 0
        self._burst_gap = self._gap()
        self.bursts_played = 0

    def _gap(self) -> int:
        return int(self._rng.uniform(*_BURST_GAP_SECONDS) * RATE)

    def frame(self, voice: bytes, samples: int) -> bytes:
        """One frame of ``samples``: the child's ``voice`` (s16le, zero-padded) in the room."""
        room = self.room
        out = array("h", voice[: samples * 2].ljust(samples * 2, b"\0"))
        mixed = [x * room.voice for x in out] if room.voice != 1.0 else [float(x) for x in out]
        talking = any(out)
        start = self._pos
        self._pos += samples
        if self._fan is not None:
            loop = self._fan
            size = len(loop)
            for i in range(samples):
                mixed[i] += loop[(start + i) % size]
        if self._burst_noise is not None:
            self._add_burst(mixed, samples, talking, start)
        if room.echo and self._speaker is not None:
            for delay, gain in _REVERB:
                played = self._speaker(start - (room.echo_delay + delay) * RATE, samples)
                g = room.echo * gain
                for i, x in enumerate(played):
                    mixed[i] += g * x
        return array("h", (max(-32768, min(32767, round(x))) for x in mixed)).tobytes()

    def _add_burst(self, mixed: list[float], samples: int, talking: bool, start: int) -> None:
        assert self._burst_noise is not None
        if talking:  # bursts come between lines: the child's voice is heard clean of them
            self._burst_left = 0
            return
        if self._burst_left <= 0:
            self._burst_gap -= samples
            if self._burst_gap > 0:
                return
            self._burst_left = int(self._rng.uniform(*_BURST_SECONDS) * RATE)
            self._burst_gap = self._gap()
            self.bursts_played += 1
        loop = self._burst_noise
        size = len(loop)
        for i in range(min(samples, self._burst_left)):
            # A television's loudness swings several times a second.
            envelope = 0.6 + 0.4 * math.sin(2 * math.pi * 3.0 * (start + i) / RATE)
            mixed[i] += envelope * loop[(start + i) % size]
        self._burst_left -= samples
