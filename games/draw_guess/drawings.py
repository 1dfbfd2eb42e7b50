"""The animal library of 你画我猜: hand-authored line drawings for the robot's screen.

Each ``Animal`` carries its answer, a few short aliases, three spoken hints (vague to
specific, never naming the animal) and its drawing as ``Stroke`` s in drawing order
(body first, then details). The points are computed at import time by the small,
deterministic helpers below (``ellipse``, ``arc``, ``line``, ``poly``, ``zigzag``,
``saw``, ``scallop``, ``spiral``, ``wave``, ``smooth``, ``tube``, ``mirror``), so a drawing stays inside the device limits of
``agentcade.vector``: at most 12 strokes, 192 points in all and 48 per stroke, on a
412 x 412 canvas. Everything is kept inside a circle of radius 190 around (206, 206),
since the screen is round.

Pure data: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentcade.vector import Stroke

__all__ = [
    "ANIMALS",
    "CENTER",
    "SAFE_RADIUS",
    "Animal",
    "arc",
    "dot",
    "ellipse",
    "line",
    "mirror",
    "poly",
    "saw",
    "scallop",
    "smooth",
    "spiral",
    "stroke",
    "tube",
    "wave",
    "zigzag",
]

CENTER = 206
SAFE_RADIUS = 190

P = tuple[float, float]


@dataclass(frozen=True)
class Animal:
    """One 你画我猜 answer and its drawing."""

    answer: str
    aliases: tuple[str, ...]
    hints: tuple[str, ...]
    strokes: tuple[Stroke, ...]


# --- point helpers --------------------------------------------------------------------
# Angles are in degrees on the screen: 0 points right, 90 down, 180 left, 270 (or -90) up.


def ellipse(
    cx: float,
    cy: float,
    rx: float,
    ry: float,
    n: int = 24,
    start: float = 0.0,
    end: float = 360.0,
    rot: float = 0.0,
) -> list[P]:
    """``n`` points on an ellipse from ``start`` to ``end`` degrees, both included.

    A full turn (the default) ends on its first point, so the outline closes. ``rot``
    turns the ellipse clockwise by that many degrees around its centre.
    """
    cr, sr = math.cos(math.radians(rot)), math.sin(math.radians(rot))
    pts = []
    for i in range(n):
        t = math.radians(start + (end - start) * i / (n - 1))
        x, y = rx * math.cos(t), ry * math.sin(t)
        pts.append((cx + x * cr - y * sr, cy + x * sr + y * cr))
    return pts


def arc(cx: float, cy: float, r: float, start: float, end: float, n: int = 8) -> list[P]:
    """``n`` points on a circle from ``start`` to ``end`` degrees."""
    return ellipse(cx, cy, r, r, n, start, end)


def line(x0: float, y0: float, x1: float, y1: float, n: int = 2) -> list[P]:
    """``n`` evenly spaced points from (x0, y0) to (x1, y1)."""
    return [(x0 + (x1 - x0) * i / (n - 1), y0 + (y1 - y0) * i / (n - 1)) for i in range(n)]


def poly(*pts: P, closed: bool = False) -> list[P]:
    """The given points; ``closed`` repeats the first at the end."""
    out = list(pts)
    return [*out, out[0]] if closed else out


def zigzag(
    cx: float,
    cy: float,
    r_in: float,
    r_out: float,
    start: float,
    end: float,
    teeth: int,
    squash: float = 1.0,
) -> list[P]:
    """A saw edge around a centre: ``teeth`` spikes out to ``r_out`` from ``r_in``.

    ``squash`` scales the vertical radius (an elliptic ring).
    """
    pts = []
    for i in range(2 * teeth + 1):
        t = math.radians(start + (end - start) * i / (2 * teeth))
        r = r_out if i % 2 else r_in
        pts.append((cx + r * math.cos(t), cy + r * squash * math.sin(t)))
    return pts


def scallop(
    cx: float,
    cy: float,
    rx: float,
    ry: float,
    bumps: int,
    depth: float,
    per_bump: int = 4,
    start: float = 0.0,
    end: float = 360.0,
) -> list[P]:
    """A cloud edge: an ellipse with ``bumps`` round bulges ``depth`` deep."""
    n = bumps * per_bump
    pts = []
    for i in range(n + 1):
        f = i / n
        t = math.radians(start + (end - start) * f)
        bulge = depth * abs(math.sin(math.pi * bumps * f))
        pts.append((cx + (rx + bulge) * math.cos(t), cy + (ry + bulge) * math.sin(t)))
    return pts


def spiral(
    cx: float, cy: float, r0: float, r1: float, turns: float, n: int, start: float = 0.0
) -> list[P]:
    """A spiral from radius ``r0`` to ``r1`` over ``turns`` clockwise turns."""
    pts = []
    for i in range(n):
        f = i / (n - 1)
        t = math.radians(start + 360 * turns * f)
        r = r0 + (r1 - r0) * f
        pts.append((cx + r * math.cos(t), cy + r * math.sin(t)))
    return pts


def wave(
    x0: float, y0: float, x1: float, y1: float, amp: float, periods: float, n: int
) -> list[P]:
    """A sine wave of ``periods`` periods and ``amp`` height along a straight line."""
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    nx, ny = -dy / length, dx / length
    pts = []
    for i in range(n):
        f = i / (n - 1)
        s = amp * math.sin(2 * math.pi * periods * f)
        pts.append((x0 + dx * f + nx * s, y0 + dy * f + ny * s))
    return pts


def saw(x0: float, y0: float, x1: float, y1: float, teeth: int, depth: float) -> list[P]:
    """A saw edge along a straight line: ``teeth`` spikes ``depth`` to its left side.

    Left of the direction of travel; from left to right on the screen that is up.
    """
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    nx, ny = dy / length, -dx / length
    pts = []
    for i in range(2 * teeth + 1):
        f = i / (2 * teeth)
        d = depth if i % 2 else 0.0
        pts.append((x0 + dx * f + nx * d, y0 + dy * f + ny * d))
    return pts


def smooth(pts: Sequence[P], per_segment: int = 3) -> list[P]:
    """A Catmull-Rom curve through ``pts``: ``per_segment`` points per span, ends kept."""
    out: list[P] = []
    last = len(pts) - 1
    for i in range(last):
        p0, p1, p2, p3 = pts[max(i - 1, 0)], pts[i], pts[i + 1], pts[min(i + 2, last)]
        for k in range(per_segment):
            t = k / per_segment
            t2, t3 = t * t, t * t * t
            x, y = (
                0.5
                * (
                    2 * p1[j]
                    + (p2[j] - p0[j]) * t
                    + (2 * p0[j] - 5 * p1[j] + 4 * p2[j] - p3[j]) * t2
                    + (3 * p1[j] - p0[j] - 3 * p2[j] + p3[j]) * t3
                )
                for j in (0, 1)
            )
            out.append((x, y))
    return [*out, pts[last]]


def tube(center: Sequence[P], half: Sequence[float]) -> list[P]:
    """A closed outline around a centre line, ``half[i]`` wide on each side at point i.

    Down the left side of the line, round its last point, back up the right side.
    """
    left, right = [], []
    for i, (x, y) in enumerate(center):
        (ax, ay), (bx, by) = center[max(0, i - 1)], center[min(len(center) - 1, i + 1)]
        dx, dy = bx - ax, by - ay
        length = math.hypot(dx, dy) or 1.0
        nx, ny = -dy / length * half[i], dx / length * half[i]
        left.append((x + nx, y + ny))
        right.append((x - nx, y - ny))
    return [*left, *right[::-1], left[0]]


def mirror(pts: Iterable[P]) -> list[P]:
    """The points reflected in the vertical centre line (left side to right side)."""
    return [(2 * CENTER - x, y) for x, y in pts]


def stroke(*parts: Iterable[P], w: int = 7) -> Stroke:
    """One stroke through the concatenated point lists, rounded to the pixel grid."""
    pts: list[tuple[int, int]] = []
    for part in parts:
        for x, y in part:
            p = (round(x), round(y))
            if not pts or pts[-1] != p:
                pts.append(p)
    return Stroke(pts, w)


def dot(x: float, y: float, w: int = 16, dx: float = 1, dy: float = 0) -> Stroke:
    """A filled blob: a very short stroke; ``dx``/``dy`` stretch it into a pill."""
    return stroke([(x - dx, y - dy), (x + dx, y + dy)], w=w)


def _both(pts: Sequence[P], w: int = 7) -> tuple[Stroke, Stroke]:
    """A stroke on the left and its mirror image on the right."""
    return stroke(pts, w=w), stroke(mirror(pts), w=w)


def _dots(*xy: P, w: int = 16) -> tuple[Stroke, ...]:
    return tuple(dot(x, y, w) for x, y in xy)


def _fan(hub: P, *tips: P) -> list[P]:
    """Lines from ``hub`` out to every tip and back (whiskers, a fountain)."""
    pts: list[P] = []
    for tip in tips:
        pts += [hub, tip]
    return [*pts, hub]


# --- the drawings -----------------------------------------------------------------------


def _cat() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(206, 228, 125, 105, 30), w=8),
        *_both(poly((110, 162), (116, 62), (184, 125)), w=8),
        dot(160, 205, 20, 0, 8),
        dot(252, 205, 20, 0, 8),
        stroke(poly((193, 240), (219, 240), (206, 254), closed=True), w=7),
        stroke(poly((178, 264), (192, 274), (206, 262), (206, 254), (206, 262), (220, 274), (234, 264)), w=6),
        *_both(_fan((150, 255), (62, 225), (56, 258), (66, 292)), w=5),
    )


def _dog() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(206, 210, 100, 112, 28), w=8),
        *_both(ellipse(100, 215, 32, 82, 18, rot=12), w=8),
        *_dots((168, 185), (244, 185), w=20),
        dot(206, 240, 28, 10, 0),
        stroke(poly((172, 266), (188, 280), (206, 268), (206, 250), (206, 268), (224, 280), (240, 266)), w=6),
        stroke(poly((193, 279)), ellipse(206, 292, 13, 18, 9, 180, 0), poly((219, 279)), w=6),
    )


def _tiger() -> tuple[Stroke, ...]:
    wang = poly(
        (182, 126), (230, 126), (206, 126), (206, 174), (180, 174), (232, 174),
        (206, 174), (206, 150), (186, 150), (226, 150),
    )
    stripes = poly((84, 176), (128, 194), (80, 212), (78, 232), (124, 244), (86, 266))
    return (
        stroke(ellipse(206, 218, 130, 112, 30), w=8),
        *_both(arc(116, 128, 36, 110, 350, 12), w=8),
        stroke(wang, w=8),
        *_dots((160, 205), (252, 205), w=20),
        stroke(poly((192, 240), (220, 240), (206, 254), closed=True), w=7),
        stroke(poly((180, 268), (193, 278), (206, 266), (206, 254), (206, 266), (219, 278), (232, 268)), w=6),
        *_both(stripes, w=9),
    )


def _lion() -> tuple[Stroke, ...]:
    return (
        stroke(zigzag(206, 206, 135, 175, 0, 360, 20), w=7),
        stroke(ellipse(206, 214, 95, 90, 26), w=8),
        *_both(arc(146, 140, 22, 120, 350, 9), w=7),
        *_dots((168, 200), (244, 200), w=20),
        stroke(poly((192, 232), (220, 232), (206, 248), closed=True), w=8),
        stroke(poly((178, 262), (192, 274), (206, 262), (206, 248), (206, 262), (220, 274), (234, 262)), w=6),
    )


def _elephant() -> tuple[Stroke, ...]:
    legs = poly((170, 282), (170, 340), (206, 340), (206, 292), (286, 292), (286, 340), (322, 340), (322, 276))
    head = (
        arc(132, 176, 58, -60, -180, 8)
        + poly((72, 220), (70, 270), (78, 306), (96, 326), (114, 322), (112, 308), (98, 294),
               (94, 258), (100, 232), (124, 232), (160, 228))
    )
    return (
        stroke(ellipse(256, 215, 108, 80, 28, -165, 165), w=8),
        stroke(legs, w=8),
        stroke(head, w=8),
        stroke(ellipse(184, 186, 44, 62, 20), w=8),
        dot(112, 164, 16),
        stroke(poly((120, 236), (114, 256), (138, 246)), w=7),
        stroke(poly((362, 222), (376, 256)), w=7),
    )


def _giraffe() -> tuple[Stroke, ...]:
    outline = poly(
        (104, 82), (116, 62), (142, 52), (166, 54), (180, 70), (196, 120), (210, 170),
        (222, 210), (262, 206), (302, 214), (320, 238), (314, 272), (262, 284), (200, 284),
        (172, 270), (162, 244), (158, 200), (148, 150), (140, 104), (124, 94), (106, 92),
        closed=True,
    )
    return (
        stroke(outline, w=8),
        stroke(poly((176, 280), (172, 368), (172, 368)), poly((172, 368), (178, 284), (204, 284), (204, 368)), w=9),
        stroke(poly((276, 282), (278, 366), (278, 366), (282, 282), (306, 270), (302, 364)), w=9),
        stroke(poly((146, 34), (150, 54), (162, 54), (166, 34)), w=7),
        dot(140, 72, 14),
        stroke(poly((318, 236), (338, 280)), w=6),
        *_dots((160, 120), (178, 170), (190, 226), (240, 236), (290, 244), (244, 268), w=20),
    )


def _panda() -> tuple[Stroke, ...]:
    return (
        *_dots((122, 112), (290, 112), w=48),
        stroke(ellipse(206, 222, 130, 112, 30), w=8),
        dot(156, 212, 38, 8, -14),
        dot(256, 212, 38, -8, -14),
        dot(206, 256, 20, 9, 0),
        stroke(poly((180, 278), (193, 288), (206, 278), (206, 262), (206, 278), (219, 288), (232, 278)), w=6),
    )


def _monkey() -> tuple[Stroke, ...]:
    face = (
        arc(168, 192, 42, -40, -200, 12)
        + ellipse(206, 256, 80, 50, 14, 180, 0)
        + arc(244, 192, 42, 20, -140, 12)
    )
    return (
        *_both(ellipse(90, 205, 38, 40, 16), w=8),
        stroke(ellipse(206, 205, 114, 110, 30), w=8),
        stroke(face, [face[0]], w=7),
        *_dots((170, 196), (242, 196), w=20),
        *_dots((198, 238), (214, 238), w=9),
        stroke(ellipse(206, 262, 40, 22, 9, 20, 160), w=6),
        stroke(poly((190, 100), (198, 80), (206, 98), (214, 80), (222, 100)), w=6),
    )


def _rabbit() -> tuple[Stroke, ...]:
    return (
        *_both(ellipse(164, 106, 26, 70, 20, rot=-8), w=8),
        *_both(poly((163, 68), (161, 140)), w=6),
        stroke(ellipse(206, 262, 104, 88, 28), w=8),
        *_dots((168, 246), (244, 246), w=20),
        stroke(poly((196, 274), (216, 274), (206, 284), closed=True), w=7),
        stroke(poly((190, 302), (206, 292), (206, 284), (206, 292), (222, 302)), w=6),
        *_both(_fan((160, 284), (80, 264), (76, 292), (84, 318)), w=5),
    )


def _horse_outline() -> list[P]:
    return poly(
        (62, 150), (66, 128), (96, 92), (110, 80), (116, 56), (128, 80), (142, 88),
        (166, 118), (192, 156), (212, 170), (262, 172), (312, 168), (336, 188), (338, 222),
        (324, 252), (322, 300), (324, 344), (306, 344), (304, 300), (296, 266),
        (250, 266), (200, 264), (192, 290), (194, 350), (176, 350), (174, 292),
        (166, 256), (160, 228), (140, 192), (120, 166), (104, 166), (76, 166),
        closed=True,
    )


def _zebra() -> tuple[Stroke, ...]:
    stripes = (
        poly((150, 112), (132, 140)),
        poly((172, 142), (144, 174)),
        poly((214, 174), (204, 226)),
        poly((248, 174), (240, 262)),
        poly((282, 172), (276, 262)),
        poly((314, 172), (330, 210)),
        poly((176, 300), (192, 306)),
        poly((306, 300), (322, 306)),
    )
    return (
        stroke(_horse_outline(), w=8),
        stroke(zigzag(68, 200, 118, 134, -66, -30, 6), w=7),
        dot(100, 118, 14),
        stroke(poly((336, 196), (360, 232), (362, 270)), w=7),
        *(stroke(s, w=12) for s in stripes),
    )


def _horse() -> tuple[Stroke, ...]:
    mane = poly((128, 78), (120, 110), (146, 98), (140, 136), (168, 122), (164, 160), (196, 154))
    tail = _fan((338, 194), (356, 248), (362, 292), (340, 312))
    return (
        stroke(_horse_outline(), w=8),
        stroke(mane, w=8),
        stroke(tail, [(340, 312), (350, 280), (338, 194)], w=8),
        dot(100, 118, 14),
        dot(74, 146, 8),
        stroke(poly((212, 264), (218, 340), (232, 340), (236, 264)), w=7),
        stroke(poly((282, 266), (282, 336), (296, 336), (298, 280)), w=7),
    )


def _camel() -> tuple[Stroke, ...]:
    outline = poly(
        (55, 125), (70, 100), (100, 95), (118, 105), (135, 128), (150, 165), (172, 178),
        (192, 140), (215, 112), (240, 134), (256, 160), (276, 126), (296, 112), (318, 134),
        (334, 168), (340, 200), (334, 228), (328, 262), (326, 334), (312, 334), (310, 262),
        (290, 250), (220, 250), (202, 256), (202, 336), (188, 336), (186, 258), (170, 236),
        (150, 216), (124, 176), (110, 142), (94, 134), (62, 136),
        closed=True,
    )
    return (
        stroke(outline, w=8),
        stroke(poly((222, 250), (228, 330), (240, 330), (242, 252)), w=7),
        stroke(poly((286, 250), (290, 326), (302, 326), (304, 256)), w=7),
        dot(90, 110, 14),
        stroke(poly((338, 200), (356, 240), (352, 262)), w=6),
        stroke(poly((58, 128), (68, 128)), w=6),
    )


def _penguin() -> tuple[Stroke, ...]:
    lobe = arc(176, 148, 32, -60, -200, 9)
    belly = lobe + ellipse(206, 245, 85, 100, 16, 200, -20) + mirror(lobe)[::-1]
    return (
        stroke(ellipse(206, 206, 112, 150, 32), w=9),
        stroke(belly, [belly[0]], w=6),
        *_dots((178, 146), (234, 146), w=16),
        stroke(poly((190, 168), (222, 168), (206, 190), closed=True), w=8),
        *_both(poly((98, 180), (60, 250), (100, 266)), w=8),
        *_both([(160, 362), (184, 362)], w=20),
    )


def _dolphin() -> tuple[Stroke, ...]:
    cx, cy, r = 206, 312, 150

    def at(angle: float, radius: float) -> P:
        return (cx + radius * math.cos(math.radians(angle)), cy + radius * math.sin(math.radians(angle)))

    angles = [205 + 130 * i / 13 for i in range(14)]
    body = tube([at(a, r) for a in angles], [3, 10, 20, 27, 31, 33, 32, 30, 26, 22, 17, 12, 8, 6])
    tx, ty = at(335, r)
    t = math.radians(335)
    d, n = (-math.sin(t), math.cos(t)), (math.cos(t), math.sin(t))
    flukes = [
        (tx + n[0] * 6, ty + n[1] * 6),
        (tx + n[0] * 34 + d[0] * 18, ty + n[1] * 34 + d[1] * 18),
        (tx + d[0] * 8, ty + d[1] * 8),
        (tx - n[0] * 34 + d[0] * 18, ty - n[1] * 34 + d[1] * 18),
        (tx - n[0] * 6, ty - n[1] * 6),
    ]
    return (
        stroke(body, w=8),
        stroke([at(252, r + 30), at(268, r + 66), at(284, r + 28)], w=8),
        stroke(flukes, w=8),
        stroke([at(232, r - 24), at(232, r - 62), at(248, r - 28)], w=7),
        dot(*at(222, r + 4), w=14),
        stroke([at(208, r - 3), at(220, r - 10)], w=5),
        stroke(wave(86, 344, 326, 344, 7, 3, 22), w=6),
    )


def _whale() -> tuple[Stroke, ...]:
    body = (
        ellipse(170, 230, 120, 88, 18, 180, 300)
        + poly((250, 150), (300, 176), (332, 186), (350, 160), (374, 130), (380, 154), (368, 186),
               (388, 194), (368, 206), (340, 214), (300, 262), (250, 304))
        + ellipse(170, 230, 120, 88, 10, 60, 180)
    )
    spout = poly((150, 140), (150, 104)) + _fan((150, 104), (112, 72), (188, 72), (150, 58))
    return (
        stroke(body, [body[0]], w=8),
        stroke(spout, w=7),
        dot(96, 224, 16),
        stroke(ellipse(130, 248, 80, 28, 10, 30, 160), w=6),
        stroke(wave(96, 340, 316, 340, 7, 3, 22), w=6),
    )


def _butterfly() -> tuple[Stroke, ...]:
    wing = (
        poly((200, 196))
        + ellipse(130, 140, 78, 62, 16, -20, -220, rot=-20)
        + poly((200, 200))
        + ellipse(150, 278, 56, 50, 14, -40, 160, rot=20)
        + poly((200, 210))
    )
    return (
        stroke(poly((206, 150), (206, 310)), w=16),
        *_both(wing, w=8),
        *_both(poly((200, 150), (176, 96), (160, 86)), w=6),
        *_both(ellipse(130, 150, 22, 18, 10), w=6),
        *_dots((152, 276), (260, 276), w=22),
    )


def _turtle() -> tuple[Stroke, ...]:
    shell = ellipse(222, 250, 130, 120, 22, 180, 360)
    pattern = poly(
        (176, 250), (188, 186), (256, 186), (268, 250), (176, 250), (188, 186),
        (146, 170), (188, 186), (222, 132), (256, 186), (298, 170),
    )
    return (
        stroke(shell, [shell[0]], w=9),
        stroke(poly((92, 250), (352, 250)), w=9),
        stroke(pattern, w=7),
        stroke(poly((96, 236), (68, 234)), ellipse(62, 212, 30, 24, 14, 90, 330), poly((86, 206), (106, 212)), w=8),
        dot(56, 206, 12),
        stroke(poly((116, 252), (112, 292), (146, 292), (148, 252)), w=8),
        stroke(poly((286, 252), (288, 292), (322, 292), (322, 252)), w=8),
        stroke(poly((352, 244), (374, 258)), w=8),
    )


def _snail() -> tuple[Stroke, ...]:
    body = poly((346, 322), (150, 322), (104, 306), (84, 264), (88, 228), (110, 220), (124, 250), (140, 300))
    return (
        stroke(body, w=9),
        stroke(spiral(236, 226, 4, 94, 2.25, 44, 0), w=9),
        stroke(poly((98, 230), (74, 160)), w=6),
        stroke(poly((114, 226), (122, 156)), w=6),
        *_dots((74, 156), (122, 152), w=18),
        dot(100, 252, 10),
        stroke(arc(98, 274, 12, 30, 150, 6), w=5),
    )


def _peacock() -> tuple[Stroke, ...]:
    angles = [190 + 20 * k for k in range(9)]

    def at(angle: float, radius: float) -> P:
        return (206 + radius * math.cos(math.radians(angle)), 250 + radius * math.sin(math.radians(angle)))

    spokes: list[P] = []
    for a in angles:
        spokes += [at(a, 78), at(a, 150 if a != 270 else 112), at(a, 78)]
    eyes = [at(angles[k], 146) for k in (0, 2, 4, 6, 8)]
    neck = poly((194, 262), (194, 196)) + arc(206, 180, 20, 150, 390, 12) + poly((218, 196), (220, 262))
    return (
        stroke(ellipse(206, 250, 172, 172, 22, 186, 354), w=7),
        stroke(spokes, w=5),
        *_dots(*eyes, w=34),
        stroke(ellipse(206, 306, 42, 56, 18), w=8),
        stroke(neck, w=8),
        dot(200, 176, 10),
        stroke(poly((188, 174), (170, 182), (188, 188)), w=6),
        stroke(_fan((206, 160), (190, 130), (206, 124), (222, 130)), w=5),
    )


def _kangaroo() -> tuple[Stroke, ...]:
    outline = poly(
        (92, 116), (104, 100), (130, 90), (150, 86), (158, 80), (166, 36), (180, 84), (186, 92),
        (196, 118), (232, 160), (268, 210), (294, 262), (316, 296), (338, 318), (344, 330),
        (312, 328), (284, 318), (270, 334), (262, 346), (142, 350), (136, 340), (200, 332),
        (220, 324), (214, 300), (190, 278), (172, 242), (162, 198), (160, 160), (150, 136),
        (126, 128), (100, 126),
        closed=True,
    )
    return (
        stroke(outline, w=8),
        stroke(poly((174, 88), (188, 44), (196, 98)), w=7),
        stroke(poly((166, 190), (138, 216), (126, 210)), w=7),
        stroke(arc(252, 292, 46, 200, 320, 8), w=6),
        stroke(poly((174, 244), (190, 270), (224, 280)), w=6),
        stroke(arc(194, 244, 15, 150, 390, 10), w=6),
        stroke(poly((200, 230), (204, 212), (210, 234)), w=5),
        dot(132, 104, 14),
        dot(96, 116, 10),
        dot(192, 242, 8),
    )


def _hedgehog() -> tuple[Stroke, ...]:
    body = zigzag(226, 250, 120, 150, 198, 360, 13, squash=0.75) + poly(
        (340, 270), (300, 292), (150, 292), (102, 280), (64, 262), (80, 244),
    )
    return (
        stroke(body, [body[0]], w=7),
        stroke(ellipse(150, 262, 50, 46, 10, 200, 340), w=6),
        dot(118, 238, 14),
        dot(62, 260, 16),
        stroke(poly((160, 292), (160, 308), (178, 308)), w=8),
        stroke(poly((280, 292), (280, 308), (298, 308)), w=8),
        stroke(arc(104, 268, 14, 30, 120, 5), w=5),
    )


def _squirrel() -> tuple[Stroke, ...]:
    center = smooth([(250, 328), (312, 300), (344, 236), (340, 160), (300, 108), (250, 98), (228, 124), (240, 152)], 2)
    half = [14, 20, 28, 33, 37, 39, 40, 40, 40, 38, 34, 30, 24, 18, 10]
    return (
        stroke(tube(center, half), w=7),
        stroke(ellipse(200, 272, 56, 70, 22), w=8),
        stroke(ellipse(162, 180, 48, 42, 22), w=8),
        stroke(poly((170, 142), (184, 100), (198, 150)), w=7),
        dot(150, 170, 14),
        dot(116, 188, 10),
        stroke(ellipse(140, 240, 18, 20, 12), poly((128, 224), (152, 224)), w=7),
        stroke(poly((182, 228), (150, 240)), w=7),
        stroke(poly((180, 340), (224, 342)), w=9),
    )


def _snake() -> tuple[Stroke, ...]:
    n = 19
    center = [(368 - 218 * f, 236 - 48 * math.sin(2 * math.pi * 1.0 * f + 0.5)) for f in (i / (n - 1) for i in range(n))]
    half = [2 + 16 * (i / (n - 1)) ** 0.5 for i in range(n)]
    body = tube(center, half)
    hx, hy = center[-1]
    return (
        stroke(body[:n], ellipse(hx - 26, hy - 4, 42, 30, 9, 60, 300)[::-1], body[n:], w=7),
        dot(hx - 36, hy - 14, 14),
        stroke(poly((hx - 68, hy + 2), (hx - 92, hy + 2), (hx - 104, hy - 10), (hx - 92, hy + 2), (hx - 104, hy + 14)), w=5),
        *_dots(center[5], center[9], center[13], w=12),
    )


def _duck() -> tuple[Stroke, ...]:
    body = poly(
        (150, 214), (132, 256), (152, 296), (216, 312), (296, 302), (336, 264), (350, 210),
        (318, 234), (268, 230), (222, 228), (208, 206),
    )
    return (
        stroke(body, w=8),
        stroke(ellipse(168, 168, 50, 48, 22), w=8),
        stroke(poly((124, 160), (80, 160), (66, 172), (78, 188), (126, 184)), w=8),
        dot(166, 152, 16),
        stroke(ellipse(250, 258, 56, 30, 12, 180, 20), w=7),
        stroke(wave(84, 332, 330, 332, 7, 3.5, 26), w=7),
    )


def _chicken() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(220, 240, 100, 82, 26, 210, 510)[:-1], poly((130, 196)), w=8),
        stroke(poly((306, 196), (340, 130), (330, 180), (366, 140), (348, 196), (372, 172), (318, 230)), w=7),
        stroke(ellipse(138, 160, 44, 44, 22), w=8),
        stroke(poly((112, 124)) + arc(112, 112, 12, 150, 300, 4) + arc(132, 104, 13, 210, 360, 5) + arc(152, 112, 12, 240, 390, 4) + poly((160, 126)), w=7),
        stroke(poly((96, 150), (66, 162), (96, 172)), w=7),
        stroke(ellipse(100, 186, 9, 14, 10), w=6),
        dot(132, 150, 14),
        stroke(ellipse(222, 238, 48, 28, 10, 180, 20), w=6),
        stroke(poly((200, 320), (198, 356), (180, 366), (198, 356), (206, 370), (198, 356), (214, 364)), w=7),
        stroke(poly((250, 318), (252, 356), (234, 366), (252, 356), (260, 370), (252, 356), (268, 364)), w=7),
    )


def _pig() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(206, 218, 128, 110, 30), w=8),
        *_both(poly((112, 150), (102, 78), (170, 118)), w=8),
        stroke(ellipse(206, 250, 50, 34, 18), w=8),
        dot(190, 250, 12, 0, 7),
        dot(222, 250, 12, 0, 7),
        *_dots((150, 196), (262, 196), w=20),
        stroke(ellipse(206, 300, 26, 12, 8, 20, 160), w=6),
    )


def _cow() -> tuple[Stroke, ...]:
    horn = tube([(146, 124), (116, 112), (98, 90), (98, 62)], [11, 9, 6, 2])
    return (
        stroke(ellipse(206, 192, 92, 102, 26, 118, 422), w=8),
        stroke(ellipse(206, 282, 86, 52, 22), w=8),
        *_both(horn, w=6),
        *_both(ellipse(92, 172, 34, 15, 12, rot=18), w=7),
        *_dots((176, 276), (236, 276), w=16),
        *_dots((168, 190), (244, 190), w=18),
        stroke(ellipse(244, 132, 30, 24, 12), w=10),
    )


def _sheep() -> tuple[Stroke, ...]:
    return (
        stroke(scallop(246, 210, 100, 70, 11, 18), w=7),
        stroke(poly((190, 282), (190, 342), (204, 342), (204, 292), (286, 292), (286, 338), (300, 338), (300, 278)), w=8),
        stroke(ellipse(104, 214, 34, 50, 22, rot=25), w=8),
        stroke(scallop(118, 168, 30, 14, 4, 8, 3, 180, 360), w=6),
        stroke(poly((132, 196), (160, 176), (150, 204)), w=7),
        dot(100, 204, 14),
        stroke(ellipse(82, 250, 9, 6, 6, 20, 160), w=5),
    )


def _mouse() -> tuple[Stroke, ...]:
    body = poly((70, 252)) + ellipse(190, 244, 106, 70, 24, 200, 160 + 360) + poly((70, 252))
    return (
        stroke(body, w=8),
        stroke(ellipse(160, 168, 42, 44, 20), w=8),
        stroke(ellipse(160, 170, 22, 24, 12), w=5),
        stroke(poly((294, 256), (330, 272), (350, 300), (342, 328), (312, 334), (296, 318), (310, 306)), w=6),
        dot(116, 226, 14),
        dot(70, 252, 14),
        stroke(_fan((96, 252), (70, 218), (52, 246), (62, 282)), w=4),
        stroke(poly((140, 312), (160, 318)), w=8),
        stroke(poly((236, 312), (256, 318)), w=8),
    )


def _frog() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(206, 222, 142, 100, 30), w=8),
        *_both(ellipse(140, 126, 42, 40, 18), w=8),
        *_dots((144, 128), (268, 128), w=26),
        stroke(ellipse(206, 228, 102, 52, 16, 20, 160), w=7),
        *_dots((190, 196), (222, 196), w=8),
        *_both(poly((130, 322), (112, 346), (130, 342), (140, 352), (150, 340), (168, 348), (156, 322)), w=7),
    )


def _crab() -> tuple[Stroke, ...]:
    claw = poly((80, 118)) + arc(80, 126, 36, -60, 240, 14) + poly((80, 118))
    legs = poly(
        (112, 240), (64, 228), (50, 258), (64, 228), (112, 240), (116, 262), (72, 270),
        (62, 300), (72, 270), (116, 262), (130, 282), (96, 300), (92, 330),
    )
    return (
        stroke(ellipse(206, 240, 100, 64, 26), w=8),
        *_both(poly((122, 216), (96, 190), (84, 162)), w=9),
        *_both(claw, w=8),
        *_both(legs, w=7),
        *_both(poly((184, 178), (180, 140)), w=6),
        *_dots((180, 134), (232, 134), w=20),
        stroke(ellipse(206, 246, 30, 16, 8, 20, 160), w=6),
    )


def _octopus() -> tuple[Stroke, ...]:
    tentacles = []
    for i in range(8):
        x0 = 128 + i * (156 / 7)
        side = -1 if i < 4 else 1
        spread = (i - 3.5) * 11
        pts = []
        for k in range(7):
            f = k / 6
            pts.append((x0 + spread * f + 9 * math.sin(2 * math.pi * f), 234 + 90 * f))
        tx, ty = pts[-1]
        pts += [(tx + side * 10, ty + 10), (tx + side * 19, ty + 3), (tx + side * 16, ty - 7)]
        tentacles.append(stroke(pts, w=8))
    return (
        stroke(ellipse(206, 170, 100, 98, 24, 150, 390), w=8),
        *tentacles,
        *_dots((170, 170), (242, 170), w=20),
        stroke(ellipse(206, 202, 22, 12, 8, 20, 160), w=6),
    )


def _crocodile() -> tuple[Stroke, ...]:
    def tall(pts: Iterable[P]) -> list[P]:
        return [(x, 216 + (y - 216) * 1.5) for x, y in pts]

    outline = (
        poly((38, 204), (120, 194), (132, 174), (158, 170), (172, 188))
        + saw(178, 188, 318, 198, 7, 14)
        + poly((378, 218), (320, 232), (300, 244), (304, 268), (278, 268), (268, 248))
        + poly((200, 250), (190, 268), (164, 268), (160, 246), (124, 238), (44, 228), (38, 204))
    )
    return (
        stroke(tall(outline), w=8),
        stroke(tall(poly((40, 214), *saw(50, 214, 150, 216, 6, -8), (164, 214))), w=5),
        dot(148, 176, 14),
        dot(50, 200, 8),
    )


def _hippo() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(206, 190, 96, 96, 20, 160, 380), w=8),
        *_both(ellipse(128, 106, 18, 20, 10), w=7),
        stroke(ellipse(206, 262, 138, 84, 30), w=8),
        *_dots((168, 150), (244, 150), w=18),
        dot(160, 232, 18, 6, 4),
        dot(252, 232, 18, -6, 4),
        stroke(ellipse(206, 268, 96, 44, 14, 20, 160), w=7),
        *_both(poly((170, 308), (170, 326), (184, 324), (184, 306)), w=6),
    )


def _rhino() -> tuple[Stroke, ...]:
    head = poly(
        (192, 162), (164, 178), (156, 180), (150, 154), (140, 186), (128, 192),
        (110, 164), (90, 126), (88, 156), (92, 194), (84, 212), (68, 226), (64, 248),
        (80, 264), (130, 272), (176, 266),
    )
    return (
        stroke(ellipse(252, 222, 114, 80, 28, -160, 165), w=8),
        stroke(poly((172, 284), (172, 340), (206, 340), (206, 296), (290, 296), (290, 340), (324, 340), (324, 280)), w=8),
        stroke(head, w=8),
        stroke(poly((186, 168), (194, 132), (208, 166)), w=7),
        dot(140, 218, 14),
        stroke(poly((364, 220), (378, 252)), w=6),
    )


def _fox() -> tuple[Stroke, ...]:
    half = poly(
        (206, 316), (150, 268), (84, 236), (100, 206), (100, 156), (110, 130), (100, 60),
        (170, 108), (206, 104),
    )
    return (
        stroke(half, mirror(half)[::-1], w=8),
        *_both(poly((116, 118), (110, 78), (150, 108)), w=6),
        *_both(poly((100, 214), (150, 224), (190, 290)), w=6),
        dot(206, 306, 22, 6, 0),
        dot(162, 188, 16, 6, -4),
        dot(250, 188, 16, -6, -4),
    )


def _parrot() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(226, 230, 54, 92, 24, rot=-18), w=8),
        stroke(poly((250, 306), (272, 372), (234, 318)), poly((248, 312), (254, 372), (224, 318)), w=7),
        stroke(ellipse(184, 126, 48, 46, 22), w=8),
        stroke(poly((140, 108), (112, 110), (98, 136), (108, 168), (118, 146), (140, 142)), w=8),
        stroke(poly((140, 146), (128, 156), (142, 160)), w=6),
        stroke(ellipse(168, 116, 14, 14, 10), w=5),
        dot(168, 116, 10),
        stroke(ellipse(240, 230, 32, 62, 14, 250, 470, rot=-18), w=6),
        stroke(poly((80, 312), (330, 302)), w=12),
        stroke(poly((196, 292), (196, 312)), poly((214, 294), (216, 312)), w=6),
    )


def _owl() -> tuple[Stroke, ...]:
    body = poly((120, 50), (164, 104), (206, 112), (248, 104), (292, 50)) + ellipse(206, 220, 102, 130, 26, -25, 205) + poly((120, 50))
    return (
        stroke(body, w=8),
        *_both(ellipse(164, 170, 38, 38, 20), w=7),
        *_dots((166, 172), (246, 172), w=24),
        stroke(poly((196, 200), (216, 200), (206, 222), closed=True), w=7),
        *_both(ellipse(124, 250, 20, 60, 14, 270, 450), w=7),
        stroke(saw(170, 270, 242, 270, 4, -14), w=5),
        stroke(poly((100, 346), (312, 346)), w=12),
        stroke(poly((176, 336), (180, 350)), poly((190, 350), (194, 336)), w=6),
        stroke(poly((222, 336), (226, 350)), poly((236, 350), (240, 336)), w=6),
    )


def _bee() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(222, 240, 100, 70, 28), w=8),
        stroke(poly((194, 182), (194, 298)), w=22),
        stroke(poly((246, 180), (246, 300)), w=22),
        stroke(poly((318, 226), (350, 242), (318, 258)), w=7),
        stroke(ellipse(104, 236, 42, 42, 20), w=8),
        dot(92, 226, 12),
        stroke(ellipse(100, 244, 18, 10, 7, 20, 160), w=5),
        stroke(poly((84, 136), (98, 196), (112, 196), (126, 136)), w=6),
        *_dots((84, 132), (126, 132), w=14),
        stroke(ellipse(196, 130, 30, 52, 16, rot=-20), w=6),
        stroke(ellipse(256, 134, 30, 52, 16, rot=20), w=6),
    )


def _fish() -> tuple[Stroke, ...]:
    body = (
        ellipse(196, 210, 130, 82, 18, 180, 340)
        + poly((372, 142), (350, 210), (372, 278))
        + ellipse(196, 210, 130, 82, 14, 20, 180)
    )
    return (
        stroke(body, [body[0]], w=8),
        dot(120, 194, 18),
        stroke(ellipse(120, 210, 50, 60, 8, -50, 50), w=6),
        stroke(poly((170, 130), (210, 96), (260, 136)), w=7),
        stroke(ellipse(212, 226, 24, 22, 6, -70, 70), ellipse(250, 226, 24, 22, 6, 70, -70), w=5),
        stroke(ellipse(40, 170, 12, 12, 10), w=5),
        stroke(ellipse(58, 124, 16, 16, 10), w=5),
    )


def _spider() -> tuple[Stroke, ...]:
    legs = poly(
        (160, 196), (110, 130), (70, 150), (110, 130), (160, 196), (152, 214), (92, 186), (50, 216),
        (92, 186), (152, 214), (152, 234), (92, 250), (60, 300), (92, 250), (152, 234), (162, 252),
        (116, 300), (104, 346),
    )
    return (
        stroke(poly((206, 24), (206, 152)), w=5),
        stroke(ellipse(206, 220, 58, 66, 26), w=8),
        *_both(legs, w=7),
        *_dots((186, 200), (226, 200), w=16),
        stroke(ellipse(206, 232, 22, 14, 8, 20, 160), w=6),
    )


def _ladybug() -> tuple[Stroke, ...]:
    return (
        stroke(ellipse(206, 232, 118, 112, 30), w=8),
        stroke(ellipse(206, 132, 52, 40, 16, 180, 360), w=8),
        stroke(poly((206, 124), (206, 342)), w=7),
        *_both(poly((186, 98), (164, 62), (150, 60)), w=6),
        *_dots((150, 190), (262, 190), (136, 260), (276, 260), (176, 310), (236, 310), w=34),
    )


def _starfish() -> tuple[Stroke, ...]:
    star = []
    for k in range(11):
        a = -90 + 36 * k
        r = 168 if k % 2 == 0 else 72
        star.append((206 + r * math.cos(math.radians(a)), 218 + r * math.sin(math.radians(a))))
    return (
        stroke(smooth(star, 2)[:-1], [star[0]], w=9),
        *_dots((184, 200), (228, 200), w=16),
        stroke(ellipse(206, 222, 24, 14, 8, 20, 160), w=6),
        *_dots((206, 110), (306, 188), (120, 188), (150, 312), (262, 312), w=10),
    )


# --- the library ------------------------------------------------------------------------


def _animal(answer: str, aliases: tuple[str, ...], hints: tuple[str, str, str], strokes: tuple[Stroke, ...]) -> Animal:
    return Animal(answer, aliases, hints, strokes)


ANIMALS: tuple[Animal, ...] = (
    _animal("猫", ("猫咪",), ("它是家里常养的宠物。", "它会喵喵叫，还爱抓老鼠。", "它脸上有胡须，走路没有声音。"), _cat()),
    _animal("狗", ("狗狗",), ("它是人类的好朋友。", "它会汪汪叫，还会看家。", "它见到主人就摇尾巴。"), _dog()),
    _animal("老虎", ("虎",), ("它生活在森林里，是猛兽。", "它身上有黑色的条纹。", "它额头上好像写着一个“王”字。"), _tiger()),
    _animal("狮子", ("雄狮",), ("它生活在非洲草原上。", "它被叫作草原之王。", "它的头上围着一圈蓬蓬的鬃毛，吼声很大。"), _lion()),
    _animal("大象", ("象",), ("它是陆地上最重的动物。", "它有一对扇子一样的耳朵。", "它的鼻子很长，能吸水喷水。"), _elephant()),
    _animal("长颈鹿", (), ("它生活在非洲草原。", "它是世界上最高的动物。", "它的脖子特别特别高，身上有花斑。"), _giraffe()),
    _animal("熊猫", ("大熊猫",), ("它是中国的国宝。", "它最爱吃竹子。", "它有黑眼圈，身体黑白两色。"), _panda()),
    _animal("猴子", ("猴",), ("它住在树上，很调皮。", "它最爱吃香蕉。", "它会抓着树枝荡来荡去。"), _monkey()),
    _animal("兔子", ("兔",), ("它走路一蹦一跳的。", "它爱吃胡萝卜和青菜。", "它有两只长长的耳朵，尾巴短短的。"), _rabbit()),
    _animal("斑马", (), ("它生活在非洲草原上。", "它的样子和会奔跑的骏驹差不多。", "它身上是黑白相间的条纹。"), _zebra()),
    _animal("企鹅", (), ("它生活在很冷很冷的南极。", "它是一种不会飞的鸟，会游泳。", "它穿着黑白礼服，走路摇摇摆摆。"), _penguin()),
    _animal("海豚", (), ("它生活在水里，但不是鱼。", "它非常聪明，会表演顶球。", "它的嘴巴尖尖的，总像在微笑。"), _dolphin()),
    _animal("鲸鱼", ("鲸",), ("它住在大洋里。", "它是世界上最大的动物。", "它会从头顶喷出高高的水柱。"), _whale()),
    _animal("蝴蝶", ("蝶",), ("它是一种会飞的小昆虫。", "它小时候是毛毛虫。", "它有两对漂亮的大翅膀，爱在花丛里飞。"), _butterfly()),
    _animal("乌龟", ("龟",), ("它爬得很慢很慢。", "它能活很多很多年。", "它背着硬硬的壳，害怕时会把头缩进去。"), _turtle()),
    _animal("蜗牛", (), ("它爬过的地方会留下一道亮亮的痕迹。", "它头上有两根触角。", "它背着一个螺旋形的房子慢慢爬。"), _snail()),
    _animal("孔雀", (), ("它是一种很漂亮的大鸟。", "它的羽毛上有像眼睛一样的花纹。", "它会把尾巴打开，像一把大扇子。"), _peacock()),
    _animal("袋鼠", (), ("它生活在澳大利亚。", "它用后腿蹦蹦跳跳，尾巴又粗又长。", "妈妈肚皮上有个育儿兜，宝宝住在里面。"), _kangaroo()),
    _animal("骆驼", (), ("它生活在沙漠里。", "它很多天不喝水也没关系。", "它背上有两个高高的“小山包”。"), _camel()),
    _animal("刺猬", (), ("它是一种晚上出来活动的小动物。", "它害怕的时候会缩成一个球。", "它背上长满了尖尖的硬针。"), _hedgehog()),
    _animal("松鼠", (), ("它住在树上，爬得飞快。", "它爱吃坚果，还会把食物藏起来过冬。", "它有一条又大又毛茸茸的尾巴，像一把大刷子。"), _squirrel()),
    _animal("蛇", (), ("它没有腿，却能爬得很快。", "它会吐出分叉的舌头。", "它的身体又细又长，弯弯曲曲地游动。"), _snake()),
    _animal("鸭子", ("鸭",), ("它会游泳，也会走路。", "它嘎嘎嘎地叫。", "它的嘴巴扁扁的，脚上有蹼。"), _duck()),
    _animal("鸡", ("公鸡", "母鸡"), ("它是农场里常见的家禽。", "它每天早上喔喔叫，叫人起床。", "它头上有红红的冠子，还会下蛋。"), _chicken()),
    _animal("猪", ("猪猪",), ("它住在农场里，很爱睡觉。", "它吃得多，长得胖胖的。", "它的鼻子圆圆的，会哼哼叫。"), _pig()),
    _animal("牛", ("奶牛",), ("它住在农场里，爱吃青草。", "它会哞哞叫，能帮农民耕地。", "它头上有两只弯弯的角。"), _cow()),
    _animal("羊", ("绵羊", "山羊"), ("它住在农场或者草原上，爱吃青草。", "它会咩咩叫。", "它身上的毛卷卷的，像白云一样。"), _sheep()),
    _animal("马", (), ("人们可以骑着它奔跑。", "它跑得很快，会嘶嘶地叫。", "它脖子上有长长的鬃毛，脚上钉着铁掌。"), _horse()),
    _animal("老鼠", ("鼠",), ("它个子小小的，爱偷吃东西。", "它最怕猫。", "它会吱吱叫，有一条细细长长的尾巴。"), _mouse()),
    _animal("青蛙", ("蛙",), ("它小时候是小蝌蚪。", "它会呱呱叫，是捉害虫的能手。", "它的眼睛鼓鼓的，后腿很会跳。"), _frog()),
    _animal("螃蟹", ("蟹",), ("它住在水边和沙滩上。", "它走路是横着走的。", "它有一对大钳子，会夹人。"), _crab()),
    _animal("章鱼", ("八爪鱼",), ("它住在大洋里。", "它遇到危险会喷出黑黑的墨汁。", "它的头圆圆的，有好多条软软的腕足。"), _octopus()),
    _animal("鳄鱼", (), ("它生活在河边和沼泽里。", "它的皮又厚又硬，像铠甲一样。", "它的嘴巴又长又大，牙齿尖尖的。"), _crocodile()),
    _animal("河马", (), ("它生活在非洲，喜欢泡在水里。", "它的身体又大又胖。", "它的嘴巴张开特别大，能装下一个西瓜。"), _hippo()),
    _animal("犀牛", (), ("它生活在非洲草原，皮又厚又硬。", "它的身体很重，跑起来像坦克。", "它的鼻子上长着尖尖的角。"), _rhino()),
    _animal("狐狸", ("狐",), ("它住在森林里，被说成很狡猾。", "它的脸尖尖的，耳朵竖起来。", "它有一条毛茸茸的大尾巴，毛是橘红色的。"), _fox()),
    _animal("鹦鹉", (), ("它是一种羽毛五颜六色的鸟。", "它的嘴巴弯弯的像钩子。", "它会学人说话。"), _parrot()),
    _animal("猫头鹰", (), ("它白天睡觉，晚上出来捉老鼠。", "它的脖子能转很大一圈。", "它有一双又大又圆的眼睛。"), _owl()),
    _animal("蜜蜂", ("蜂",), ("它是一种会飞的昆虫，嗡嗡嗡。", "它身上有黄黑相间的条纹，屁股上有刺。", "它每天忙着采花粉，酿出甜甜的糖浆一样的东西。"), _bee()),
    _animal("鱼", (), ("它住在水里。", "它用鳃呼吸，身上有鳞片。", "它摇着尾巴游来游去，还会吐泡泡。"), _fish()),
    _animal("蜘蛛", (), ("它个子小小的，很多人有点怕它。", "它有八条细细的腿。", "它会吐丝织网，捉小虫子吃。"), _spider()),
    _animal("瓢虫", (), ("它个子只有豆子那么大，会飞。", "它是庄稼的好朋友，专吃啃庄稼的坏家伙。", "它的背圆圆的、红红的，上面有黑色的圆点。"), _ladybug()),
    _animal("海星", (), ("它住在礁石旁边的水里。", "它的手臂断了还能再长出来。", "它的形状是五角形的，有五条手臂。"), _starfish()),
)
