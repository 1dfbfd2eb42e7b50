"""``agentcade.device.effects``: only allowed, valid directives, in the right order and timing."""

from __future__ import annotations

from typing import Any, Literal

import pytest
import trio
import trio.testing

from agentcade import effects
from agentcade.core.allowlist import FRONT_PAN, FRONT_TILT, PAN_RANGE, TILT_RANGE
from agentcade.core.protocol import Directive
from agentcade.core.trace import Trace
from agentcade.core.vector import Stroke, VectorError, decode_vector, encode_vector
from agentcade.device.proxy import RobotProxy
from agentcade.device.validate import validate_directive

CAPS = ["motion", "expression.runtime.v3"]
FLUSH = "flush"


class Sink:
    """Records directives and flushes (with the virtual time of each)."""

    def __init__(self) -> None:
        self.events: list[Directive | str] = []
        self.times: list[float] = []

    def record(self, directive: Directive) -> None:
        self.events.append(directive)
        self.times.append(trio.current_time())

    async def flush(self) -> None:
        await trio.lowlevel.checkpoint()
        self.events.append(FLUSH)
        self.times.append(trio.current_time())

    @property
    def directives(self) -> list[Directive]:
        return [e for e in self.events if isinstance(e, Directive)]

    def check(self, declared: list[str] = CAPS) -> None:
        """Every recorded directive passes host-side re-validation."""
        for directive in self.directives:
            validate_directive(
                Directive.model_validate(directive.model_dump(mode="json")), declared
            )


def bound(caps: list[str] = CAPS) -> tuple[RobotProxy, Sink]:
    robot = RobotProxy(caps)
    sink = Sink()
    robot.bind(sink)
    return robot, sink


def skipping(caps: list[str]) -> tuple[RobotProxy, Sink, list[dict[str, Any]]]:
    """A bound robot with a trace: its records (``directive_skipped``) fill the list."""
    robot, sink = bound(caps)
    records: list[dict[str, Any]] = []
    robot.bind(sink, Trace(records.append))
    return robot, sink, records


def skipped(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["call"], r["reason"]) for r in records if r["type"] == "directive_skipped"
            and r["kind"] == "undeclared" and not r["raised"]]


def moves(sink: Sink) -> list[tuple[int, int, int]]:
    return [
        (d.kwargs["pan_deg"], d.kwargs["tilt_deg"], d.kwargs["duration_ms"])
        for d in sink.directives
        if d.call == "motion.move_to"
    ]


def screen(directive: Directive) -> str:
    """The vector drawing a directive shows (every directive these tests read draws one)."""
    path = directive.kwargs.get("custom_vector_path")
    assert isinstance(path, str), directive
    return path


STAR = [Stroke([(206, 60), (250, 350), (60, 160), (350, 160), (160, 350), (206, 60)], width=8)]


@pytest.mark.parametrize("kind", ["nod", "shake_head"])
async def test_gesture_stays_in_range_and_ends_at_the_front(kind: str) -> None:
    robot, sink = bound(["motion"])
    await effects.gesture(robot, kind)  # type: ignore[arg-type]
    sink.check(["motion"])
    assert {d.call for d in sink.directives} == {"motion.move_to"}
    steps = moves(sink)
    assert len(steps) >= 4
    for pan, tilt, _ in steps:
        assert PAN_RANGE[0] <= pan <= PAN_RANGE[1]
        assert TILT_RANGE[0] <= tilt <= TILT_RANGE[1]
    assert steps[-1][:2] == (FRONT_PAN, FRONT_TILT)
    if kind == "nod":
        assert {pan for pan, _, _ in steps} == {FRONT_PAN}
        tilts = [tilt for _, tilt, _ in steps[:-1]]
        assert sum(t > FRONT_TILT for t in tilts) == 2
        assert sum(t < FRONT_TILT for t in tilts) == 2
    else:
        assert {tilt for _, tilt, _ in steps} == {FRONT_TILT}
        pans = [pan for pan, _, _ in steps[:-1]]
        assert sum(p > FRONT_PAN for p in pans) == 2
        assert sum(p < FRONT_PAN for p in pans) == 2


async def test_gesture_without_motion_is_skipped_and_traced() -> None:
    robot, sink, records = skipping(["expression.runtime.v3"])
    await effects.gesture(robot, "nod")  # returns at once
    assert sink.events == []
    assert [call for call, _ in skipped(records)] == ["effects.gesture"]
    with pytest.raises(ValueError, match="gesture"):
        await effects.gesture(bound()[0], "wave")  # type: ignore[arg-type]


