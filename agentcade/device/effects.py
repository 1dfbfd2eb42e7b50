"""常用的机器人效果：点头摇头、颜文字、逐笔画图、进度条。Ready-made robot effects for games.

Every effect is a few ordinary SDK calls made through the game's ``self.robot``
(:class:`~agentcade.device.proxy.RobotProxy`), so each one is checked like any other call
and needs the capabilities listed in the guide:

=====================================  =====================================
``await gesture(robot, "nod")``        ``motion``
``await react(robot, "happy", "nod")`` ``motion``, ``expression.runtime.v3``
``await draw(robot, steps)``           ``expression.runtime.v3``
``async with Progress(robot, 30):``    ``expression.runtime.v3``
``await show(robot, path)``            ``expression.runtime.v3``
``await standby(robot)``               ``expression.runtime.v3``
=====================================  =====================================

A missing capability skips the whole effect before anything is recorded (traced
``directive_skipped`` like an undeclared SDK call, so ``check`` fails the game), so an
effect never leaves half its calls in the queue.

How the screen is used (decided here, one place):

* A drawing is the runtime's ``custom_vector`` accessory on the ``front`` layer. The
  runtime has no switch that hides the eyes, so :func:`show` closes them as far as it
  allows (``openness=0.05``, a thin line behind the drawing); :func:`standby` opens them
  again (``openness=1.0``) and removes the accessory.
* The first screen call of a game is ``expression_runtime.start("standby", ...)``; later
  ones are ``update``. The proxy tracks whether the runtime owns the screen (animations,
  behaviours, official expressions and works take it back), so the right one is sent.
* Within one effect, later frames only send the new ``custom_vector_path``.

Calls are queued and run by the main agent in order, waiting for each motion to finish;
:func:`draw` and :class:`Progress` flush the queue after each frame so the robot shows it
while the game is still working.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Literal

import trio

from agentcade.core.allowlist import FRONT_PAN, FRONT_TILT
from agentcade.core.under_test import draw_pace
from agentcade.core.vector import MAX_COORD, Stroke, decode_vector, encode_vector
from agentcade.device.proxy import RobotProxy, flush_directives
from agentcade.device.validate import undeclared

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

Drawing = str | Sequence[Stroke]
"""A ``custom_vector_path`` hex string, or the strokes to encode into one."""

_RUNTIME = "expression.runtime.v3"
_MOTION = "motion"
_HIDDEN_EYES: dict[str, Any] = {"openness": 0.05}
_OPEN_EYES: dict[str, Any] = {"openness": 1.0}

# Gestures: small swings around the front, well inside the host's envelope.
_NOD_SWING = 12  # degrees of tilt each way (TILT_RANGE is 100..130 around 115)
_SHAKE_SWING = 30  # degrees of pan each way (PAN_RANGE is 30..150 around 90)
_SWING_MS = 250
_HOME_MS = 300
_HOLD_MS = 1200  # react() without a gesture keeps its face this long


def _declared(robot: RobotProxy, effect: str, *capabilities: str) -> bool:
    """Whether ``robot`` may do ``effect``; if not, the skip is traced (like a robot call)."""
    for capability in capabilities:
        if capability not in robot.capabilities:
            robot.refuse(undeclared(f"effects.{effect}", capability), f"effects.{effect}(...)")
            return False
    return True


def _path(drawing: Drawing) -> str:
    """The hex path of ``drawing``; VectorError if the robot could not show it."""
    if isinstance(drawing, str):
        decode_vector(drawing)
        return drawing.lower()
    return encode_vector(list(drawing))


async def _put(robot: RobotProxy, path: str) -> None:
    """Show ``path`` as the only thing on screen (start or update the runtime)."""
    kwargs: dict[str, Any] = {
        "accessory": "custom_vector",
        "custom_vector_path": path,
        "custom_accessory_layer": "front",
        **_HIDDEN_EYES,
    }
    if robot.owns_display:
        await robot.expression_runtime.update(**kwargs)
    else:
        await robot.expression_runtime.start("standby", **kwargs)


async def _frame(robot: RobotProxy, path: str, first: bool) -> None:
    """One frame of an animation: the full setup first, then only the new path."""
    if first or not robot.owns_display:
        await _put(robot, path)
    else:
        await robot.expression_runtime.update(custom_vector_path=path)


# --- screen ------------------------------------------------------------------------------


async def show(robot: RobotProxy, path: Drawing) -> None:
    """屏幕只显示这个图案。Show only ``path`` on the screen (eyes closed behind it).

    Raises:
        VectorError: the drawing breaks the robot's limits.
    """
    if _declared(robot, "show", _RUNTIME):
        await _put(robot, _path(path))


async def standby(robot: RobotProxy) -> None:
    """回到待机的眼睛。Back to the standby eyes, without any drawing."""
    if not _declared(robot, "standby", _RUNTIME):
        return
    if robot.owns_display:
        await robot.expression_runtime.update(preset="standby", accessory="none", **_OPEN_EYES)
    else:
        await robot.expression_runtime.start("standby", accessory="none")


def stroke_steps(strokes: Sequence[Stroke]) -> list[list[Stroke]]:
    """把一幅画拆成逐笔的步骤。Cumulative steps of a drawing: 1 stroke, 2 strokes, ...

    Raises:
        VectorError: the whole drawing breaks the robot's limits.
    """
    strokes = list(strokes)
    encode_vector(strokes)
    return [strokes[:n] for n in range(1, len(strokes) + 1)]


async def draw(robot: RobotProxy, steps: Sequence[Drawing], *, interval: float = 0.4) -> None:
    """逐笔画图。Show ``steps`` one after another; the last one stays on screen.

    Each step is a complete drawing (see :func:`stroke_steps`). After each step the queued
    directives are sent at once, and the game waits ``interval`` seconds before the next.
    Every step is checked before the first is shown. (A test runner may slow it:
    :func:`agentcade.core.under_test.draw_pace`.)

    Raises:
        VectorError: a step breaks the robot's limits.
        ValueError: ``interval`` is negative.
    """
    if not interval >= 0:
        raise ValueError(f"interval must be >= 0 seconds, got {interval!r}")
    if not _declared(robot, "draw", _RUNTIME):
        return
    interval *= draw_pace(os.environ)
    paths = [_path(step) for step in steps]
    for i, path in enumerate(paths):
        if i:
            await trio.sleep(interval)
        await _frame(robot, path, first=i == 0)
        await flush_directives(robot)


# --- motion ------------------------------------------------------------------------------


def _moves(kind: str) -> list[tuple[int, int, int]]:
    """(pan, tilt, duration_ms) of a gesture, ending at the front."""
    if kind == "nod":
        swing = [
            (FRONT_PAN, FRONT_TILT + _NOD_SWING, _SWING_MS),
            (FRONT_PAN, FRONT_TILT - _NOD_SWING, _SWING_MS),
        ]
    elif kind == "shake_head":
        swing = [
            (FRONT_PAN - _SHAKE_SWING, FRONT_TILT, _SWING_MS),
            (FRONT_PAN + _SHAKE_SWING, FRONT_TILT, _SWING_MS),
        ]
    else:
        raise ValueError(f"unknown gesture {kind!r}; use 'nod' or 'shake_head'")
    return [*swing, *swing, (FRONT_PAN, FRONT_TILT, _HOME_MS)]


async def _move(robot: RobotProxy, moves: Iterable[tuple[int, int, int]]) -> None:
    for pan, tilt, duration in moves:
        await robot.motion.move_to(pan_deg=pan, tilt_deg=tilt, duration_ms=duration)


async def gesture(robot: RobotProxy, kind: Literal["nod", "shake_head"]) -> None:
    """点头（``"nod"``）或摇头（``"shake_head"``），最后头朝正前方。Nod or shake the head,
    together with the sentence that follows (it does not wait for the moves)."""
    moves = _moves(kind)
    if _declared(robot, "gesture", _MOTION):
        with robot.timed("with_text"):
            await _move(robot, moves)


# --- faces -------------------------------------------------------------------------------

Point = tuple[int, int]


def _arc(cx: int, cy: int, r: int, start_deg: float, end_deg: float, n: int) -> list[Point]:
    """Points on a circle arc (y grows downwards, so 0..180 degrees is the lower half)."""
    points = []
    for i in range(n):
        a = math.radians(start_deg + (end_deg - start_deg) * i / (n - 1))
        x = min(MAX_COORD, max(0, round(cx + r * math.cos(a))))
        y = min(MAX_COORD, max(0, round(cy + r * math.sin(a))))
        points.append((x, y))
    return points


def kaomoji(face: Literal["happy", "sorry"]) -> list[Stroke]:
    """The kaomoji :func:`react` shows: ``happy`` (^ ^ and a smile) or ``sorry`` (worried)."""
    if face == "happy":
        return [
            Stroke([(112, 200), (142, 160), (172, 200)], width=14),  # ^
            Stroke([(240, 200), (270, 160), (300, 200)], width=14),  # ^
            Stroke(_arc(206, 240, 60, 20, 160, 9), width=12),  # smile
        ]
    if face == "sorry":
        return [
            Stroke([(104, 168), (170, 142)], width=10),  # brows raised in the middle
            Stroke([(242, 142), (308, 168)], width=10),
            Stroke([(140, 192), (140, 210)], width=20),  # small round eyes
            Stroke([(272, 192), (272, 210)], width=20),
            Stroke(_arc(206, 310, 40, 200, 340, 7), width=10),  # small frown
        ]
    raise ValueError(f"unknown face {face!r}; use 'happy' or 'sorry'")


_FACES = {face: encode_vector(kaomoji(face)) for face in ("happy", "sorry")}


async def react(
    robot: RobotProxy,
    face: Literal["happy", "sorry"],
    gesture: Literal["nod", "shake_head"] | None = None,
    *,
    then: Drawing | None = None,
) -> None:
    """显示开心或抱歉的颜文字，同时点头或摇头；接下来这句话说完后换回 ``then``，没有时回到待机。

    Show a ``happy`` or ``sorry`` kaomoji at once; the gesture starts together with the
    sentence that follows (the head moves while the verdict is spoken: the sentence does not
    wait for the moves), and once that sentence has been said the screen shows ``then`` (a
    drawing), or the standby eyes when ``then`` is None. Without a gesture the face is held
    for at least 1.2 s by a still move to the front, so a reaction with no sentence after
    it is still seen.

    Raises:
        ValueError: unknown face or gesture.
        VectorError: ``then`` breaks the robot's limits.
    """
    if face not in _FACES:
        raise ValueError(f"unknown face {face!r}; use 'happy' or 'sorry'")
    moves = _moves(gesture) if gesture is not None else [(FRONT_PAN, FRONT_TILT, _HOLD_MS)]
    after = _path(then) if then is not None else None
    if not _declared(robot, "react", _MOTION, _RUNTIME):
        return
    await _put(robot, _FACES[face])
    with robot.timed("with_text"):
        await _move(robot, moves)
    with robot.timed("after_text"):
        if after is None:
            await standby(robot)
        else:
            await _put(robot, after)


# --- progress ----------------------------------------------------------------------------

_BAR_LEFT, _BAR_RIGHT, _BAR_TOP, _BAR_BOTTOM = 66, 346, 176, 236
_BAR_OUTLINE = 6
_BAR_FILL = 36
_FILL_Y = (_BAR_TOP + _BAR_BOTTOM) // 2
# The fill is a thick line with round ends: keep its ends inside the outline.
_FILL_START = _BAR_LEFT + _BAR_OUTLINE + _BAR_FILL // 2
_FILL_END = _BAR_RIGHT - _BAR_OUTLINE - _BAR_FILL // 2
_RUNNING_MAX = 0.95
"""While the work runs the bar stops short of full; it is full only when the work ends."""


def progress_bar(fraction: float) -> list[Stroke]:
    """A progress bar drawing: an outline and a bar filled to ``fraction`` (0..1)."""
    fraction = min(1.0, max(0.0, fraction))
    outline = Stroke(
        [
            (_BAR_LEFT, _BAR_TOP),
            (_BAR_RIGHT, _BAR_TOP),
            (_BAR_RIGHT, _BAR_BOTTOM),
            (_BAR_LEFT, _BAR_BOTTOM),
            (_BAR_LEFT, _BAR_TOP),
        ],
        width=_BAR_OUTLINE,
    )
    if fraction == 0:
        return [outline]
    end = _FILL_START + round(fraction * (_FILL_END - _FILL_START))
    return [outline, Stroke([(_FILL_START, _FILL_Y), (end, _FILL_Y)], width=_BAR_FILL)]


class Progress:
    """显示进度条：``async with effects.Progress(self.robot, 30): ...``。

    Shows a progress bar that fills over about ``seconds`` while the body runs: updated
    every ``max(1, seconds / 10)`` seconds by a background task, each update sent at once.
    It stops just short of full if the work takes longer; when the body finishes, the bar
    is shown full once and stays. If the body fails or is cancelled, the updater stops and
    the error propagates unchanged.
    """

    def __init__(self, robot: RobotProxy, seconds: float) -> None:
        if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"seconds must be a positive number, got {seconds!r}")
        self._robot = robot
        self._seconds = float(seconds)
        self.interval = max(1.0, self._seconds / 10)
        """Seconds between updates."""
        self._updater = trio.CancelScope()
        self._nursery_manager: Any = None
        self._shown: str | None = None
        self._skipped = False

    async def _show(self, fraction: float) -> None:
        path = encode_vector(progress_bar(fraction))
        if path == self._shown:
            return
        await _frame(self._robot, path, first=self._shown is None)
        self._shown = path
        await flush_directives(self._robot)

    async def _run(self, started: float) -> None:
        with self._updater:
            tick = 1
            while True:
                await trio.sleep_until(started + tick * self.interval)
                elapsed = trio.current_time() - started
                await self._show(min(_RUNNING_MAX, elapsed / self._seconds))
                tick += 1

    async def __aenter__(self) -> Progress:
        if not _declared(self._robot, "Progress", _RUNTIME):
            self._skipped = True
            return self
        started = trio.current_time()
        await self._show(0.0)
        manager = trio.open_nursery()
        nursery = await manager.__aenter__()
        self._nursery_manager = manager
        nursery.start_soon(self._run, started)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if self._skipped:
            return False
        self._updater.cancel()
        try:
            suppressed = bool(await self._nursery_manager.__aexit__(exc_type, exc, tb))
        except BaseExceptionGroup as group:
            if exc is not None and group.exceptions == (exc,):
                return False  # the body's own error (or Cancelled): let it propagate as is
            raise
        if exc_type is None:
            await self._show(1.0)
        return suppressed
