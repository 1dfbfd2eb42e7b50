"""The simulated robot's screen, drawn: a few lines of text, an ASCII raster, a PNG.

What the device shows (:class:`~agentcade.sim.state.SimState`) as :func:`describe` (screen,
lights, head, what plays), :func:`render_text` (that, then a vector drawing as ``#`` in a
frame) and :func:`render_png` (the drawing, else the screen's name; needs Pillow).
``SimDevice.describe`` / ``render_text`` / ``render_png`` draw its own state with these.
"""

from __future__ import annotations

import io
import itertools
from pathlib import Path

from agentcade.core.vector import CANVAS, Stroke
from agentcade.sim.state import SimState

__all__ = ["ascii_raster", "describe", "render_png", "render_text"]


def describe(state: SimState) -> str:
    """A few lines: screen, lights, head, what is playing."""
    expr = state.expression
    screen = state.screen
    if screen == "expression":
        screen += f" preset={expr.preset} accessory={expr.accessory}"
        strokes = expr.strokes()
        if strokes:
            points = sum(len(s.points) for s in strokes)
            screen += f" ({len(strokes)} strokes, {points} points)"
    head = f"pan {state.pan} tilt {state.tilt}"
    if state.moving_to:
        head += f" -> {state.moving_to[0]},{state.moving_to[1]}"
    busy = [
        f"{name} {value}"
        for name, value in (
            ("behavior", state.behavior),
            ("action", state.action),
            ("sound", state.sound),
        )
        if value
    ]
    lines = [f"screen: {screen}", f"lights: {state.lights.describe()}", f"head: {head}"]
    if busy:
        lines.append("playing: " + ", ".join(busy))
    return "\n".join(lines)


def render_text(state: SimState, width: int = 40, height: int = 20) -> str:
    """:func:`describe`, then the vector drawing as ASCII (``#``) in a frame, if any."""
    text = describe(state)
    strokes = state.expression.strokes() if state.screen == "expression" else []
    if not strokes:
        return text
    return text + "\n" + ascii_raster(strokes, width, height)


def render_png(state: SimState, path: str | Path | None = None, *, size: int = CANVAS) -> bytes:
    """The screen as a PNG (Pillow): the vector drawing, else the screen's name.

    Returns the PNG bytes; also writes them to ``path`` if given.

    Raises:
        RuntimeError: Pillow is not installed.
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as exc:  # pragma: no cover - a game binary leaves Pillow out
        raise RuntimeError("render_png needs Pillow (pip install pillow)") from exc
    image = Image.new("RGB", (size, size), "black")
    draw = ImageDraw.Draw(image)
    draw.ellipse((0, 0, size - 1, size - 1), outline=(60, 60, 60), width=2)
    scale = size / CANVAS
    strokes = state.expression.strokes() if state.screen == "expression" else []
    for stroke in strokes:
        points = [(x * scale, y * scale) for x, y in stroke.points]
        width = max(1, round(stroke.width * scale))
        if len(points) == 1:
            (x, y), r = points[0], width / 2
            draw.ellipse((x - r, y - r, x + r, y + r), fill="white")
        else:
            draw.line(points, fill="white", width=width, joint="curve")
    if not strokes:
        draw.text((size * 0.3, size * 0.48), state.screen, fill="white")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    data = buffer.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data


def ascii_raster(strokes: list[Stroke], width: int = 40, height: int = 20) -> str:
    """Strokes drawn with ``#`` on a ``width`` x ``height`` grid inside a ``+--+`` frame."""
    grid = [[" "] * width for _ in range(height)]

    def cell(x: int, y: int) -> tuple[int, int]:
        return (min(width - 1, x * width // CANVAS), min(height - 1, y * height // CANVAS))

    for stroke in strokes:
        pts = [cell(x, y) for x, y in stroke.points]
        if len(pts) == 1:
            pts = pts * 2
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            steps = max(abs(x1 - x0), abs(y1 - y0), 1)
            for i in range(steps + 1):
                x = round(x0 + (x1 - x0) * i / steps)
                y = round(y0 + (y1 - y0) * i / steps)
                grid[y][x] = "#"
    border = "+" + "-" * width + "+"
    return "\n".join([border, *("|" + "".join(row) + "|" for row in grid), border])
