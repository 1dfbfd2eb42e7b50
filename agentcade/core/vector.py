"""Vector drawings for the robot's screen: ``Stroke`` and ``encode_vector``.

The robot draws a ``custom_vector_path`` accessory (robot SDK, robot.py:139-178): a hex
string of ``u8 version=1, u8 stroke_count`` then per stroke ``u8 width, u8 point_count``
and big-endian ``u16 x, u16 y`` points. The device limits are enforced here, at the game
side, so an author sees the mistake when the drawing is built, not when the robot
refuses it:

* at most 12 strokes and 192 points in all, 1..48 points per stroke;
* width 1..48;
* coordinates 0..411 (the canvas is 412 x 412).

Pure data: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentcade.core.errors import VectorError

__all__ = [
    "CANVAS",
    "MAX_POINTS",
    "MAX_STROKES",
    "MAX_STROKE_POINTS",
    "MAX_WIDTH",
    "Stroke",
    "VectorError",
    "decode_vector",
    "encode_vector",
    "star",
]

CANVAS = 412
MAX_COORD = CANVAS - 1
MAX_STROKES = 12
MAX_POINTS = 192
MAX_STROKE_POINTS = 48
MAX_WIDTH = 48
_VERSION = 1


Point = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Stroke:
    """One pen stroke: a polyline through ``points`` drawn ``width`` pixels wide.

    Points are validated when the stroke is made, so a bad drawing fails where it is
    written. A closed shape repeats its first point at the end.
    """

    points: tuple[Point, ...]
    width: int = 6

    def __init__(self, points: Iterable[Sequence[int]], width: int = 6) -> None:
        pts = tuple(_point(p) for p in points)
        if not 1 <= len(pts) <= MAX_STROKE_POINTS:
            raise VectorError(
                f"a stroke has {len(pts)} points; it needs 1..{MAX_STROKE_POINTS}"
            )
        if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= MAX_WIDTH:
            raise VectorError(f"stroke width {width!r} is outside 1..{MAX_WIDTH}")
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "width", width)


def _point(p: Sequence[int]) -> Point:
    if len(p) != 2:
        raise VectorError(f"a point needs two coordinates, got {p!r}")
    x, y = p
    for c in (x, y):
        if isinstance(c, bool) or not isinstance(c, int):
            raise VectorError(f"coordinates must be integers, got {p!r}")
        if not 0 <= c <= MAX_COORD:
            raise VectorError(f"point {p!r} is off the canvas (0..{MAX_COORD})")
    return (x, y)


def encode_vector(strokes: Sequence[Stroke]) -> str:
    """Encode strokes as the SDK's ``custom_vector_path`` hex string.

    Raises:
        VectorError: too many strokes or points in all.
    """
    if len(strokes) > MAX_STROKES:
        raise VectorError(f"a drawing has {len(strokes)} strokes; at most {MAX_STROKES}")
    total = sum(len(s.points) for s in strokes)
    if total > MAX_POINTS:
        raise VectorError(f"a drawing has {total} points; at most {MAX_POINTS} in all")
    out = bytearray((_VERSION, len(strokes)))
    for stroke in strokes:
        out += bytes((stroke.width, len(stroke.points)))
        for x, y in stroke.points:
            out += x.to_bytes(2, "big") + y.to_bytes(2, "big")
    return out.hex()


def decode_vector(path: str) -> list[Stroke]:
    """Decode a ``custom_vector_path`` back into strokes (for the simulated screen).

    Raises:
        VectorError: the hex string is not a valid bounded vector path.
    """
    # bytes.fromhex alone would accept whitespace, which the SDK rejects.
    if not isinstance(path, str) or re.fullmatch(r"(?:[0-9A-Fa-f]{2})+", path) is None:
        raise VectorError("a vector path must be an even-length hex string")
    data = bytes.fromhex(path)
    if len(data) < 2 or data[0] != _VERSION:
        raise VectorError("a vector path starts with version 1 and a stroke count")
    count, offset, strokes = data[1], 2, []
    for _ in range(count):
        if offset + 2 > len(data):
            raise VectorError("a vector path ends inside a stroke header")
        width, n = data[offset], data[offset + 1]
        offset += 2
        end = offset + 4 * n
        if end > len(data):
            raise VectorError("a vector path ends inside a stroke's points")
        pts = [
            (int.from_bytes(data[i : i + 2], "big"), int.from_bytes(data[i + 2 : i + 4], "big"))
            for i in range(offset, end, 4)
        ]
        strokes.append(Stroke(pts, width))
        offset = end
    if offset != len(data):
        raise VectorError("a vector path has trailing bytes")
    encode_vector(strokes)  # the totals
    return strokes


def star(cx: int = 206, cy: int = 206, r: int = 150, *, width: int = 10) -> str:
    """A five-pointed star in one stroke, encoded: the outer and inner points taken in turn
    (inner radius 0.4 r), 11 points so it closes. The riddle template draws it for a right
    answer; the guide shows its code as the example of ``Stroke`` and ``encode_vector``."""
    points = []
    for i in range(11):
        radius = r if i % 2 == 0 else r * 0.4
        angle = math.radians(-90 + 36 * i)
        points.append((round(cx + radius * math.cos(angle)), round(cy + radius * math.sin(angle))))
    return encode_vector([Stroke(points, width=width)])
