"""What the robot did, for people: its screen as an SVG picture, its head and lights in words.

The live view showed ``expression_runtime.update(custom_vector_path='0102060500…')`` and
five ``motion.move_to(…)`` lines where a parent or an author wants to *see* the screen and
read "摇头". ``ScreenReader`` reads one turn's directives in order (the JSON a game sent,
``Directive.to_wire()``) and says, for each, what a person would see: a drawing (step by
step: "画第 3 笔"), the kaomoji, the standby eyes, "摇头"/"点头", "亮绿灯". Pure: no I/O;
the SVG is built from numbers only (nothing of the game's text reaches the markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentcade.core.allowlist import FRONT_PAN, FRONT_TILT
from agentcade.core.errors import VectorError
from agentcade.core.vector import CANVAS, Stroke, decode_vector

__all__ = ["STANDBY_EYES", "ScreenReader", "Shown", "svg_of"]

STANDBY_EYES: tuple[Stroke, ...] = (
    Stroke([(140, 192), (140, 210)], width=20),
    Stroke([(272, 192), (272, 210)], width=20),
)
"""The standby eyes as the robot shows them (the small round eyes of ``effects``)."""

_COLORS = {
    "#00FF00": "绿", "#FF0000": "红", "#0000FF": "蓝", "#FFFF00": "黄", "#FFFFFF": "白",
    "#FFA500": "橙", "#800080": "紫", "#FF00FF": "粉", "#00FFFF": "青",
}  # fmt: skip


@dataclass(frozen=True)
class Shown:
    """One directive as a person sees it: ``words``, and the screen after it (``svg``)."""

    words: str
    svg: str | None = None
    strokes: int | None = None
    """Strokes on the screen when it is a drawing (a drawing step by step counts up)."""
    step: bool = False
    """This drawing is the one before it plus strokes: a step of a drawing being drawn."""

    def to_json(self) -> dict[str, Any]:
        return {"words": self.words, "svg": self.svg, "strokes": self.strokes, "step": self.step}


def svg_of(strokes: Sequence[Stroke]) -> str:
    """The round 412 x 412 screen with ``strokes`` drawn white on black, as SVG markup."""
    half = CANVAS // 2
    parts = [
        f'<svg class="screen" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CANVAS} {CANVAS}" '
        'role="img" aria-label="机器人的屏幕">',
        f'<circle cx="{half}" cy="{half}" r="{half}" fill="#000"/>',
    ]
    for stroke in strokes:
        width = int(stroke.width)
        if len(stroke.points) == 1:
            x, y = (int(v) for v in stroke.points[0])
            parts.append(f'<circle cx="{x}" cy="{y}" r="{max(width // 2, 1)}" fill="#fff"/>')
            continue
        points = " ".join(f"{int(x)},{int(y)}" for x, y in stroke.points)
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="#fff" stroke-width="{width}" '
            'stroke-linecap="round" stroke-linejoin="round"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


class ScreenReader:
    """One turn's robot directives, read in order (each ``read`` may depend on the last)."""

    def __init__(self) -> None:
        self._last: list[Stroke] = []

    def read(self, directive: Mapping[str, Any]) -> Shown | None:
        """What ``directive`` (``{"call", "args", "kwargs"}``) shows; None for the rest."""
        call = directive.get("call")
        args = directive.get("args") or []
        kwargs = directive.get("kwargs") or {}
        if not isinstance(call, str) or not isinstance(args, list) or not isinstance(kwargs, dict):
            return None
        if call == "motion.move_to":
            return Shown(_head(kwargs.get("pan_deg"), kwargs.get("tilt_deg")))
        if call == "lights.set_color":
            color = str(args[0] if args else kwargs.get("color", "")).upper()
            name = _COLORS.get(color)
            return Shown(f"亮{name}灯" if name else f"亮灯（{color}）")
        if call == "lights.off":
            return Shown("关灯")
        if call in ("expression_runtime.start", "expression_runtime.update"):
            return self._screen(args, kwargs)
        if call == "expression_runtime.stop":
            self._last = []
            return Shown("屏幕回到平常的表情")
        return None

    def _screen(self, args: list[Any], kwargs: dict[str, Any]) -> Shown | None:
        path = kwargs.get("custom_vector_path")
        if isinstance(path, str):
            try:
                strokes = decode_vector(path)
            except (VectorError, ValueError):
                return Shown("屏幕上的图案读不出来")
            step = bool(self._last) and len(strokes) > len(self._last) and strokes[: len(self._last)] == self._last
            self._last = strokes
            words = f"画第 {len(strokes)} 笔" if step else f"屏幕上显示一个图案（{len(strokes)} 笔）"
            return Shown(words, svg_of(strokes), strokes=len(strokes), step=step)
        preset = kwargs.get("preset") or (args[0] if args else None)
        if preset == "standby" and kwargs.get("accessory") in (None, "none"):
            self._last = []
            return Shown("回到待机的眼睛", svg_of(STANDBY_EYES))
        return None


def _head(pan: Any, tilt: Any) -> str:
    pan = FRONT_PAN if pan is None else pan
    tilt = FRONT_TILT if tilt is None else tilt
    if pan == FRONT_PAN and tilt == FRONT_TILT:
        return "头转回正前方"
    if tilt == FRONT_TILT:
        return "摇头"
    if pan == FRONT_PAN:
        return "点头"
    return "转头"
