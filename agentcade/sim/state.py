"""The simulated robot's device state: lights, head, what plays, what the screen shows.

The plain data the simulated firmware (:mod:`agentcade.sim.firmware`) changes as commands
arrive, and the values it knows (its animations, zones and capabilities) and how long its
jobs take (:class:`SimTimings`). None of these values comes from firmware documentation
(there is none in the wheel): they are the SDK's callers' values and this module's
assumptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcade.core.allowlist import FRONT_PAN, FRONT_TILT, KNOWN_CAPABILITIES
from agentcade.core.vector import Stroke, VectorError, decode_vector

__all__ = [
    "SIM_ANIMATIONS",
    "SIM_CAPABILITIES",
    "SIM_ZONES",
    "Expression",
    "Lights",
    "SimState",
    "SimTimings",
]

SIM_ANIMATIONS: tuple[str, ...] = ("standby", "happy", "sad", "shock", "smile", "thinking", "music")
SIM_ZONES: frozenset[str] = frozenset({"all", "side", "bottom"})
SIM_CAPABILITIES: tuple[str, ...] = tuple(
    sorted(
        KNOWN_CAPABILITIES
        | {
            # The SDK's firmware flags the allowed calls may need or the bundled apps read.
            "animation.prefetch.v1",
            "expression.vector_accessory.v1",
            "expression.audio_follow.v1",
            "audio.stream",  # host PCM playback (robot.audio.play_pcm), see agentcade.sim.audio
        }
    )
)
"""Every capability a game can declare, plus the SDK firmware flags of the open calls."""


@dataclass
class SimTimings:
    """How long simulated jobs take, in seconds (a move takes its ``duration_ms``)."""

    animation: float = 1.5
    action: float = 1.2
    audio: float = 1.0
    behavior_per_repeat: float = 2.0
    endless_behaviors: frozenset[str] = frozenset({"desktop_expression_panel"})


@dataclass
class Lights:
    """The light ring: off, a colour, or an effect."""

    on: bool = False
    color: str = "#000000"
    brightness: float = 0.0
    zone: str = "all"
    effect: str | None = None
    period_ms: int | None = None
    repeat: int | None = None

    def describe(self) -> str:
        if not self.on:
            return "off"
        text = f"{self.color} {round(self.brightness * 100)}% zone={self.zone}"
        if self.effect:
            times = "until stopped" if not self.repeat else f"x{self.repeat}"
            text += f" effect={self.effect} every {self.period_ms} ms {times}"
        return text


@dataclass
class Expression:
    """The expression runtime (the procedural eyes and their accessory)."""

    running: bool = False
    preset: str | None = None
    accessory: str = "none"
    custom_vector_path: str | None = None
    custom_accessory_layer: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    """Every other field as sent, ``*_milli`` turned back into floats (``gaze_x``: 0.5)."""

    def strokes(self) -> list[Stroke]:
        """The vector drawing shown, if any (empty when there is none or it is invalid)."""
        if self.accessory != "custom_vector" or not self.custom_vector_path:
            return []
        try:
            return decode_vector(self.custom_vector_path)
        except VectorError:
            return []


@dataclass
class SimState:
    """What the simulated robot is doing now."""

    lights: Lights = field(default_factory=Lights)
    pan: int = FRONT_PAN
    tilt: int = FRONT_TILT
    moving_to: tuple[int, int] | None = None
    animation: str | None = None
    behavior: str | None = None
    action: str | None = None
    sound: str | None = None
    expression: Expression = field(default_factory=Expression)
    screen: str = "standby"
    """``standby`` (the device's idle eyes), ``expression``, ``animation:<id>``,
    ``behavior:<id>``, ``official:<id>``, ``work:<id>`` or ``work:<id>/<clip>``."""

    @property
    def head(self) -> tuple[int, int]:
        return (self.pan, self.tilt)