@pytest.mark.parametrize("face", ["happy", "sorry"])
@pytest.mark.parametrize("gesture", ["nod", "shake_head", None])
async def test_react_back_to_standby(
    face: Literal["happy", "sorry"], gesture: Literal["nod", "shake_head"] | None
) -> None:
    robot, sink = bound()
    await effects.react(robot, face, gesture)
    sink.check()
    first, *middle, last = sink.directives
    assert first.call == "expression_runtime.start"  # the runtime was not running yet
    assert first.args == ["standby"]
    assert first.kwargs["accessory"] == "custom_vector"
    assert first.kwargs["custom_accessory_layer"] == "front"
    assert decode_vector(screen(first)) == effects.kaomoji(face)
    assert {d.call for d in middle} == {"motion.move_to"}
    assert moves(sink)[-1][:2] == (FRONT_PAN, FRONT_TILT)
    assert last.call == "expression_runtime.update"
    assert last.kwargs["preset"] == "standby"
    assert last.kwargs["accessory"] == "none"
    assert robot.owns_display


async def test_react_without_gesture_holds_the_face() -> None:
    robot, sink = bound()
    await effects.react(robot, "happy")
    assert moves(sink) == [(FRONT_PAN, FRONT_TILT, 1200)]


async def test_react_then_puts_the_drawing_back() -> None:
    robot, sink = bound()
    await effects.show(robot, STAR)
    await effects.react(robot, "sorry", "shake_head", then=STAR)
    sink.check()
    calls = [d.call for d in sink.directives]
    assert calls[0] == "expression_runtime.start"
    assert calls[1] == "expression_runtime.update"  # the face: runtime already running
    assert screen(sink.directives[1]) == encode_vector(effects.kaomoji("sorry"))
    assert screen(sink.directives[-1]) == encode_vector(STAR)
    # then as a hex path works the same
    await effects.react(robot, "happy", then=encode_vector(STAR))
    assert screen(sink.directives[-1]) == encode_vector(STAR)


async def test_react_checks_everything_before_recording() -> None:
    robot, sink, records = skipping(["expression.runtime.v3"])
    await effects.react(robot, "happy", "nod")
    assert sink.events == []  # skipped whole: no face left without its gesture
    [(call, reason)] = skipped(records)
    assert call == "effects.react"
    assert "motion" in reason
    robot, sink = bound()
    with pytest.raises(ValueError, match="face"):
        await effects.react(robot, "angry")  # type: ignore[arg-type]
    with pytest.raises(VectorError):
        await effects.react(robot, "happy", then="0200")
    assert sink.events == []


async def test_show_and_standby() -> None:
    robot, sink = bound(["expression.runtime.v3"])
    await effects.standby(robot)  # not running: start it in standby
    await effects.show(robot, STAR)
    await effects.show(robot, encode_vector(STAR).upper())
    await effects.standby(robot)
    sink.check(["expression.runtime.v3"])
    start, show1, show2, back = sink.directives
    assert (start.call, start.args, start.kwargs) == (
        "expression_runtime.start",
        ["standby"],
        {"accessory": "none"},
    )
    for shown in (show1, show2):
        assert shown.call == "expression_runtime.update"
        assert shown.kwargs == {
            "accessory": "custom_vector",
            "custom_vector_path": encode_vector(STAR),
            "custom_accessory_layer": "front",
            "openness": 0.05,
        }
    assert back.kwargs == {"preset": "standby", "accessory": "none", "openness": 1.0}
    with pytest.raises(VectorError):
        await effects.show(robot, "01 00")


async def test_show_after_an_animation_starts_the_runtime_again() -> None:
    robot, sink = bound([*CAPS, "animation"])
    await effects.show(robot, STAR)
    await robot.animation.play("happy")
    await effects.show(robot, STAR)
    assert [d.call for d in sink.directives] == [
        "expression_runtime.start",
        "animation.play",
        "expression_runtime.start",
    ]


def test_stroke_steps() -> None:
    strokes = [Stroke([(i, i), (i + 10, i)]) for i in range(5)]
    steps = effects.stroke_steps(strokes)
    assert steps == [strokes[:1], strokes[:2], strokes[:3], strokes[:4], strokes]
    assert effects.stroke_steps([]) == []
    with pytest.raises(VectorError):
        effects.stroke_steps([Stroke([(1, 1)])] * 13)


