"""Robot effects built from allowed SDK calls: ``react``, ``gesture``, ``draw``, ``Progress``, ``show``, ``standby``.

The guide's import path (``agentcade.effects``); the code lives in ``agentcade.device.effects``.
"""

from agentcade.device.effects import (
    Drawing as Drawing,
    Progress as Progress,
    draw as draw,
    gesture as gesture,
    kaomoji as kaomoji,
    progress_bar as progress_bar,
    react as react,
    show as show,
    standby as standby,
    stroke_steps as stroke_steps,
)

__all__ = [
    "Drawing",
    "Progress",
    "draw",
    "gesture",
    "kaomoji",
    "progress_bar",
    "react",
    "show",
    "standby",
    "stroke_steps",
]
