"""The robot SDK calls a game may make, the capability each needs, and host limits.

One table for the whole program: the game-side proxy, the host-side re-validation,
``check`` and SKILL.md validation all read it. The capabilities are the coarse ones a
game declares in ``required_capabilities`` (the guide's 设备指令 table), not the SDK's
firmware flags. Privacy-sensitive domains (microphone, camera, recordings, vision, face
tracking), the speech audio channel and ``works.delete`` are deliberately absent.

Pure data: no I/O.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = [
    "ALLOWED_CALLS",
    "FRONT_PAN",
    "FRONT_TILT",
    "JOB_CALLS",
    "KNOWN_CAPABILITIES",
    "KNOWN_EFFECTS",
    "KNOWN_PROFILES",
    "KNOWN_ZONES",
    "PAN_RANGE",
    "TILT_RANGE",
]

ALLOWED_CALLS: MappingProxyType[str, str] = MappingProxyType(
    {
        "lights.set_color": "light",
        "lights.play_effect": "light",
        "lights.off": "light",
        "animation.play": "animation",
        "animation.prefetch": "animation",
        "animation.stop": "animation",
        "behavior.play": "behavior",
        "behavior.stop": "behavior",
        "motion.move_to": "motion",
        "motion.set_target": "motion",
        "motion.play_action": "motion",
        "motion.stop": "motion",
        "expression_runtime.start": "expression.runtime.v3",
        "expression_runtime.update": "expression.runtime.v3",
        "expression_runtime.stop": "expression.runtime.v3",
        "expressions.play_official": "resource.expression.official",
        "audio.play": "audio",
        "works.play": "resource.work.play",
        "works.play_expression": "resource.work.expression.play",
    }
)
"""``"domain.method"`` -> the capability a game must declare to use it."""

KNOWN_CAPABILITIES: frozenset[str] = frozenset(ALLOWED_CALLS.values())
"""Every capability a game can usefully declare; others earn a warning in ``check``."""

JOB_CALLS: frozenset[str] = frozenset(
    {
        "lights.play_effect",
        "animation.play",
        "behavior.play",
        "motion.move_to",
        "motion.play_action",
        "audio.play",
    }
)
"""Calls that return an SDK ``Job``; the output queue waits for them (lights excepted)."""

# Host limits the SDK does not check (robot-sdk.md, "Values seen in callers"): the media
# lab's safe motion envelope and the names the robot's own tools offer.
PAN_RANGE = (30, 150)
TILT_RANGE = (100, 130)
FRONT_PAN = 90
"""Head straight ahead: the middle of the pan range."""
FRONT_TILT = 115
"""Head level: the middle of the tilt range."""
DURATION_RANGE = (100, 5000)
KNOWN_ZONES: frozenset[str] = frozenset({"all", "side", "head", "bottom"})
KNOWN_EFFECTS: frozenset[str] = frozenset({"blink", "breathing", "rainbow", "status_pulse"})
KNOWN_PROFILES: frozenset[str] = frozenset({"ease_in_out", "linear", "ease_in", "ease_out"})