async def test_a_test_runner_can_slow_the_drawing_and_nothing_else_can(
    autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Test mode's draw pace (``AGENTCADE_TEST_DRAW_PACE``): the strokes come that many times
    slower, so a line said during the drawing lands while it lasts; without test mode the
    variable is ignored."""
    robot, _ = bound(["expression.runtime.v3"])
    steps = effects.stroke_steps([Stroke([(50 + 40 * i, 100), (50 + 40 * i, 300)]) for i in range(3)])

    async def drawing_time() -> float:
        start = trio.current_time()
        await effects.draw(robot, steps, interval=0.5)
        return trio.current_time() - start

    monkeypatch.setenv("AGENTCADE_TEST_DRAW_PACE", "4")
    monkeypatch.delenv("AGENTCADE_TEST_MODE", raising=False)
    assert await drawing_time() == pytest.approx(1.0)
    monkeypatch.setenv("AGENTCADE_TEST_MODE", "1")
    assert await drawing_time() == pytest.approx(4.0)


async def test_draw_one_update_per_step_with_flushes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    robot, sink = bound(["expression.runtime.v3"])
    await effects.standby(robot)  # runtime running, so every step is an update
    sink.events.clear()
    sink.times.clear()
    strokes = [Stroke([(50 + 40 * i, 100), (50 + 40 * i, 300)]) for i in range(6)]
    steps = effects.stroke_steps(strokes)
    start = trio.current_time()
    await effects.draw(robot, steps, interval=0.5)
    sink.check(["expression.runtime.v3"])
    assert [e if isinstance(e, str) else e.call for e in sink.events] == [
        "expression_runtime.update",
        FLUSH,
    ] * len(steps)
    shown = [decode_vector(screen(d)) for d in sink.directives]
    assert shown == steps
    assert sink.directives[0].kwargs["accessory"] == "custom_vector"
    assert all(set(d.kwargs) == {"custom_vector_path"} for d in sink.directives[1:])
    # one step every 0.5 s, the last one stays (no sleep after it)
    step_times = [t - start for e, t in zip(sink.events, sink.times, strict=True) if e != FLUSH]
    assert step_times == pytest.approx([0.5 * i for i in range(len(steps))])
    assert trio.current_time() - start == pytest.approx(0.5 * (len(steps) - 1))


async def test_draw_starts_the_runtime_when_needed(autojump_clock: trio.testing.MockClock) -> None:
    robot, sink = bound(["expression.runtime.v3"])
    await effects.draw(robot, [encode_vector(STAR), STAR])
    assert [e if isinstance(e, str) else e.call for e in sink.events] == [
        "expression_runtime.start",
        FLUSH,
        "expression_runtime.update",
        FLUSH,
    ]


async def test_draw_checks_every_step_first() -> None:
    robot, sink = bound(["expression.runtime.v3"])
    with pytest.raises(VectorError):
        await effects.draw(robot, [STAR, "zz"])
    with pytest.raises(ValueError, match="interval"):
        await effects.draw(robot, [STAR], interval=-1)
    assert sink.events == []
    robot, sink, records = skipping(["motion"])
    await effects.draw(robot, [STAR])
    assert sink.events == []
    assert [call for call, _ in skipped(records)] == ["effects.draw"]


def fills(sink: Sink) -> list[float]:
    """How full each progress frame is (0..1), from the drawn fill stroke."""
    full = decode_vector(encode_vector(effects.progress_bar(1.0)))[1].points
    start_x, end_x = full[0][0], full[1][0]
    out = []
    for d in sink.directives:
        strokes = decode_vector(screen(d))
        out.append(
            0.0 if len(strokes) == 1 else (strokes[1].points[1][0] - start_x) / (end_x - start_x)
        )
    return out


async def test_progress_over_virtual_time(autojump_clock: trio.testing.MockClock) -> None:
    robot, sink = bound(["expression.runtime.v3"])
    start = trio.current_time()
    async with effects.Progress(robot, 30) as progress:
        assert progress.interval == 3
        await trio.sleep(20)
    sink.check(["expression.runtime.v3"])
    values = fills(sink)
    assert values[0] == 0
    assert values[-1] == 1
    assert values == sorted(values)
    assert values[-2] == pytest.approx(18 / 30, abs=0.01)  # the last update before the end
    assert len(values) == 1 + 6 + 1  # empty, one every 3 s during 20 s, full
    # every frame is sent at once
    kinds = [e if e == FLUSH else "frame" for e in sink.events]
    assert kinds == ["frame", FLUSH] * len(values)
    times = [t - start for e, t in zip(sink.events, sink.times, strict=True) if e != FLUSH]
    assert times[1:-1] == pytest.approx([3, 6, 9, 12, 15, 18])
    assert times[-1] == pytest.approx(20)
    # started the runtime once, then only path updates
    assert sink.directives[0].call == "expression_runtime.start"
    assert all(set(d.kwargs) == {"custom_vector_path"} for d in sink.directives[1:])


async def test_progress_short_and_overrunning(autojump_clock: trio.testing.MockClock) -> None:
    robot, sink = bound(["expression.runtime.v3"])
    async with effects.Progress(robot, 4) as progress:
        assert progress.interval == 1  # at least one second between updates
        await trio.sleep(10)  # takes longer than expected
    values = fills(sink)
    assert values[-1] == 1
    assert max(values[:-1]) < 1  # never full before the work is done
    assert len(values) == len(set(values))  # no repeated frames while waiting


async def test_progress_cancellation_propagates(autojump_clock: trio.testing.MockClock) -> None:
    robot, sink = bound(["expression.runtime.v3"])
    with trio.move_on_after(5) as scope:
        async with effects.Progress(robot, 30):
            await trio.sleep(100)
    assert scope.cancelled_caught
    values = fills(sink)
    assert values[-1] < 1  # no "full" frame for cancelled work
    count = len(sink.events)
    await trio.sleep(30)
    assert len(sink.events) == count  # the updater is gone


async def test_progress_cancellation_from_outside_the_task(
    autojump_clock: trio.testing.MockClock,
) -> None:
    robot, sink = bound(["expression.runtime.v3"])
    finished = False

    async def work() -> None:
        nonlocal finished
        async with effects.Progress(robot, 30):
            await trio.sleep(100)
        finished = True  # pragma: no cover

    async with trio.open_nursery() as nursery:
        nursery.start_soon(work)
        await trio.sleep(7)
        nursery.cancel_scope.cancel()
    assert not finished
    assert fills(sink)[-1] < 1


async def test_progress_errors_propagate_unchanged(autojump_clock: trio.testing.MockClock) -> None:
    robot, sink = bound(["expression.runtime.v3"])

    class Boom(Exception):
        pass

    async def work() -> None:
        async with effects.Progress(robot, 10):
            await trio.sleep(3)
            raise Boom

    with pytest.raises(Boom):
        await work()
    assert fills(sink)[-1] < 1


async def test_progress_without_the_runtime_is_skipped_and_needs_a_turn(
    autojump_clock: trio.testing.MockClock,
) -> None:
    robot, sink, records = skipping(["motion"])
    ran = False
    async with effects.Progress(robot, 10):
        await trio.sleep(30)
        ran = True
    assert ran  # the work runs, without a bar
    assert sink.events == []
    assert [call for call, _ in skipped(records)] == ["effects.Progress"]
    with pytest.raises(ValueError, match="seconds"):
        effects.Progress(robot, 0)
    unbound = RobotProxy(["expression.runtime.v3"])
    with pytest.raises(RuntimeError, match="outside a game turn"):
        async with effects.Progress(unbound, 10):
            pass  # pragma: no cover


def test_drawings_fit_the_canvas() -> None:
    for drawing in (
        effects.kaomoji("happy"),
        effects.kaomoji("sorry"),
        effects.progress_bar(0),
        effects.progress_bar(0.5),
        effects.progress_bar(1),
    ):
        encode_vector(drawing)
    with pytest.raises(ValueError, match="face"):
        effects.kaomoji("meh")  # type: ignore[arg-type]


async def test_effects_emit_only_allowed_calls() -> None:
    robot, sink = bound()
    calls: list[Any] = [
        effects.gesture(robot, "nod"),
        effects.react(robot, "happy", "shake_head", then=STAR),
        effects.show(robot, STAR),
        effects.standby(robot),
    ]
    for coro in calls:
        await coro
    sink.check()
    assert {d.call for d in sink.directives} <= {
        "motion.move_to",
        "expression_runtime.start",
        "expression_runtime.update",
    }
