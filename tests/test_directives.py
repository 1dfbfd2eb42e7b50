"""Directive validation (SDK rules + host limits), ``bind_call`` and the game's robot proxy."""

from __future__ import annotations

import inspect
import pickle
import threading
from typing import Any

import pytest
from watcherobot import Job
from watcherobot.robot import WatcheRobot

from agentcade.core.allowlist import ALLOWED_CALLS, KNOWN_CAPABILITIES
from agentcade.core.protocol import Directive
from agentcade.core.trace import Trace, caller_scope
from agentcade.core.vector import Stroke, encode_vector
from agentcade.device.proxy import RobotProxy, flush_directives
from agentcade.device.validate import (
    DirectiveError,
    _RecordingTransport,
    bind_call,
    sdk_signature,
    validate_directive,
)

ALL = sorted(KNOWN_CAPABILITIES)
STAR = encode_vector(
    [Stroke([(206, 60), (250, 350), (60, 160), (350, 160), (160, 350), (206, 60)])]
)


def d(call: str, *args: Any, **kwargs: Any) -> Directive:
    return Directive(call=call, args=list(args), kwargs=kwargs)


VALID: list[Directive] = [
    d("lights.set_color", "#00FF00"),
    d("lights.set_color", "#00ff00", brightness=0.8, zone="side"),
    d("lights.play_effect", "breathing", color="#FF8800", period_ms=800, repeat=3),
    d("lights.play_effect", effect="rainbow"),
    d("lights.off"),
    d("animation.play", "happy"),
    d("animation.prefetch", "happy"),
    d("animation.stop"),
    d("behavior.play", "desktop_expression_panel", repeat=2),
    d("behavior.stop"),
    d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=400),
    d("motion.move_to", pan_deg=30, tilt_deg=130, duration_ms=5000, profile="linear"),
    d("motion.move_to", pan_deg=150.5, tilt_deg=100, duration_ms=100),
    d("motion.set_target", pan_deg=90),
    d("motion.set_target", tilt_deg=115),
    d("motion.play_action", "wave"),
    d("motion.stop"),
    d("expression_runtime.start", "standby"),
    d(
        "expression_runtime.start",
        preset="thinking",
        accessory="custom_vector",
        custom_vector_path=STAR,
        custom_accessory_layer="front",
        openness=0.05,
    ),
    d("expression_runtime.update", gaze_x=-1, gaze_y=0.5, tilt_deg=-30, color="#A1F03C"),
    d("expression_runtime.update", preset="speaking", auto_blink=False, transition_ms=2000),
    d("expression_runtime.stop"),
    d("expressions.play_official", "smile"),
    d("audio.play", "ding"),
    d("works.play", "my_work_1"),
    d("works.play_expression", "my_work_1", clip_id="intro:1.a-b"),
]


def test_every_allowed_call_has_a_valid_example() -> None:
    assert {v.call for v in VALID} == set(ALLOWED_CALLS)


@pytest.mark.parametrize("directive", VALID, ids=lambda v: v.describe())
def test_valid_directives_pass(directive: Directive) -> None:
    validate_directive(directive, ALL)
    validate_directive(directive, [ALLOWED_CALLS[directive.call]])  # only what it needs


@pytest.mark.parametrize(
    "call", ["microphone.open", "camera.capture", "works.delete", "audio.play_pcm", "lights.blink"]
)
def test_not_allowed(call: str) -> None:
    with pytest.raises(DirectiveError) as info:
        validate_directive(d(call), ALL)
    assert info.value.kind == "not_allowed"
    assert info.value.call == call


def test_not_allowed_message_lists_the_domain() -> None:
    with pytest.raises(DirectiveError, match=r"works\.play, works\.play_expression"):
        validate_directive(d("works.delete", "my_work"), ALL)


@pytest.mark.parametrize("directive", VALID, ids=lambda v: v.describe())
def test_undeclared(directive: Directive) -> None:
    needed = ALLOWED_CALLS[directive.call]
    with pytest.raises(DirectiveError) as info:
        validate_directive(directive, [c for c in ALL if c != needed])
    assert info.value.kind == "undeclared"
    assert needed in str(info.value)
    assert "required_capabilities" in str(info.value)


def test_undeclared_wins_over_invalid_arguments() -> None:
    with pytest.raises(DirectiveError) as info:
        validate_directive(d("lights.set_color", "red"), ["motion"])
    assert info.value.kind == "undeclared"


INVALID: list[tuple[Directive, str]] = [
    # SDK rules
    (d("lights.set_color", "green"), "RRGGBB"),
    (d("lights.set_color", "#00FF0"), "RRGGBB"),
    (d("lights.set_color", 65280), ""),  # wrong type: the SDK's TypeError
    (d("lights.set_color", "#00FF00", brightness=1.5), "brightness"),
    (d("lights.set_color", "#00FF00", 0.8), "positional"),  # brightness is keyword-only
    (d("lights.set_color"), "color"),  # missing argument
    (d("lights.off", "all"), "positional"),
    (d("lights.play_effect", "blink", period_ms=70000), "period_ms"),
    (d("lights.play_effect", "blink", repeat=-1), "effect options"),
    (d("motion.move_to", 90, 110, 300), "positional"),
    (d("motion.move_to", pan_deg=90, tilt_deg=110), "duration_ms"),  # missing
    (d("motion.move_to", pan_deg=90, tilt_deg=110, duration_ms=0), "duration_ms"),
    (d("motion.move_to", pan_deg=90, tilt_deg=110, duration_ms=True), "duration_ms"),
    (d("motion.move_to", pan_deg=90, tilt_deg=110, duration_ms=300, speed=2), "speed"),
    (d("motion.move_to", pan_deg="left", tilt_deg=110, duration_ms=300), ""),
    (d("motion.set_target"), "pan_deg or tilt_deg"),
    (d("motion.play_action", ""), "action_id"),
    (d("animation.play", ""), "animation_id"),
    (d("animation.prefetch", "Happy Face"), "catalog-safe"),
    (d("animation.prefetch", "9lives"), "catalog-safe"),
    (d("behavior.play", "desktop_expression_panel", repeat=0), "positive repeat"),
    (d("expressions.play_official", "x" * 24), "lowercase"),
    (d("audio.play", ""), "sound_id"),
    (d("works.play", "My-Work"), "work_id"),
    (d("works.play", "w" * 24), "work_id"),
    (d("works.play_expression", "my_work"), "clip_id"),  # clip_id is required
    (d("works.play_expression", "my_work", clip_id="bad clip"), "clip_id"),
    (d("expression_runtime.start"), "preset"),
    (d("expression_runtime.start", "sleepy"), "preset must be one of"),
    (d("expression_runtime.update"), "at least one"),
    (d("expression_runtime.update", "standby"), "positional"),  # update is keyword-only
    (d("expression_runtime.update", openness=1.3), "openness"),
    (d("expression_runtime.update", openness="wide"), "number"),
    (d("expression_runtime.update", gaze_x=True), "number"),
    (d("expression_runtime.update", tilt_deg=31), "tilt_deg"),
    (d("expression_runtime.update", tilt_deg=1.0), "tilt_deg"),
    (d("expression_runtime.update", auto_blink=1), "auto_blink"),
    (d("expression_runtime.update", accessory="hat"), "accessory"),
    (d("expression_runtime.update", color="#A1F03"), "color"),
    (d("expression_runtime.update", blink_interval_ms=100), "blink_interval_ms"),
    (d("expression_runtime.update", custom_accessory_mask="00"), "652"),
    (d("expression_runtime.update", custom_vector_path="0200"), "vector path"),
    (d("expression_runtime.update", custom_vector_path="01 00"), "vector path"),
    (d("expression_runtime.update", custom_vector_path=STAR + "00"), "vector path"),
    (d("expression_runtime.update", sparkle=True), "sparkle"),
    # host limits
    (d("motion.move_to", pan_deg=10, tilt_deg=110, duration_ms=300), "30..150"),
    (d("motion.move_to", pan_deg=151, tilt_deg=110, duration_ms=300), "30..150"),
    (d("motion.move_to", pan_deg=90, tilt_deg=140, duration_ms=300), "100..130"),
    (d("motion.move_to", pan_deg=90, tilt_deg=99.9, duration_ms=300), "100..130"),
    (d("motion.move_to", pan_deg="90", tilt_deg=110, duration_ms=300), "number"),
    (d("motion.move_to", pan_deg=90, tilt_deg=110, duration_ms=99), "100..5000"),
    (d("motion.move_to", pan_deg=90, tilt_deg=110, duration_ms=5001), "100..5000"),
    (d("motion.move_to", pan_deg=90, tilt_deg=110, duration_ms=300, profile="bouncy"), "profile"),
    (d("motion.set_target", tilt_deg=140), "100..130"),
    (d("motion.set_target", pan_deg=True), "number"),
    (d("lights.set_color", "#00FF00", zone="moon"), "zone"),
    (d("lights.play_effect", "disco"), "effect"),
    (d("lights.play_effect", "blink", zone="moon"), "zone"),
    (d("animation.play", 7), "animation_id must be a string"),
    (d("behavior.play", ["x"]), "behavior_id must be a string"),
    (d("motion.play_action", True), "action_id must be a string"),
    (d("audio.play", sound_id=1), "sound_id must be a string"),
]


@pytest.mark.parametrize(("directive", "needle"), INVALID, ids=lambda v: getattr(v, "call", v))
def test_invalid(directive: Directive, needle: str) -> None:
    with pytest.raises(DirectiveError) as info:
        validate_directive(directive, ALL)
    assert info.value.kind == "invalid"
    assert info.value.call == directive.call
    assert needle in str(info.value)
    assert info.value.reason


def test_non_finite_motion_is_invalid_not_a_crash() -> None:
    for value in (float("inf"), float("nan")):
        with pytest.raises(DirectiveError) as info:
            validate_directive(
                d("motion.move_to", pan_deg=value, tilt_deg=110, duration_ms=300), ALL
            )
        assert info.value.kind == "invalid"


def test_keyword_only_misuse_names_the_signature() -> None:
    with pytest.raises(DirectiveError) as info:
        validate_directive(d("motion.move_to", 90, 110, 300), ALL)
    assert "pan_deg" in str(info.value)
    assert "motion.move_to(*, pan_deg" in str(info.value)


def test_directive_error_pickles() -> None:
    err = DirectiveError("invalid", "lights.set_color", "color must use #RRGGBB", "hint")
    again = pickle.loads(pickle.dumps(err))
    assert (again.kind, again.call, again.reason, str(again)) == (
        err.kind,
        err.call,
        err.reason,
        str(err),
    )
    assert isinstance(again, ValueError)


def test_validation_is_thread_safe_and_leaves_no_jobs() -> None:
    from agentcade.device import validate

    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(200):
                for v in VALID:
                    validate_directive(v, ALL)
        except DirectiveError as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert validate._validator is not None
    robot = validate._validator[0]
    assert robot._jobs == {}  # every job ACKed by the recording transport was completed


# --- bind_call ---------------------------------------------------------------------------


def test_bind_call_runs_the_sdk_method_on_the_given_robot() -> None:
    transport = _RecordingTransport()
    robot = WatcheRobot(transport)
    run = bind_call(robot, d("lights.set_color", "#00ff00", brightness=0.8))
    assert transport.last is None  # nothing happens until it is called
    assert run() is None
    assert transport.last == (
        "ctrl.light.set",
        {"color": "#00FF00", "brightness": 0.8, "zone": "all"},
    )
    job = bind_call(robot, d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=400))()
    assert isinstance(job, Job)
    assert job.id > 0
    assert transport.last == (
        "ctrl.motion.move_to",
        {"pan_deg": 60, "tilt_deg": 110, "duration_ms": 400, "profile": "ease_in_out"},
    )


def test_bind_call_refuses_calls_that_are_not_allowed() -> None:
    robot = WatcheRobot(_RecordingTransport())
    with pytest.raises(DirectiveError) as info:
        bind_call(robot, d("works.delete", "my_work"))
    assert info.value.kind == "not_allowed"


def test_sdk_signature() -> None:
    sig = sdk_signature("motion.move_to")
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    assert "preset" in sdk_signature("expression_runtime.start").parameters


# --- the proxy ---------------------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.directives: list[Directive] = []
        self.flushes = 0

    def record(self, directive: Directive) -> None:
        self.directives.append(directive)

    async def flush(self) -> None:
        self.flushes += 1


async def test_proxy_records_in_order() -> None:
    robot = RobotProxy(["light", "motion", "expression.runtime.v3", "light"])
    assert robot.capabilities == ("light", "motion", "expression.runtime.v3")
    sink = Sink()
    robot.bind(sink)
    assert await robot.lights.set_color("#00FF00", brightness=0.8) is None
    await robot.motion.move_to(pan_deg=60, tilt_deg=110, duration_ms=400)
    await robot.expression_runtime.start(
        "standby",
        accessory="custom_vector",
        custom_vector_path=STAR,
        custom_accessory_layer="front",
    )
    await robot.lights.off()
    assert [x.to_wire() for x in sink.directives] == [
        {"call": "lights.set_color", "args": ["#00FF00"], "kwargs": {"brightness": 0.8}},
        {
            "call": "motion.move_to",
            "args": [],
            "kwargs": {"pan_deg": 60, "tilt_deg": 110, "duration_ms": 400},
        },
        {
            "call": "expression_runtime.start",
            "args": ["standby"],
            "kwargs": {
                "accessory": "custom_vector",
                "custom_vector_path": STAR,
                "custom_accessory_layer": "front",
            },
        },
        {"call": "lights.off", "args": [], "kwargs": {}},
    ]
    await flush_directives(robot)
    assert sink.flushes == 1


def traced(robot: RobotProxy, sink: Sink) -> list[dict[str, Any]]:
    """Bind ``robot`` to ``sink`` with a trace; the list fills with its records."""
    records: list[dict[str, Any]] = []
    robot.bind(sink, Trace(records.append))
    return records


async def test_proxy_raises_an_invalid_call_at_once_records_nothing_and_traces_it() -> None:
    robot = RobotProxy(["light", "motion"])
    sink = Sink()
    records = traced(robot, sink)
    with pytest.raises(DirectiveError) as info:
        await robot.lights.set_color("#00FF00", brightness=1.5)
    assert info.value.kind == "invalid"
    with pytest.raises(DirectiveError) as info:
        await robot.motion.move_to(pan_deg=999, tilt_deg=115, duration_ms=400)
    assert info.value.kind == "invalid"
    assert sink.directives == []
    assert [(r["type"], r["call"], r["kind"], r["raised"]) for r in records] == [
        ("directive_skipped", "lights.set_color", "invalid", True),
        ("directive_skipped", "motion.move_to", "invalid", True),
    ]
    assert records[1]["directive"] == "motion.move_to(pan_deg=999, tilt_deg=115, duration_ms=400)"
    assert "pan_deg" in records[1]["reason"]


async def test_proxy_skips_an_undeclared_call_and_traces_it() -> None:
    robot = RobotProxy(["light"])
    sink = Sink()
    records = traced(robot, sink)
    assert await robot.motion.move_to(pan_deg=60, tilt_deg=110, duration_ms=400) is None
    assert await robot.motion.move_to(90, 110, 300) is None  # capability first
    await robot.lights.off()
    assert [d.call for d in sink.directives] == ["lights.off"]
    assert [(r["call"], r["kind"], r["raised"]) for r in records] == [
        ("motion.move_to", "undeclared", False),
        ("motion.move_to", "undeclared", False),
    ]
    assert "motion" in records[0]["hint"]


async def test_proxy_traces_a_call_that_is_not_open() -> None:
    robot = RobotProxy(["light"])
    records = traced(robot, Sink())
    with pytest.raises(DirectiveError):
        robot.camera.capture  # noqa: B018
    with pytest.raises(DirectiveError):
        robot.lights.blink  # noqa: B018
    assert [(r["call"], r["kind"], r["raised"]) for r in records] == [
        ("camera", "not_allowed", True),
        ("lights.blink", "not_allowed", True),
    ]


async def test_proxy_trace_names_the_tool_that_made_the_call() -> None:
    robot = RobotProxy([])
    records = traced(robot, Sink())
    with caller_scope("celebrate"):
        await robot.lights.set_color("#00FF00")
    await robot.lights.off()
    assert [r["tool"] for r in records] == ["celebrate", None]


async def test_proxy_undeclared_outside_a_turn_still_raises() -> None:
    robot = RobotProxy([])
    with pytest.raises(RuntimeError, match="outside a game turn"):
        await robot.lights.off()


async def test_proxy_outside_a_turn() -> None:
    robot = RobotProxy(["light"])
    with pytest.raises(RuntimeError, match="outside a game turn"):
        await robot.lights.set_color("#00FF00")
    with pytest.raises(RuntimeError, match="outside a game turn"):
        await flush_directives(robot)
    sink = Sink()
    robot.bind(sink)
    await robot.lights.off()
    robot.bind(None)
    with pytest.raises(RuntimeError, match="outside a game turn"):
        await robot.lights.off()
    assert len(sink.directives) == 1


@pytest.mark.parametrize(
    ("get", "needle"),
    [
        (lambda r: r.microphone, "lights.set_color"),
        (lambda r: r.camera.capture, "lights.set_color"),
        (lambda r: r.works.delete, "Allowed calls of works: works.play, works.play_expression"),
        (lambda r: r.audio.play_pcm, "Allowed calls of audio: audio.play"),
        (lambda r: r.audio.play_file, "audio.play"),
        (lambda r: r.expression_runtime.set_audio_follow, "expression_runtime.start"),
        (lambda r: r.lights.blink, "lights.play_effect"),
    ],
)
def test_proxy_attributes_that_are_not_allowed(get: Any, needle: str) -> None:
    robot = RobotProxy(ALL)
    with pytest.raises(DirectiveError) as info:
        get(robot)
    assert info.value.kind == "not_allowed"
    assert needle in str(info.value)


def test_proxy_private_names_are_plain_attribute_errors() -> None:
    robot = RobotProxy(ALL)
    assert not hasattr(robot, "_nope")
    assert not hasattr(robot.lights, "__aenter__")


def test_proxy_methods_look_like_the_sdk() -> None:
    robot = RobotProxy(ALL)
    for call in ALLOWED_CALLS:
        domain, name = call.split(".")
        method = getattr(getattr(robot, domain), name)
        assert inspect.iscoroutinefunction(method)
        sdk = sdk_signature(call)
        assert list(inspect.signature(method).parameters) == list(sdk.parameters)


async def test_proxy_sends_json_safe_values() -> None:
    from enum import StrEnum

    class Colour(StrEnum):
        GREEN = "#00FF00"

    robot = RobotProxy(["light", "motion", "expression.runtime.v3"])
    sink = Sink()
    robot.bind(sink)
    await robot.lights.set_color(Colour.GREEN, brightness=1)
    await robot.expression_runtime.update(custom_vector_path=STAR.upper())
    assert sink.directives[0].args == ["#00FF00"]
    assert type(sink.directives[0].args[0]) is str
    with pytest.raises(DirectiveError, match="encode_vector") as info:
        await robot.expression_runtime.update(custom_vector_path=[Stroke([(1, 1)])])
    assert info.value.kind == "invalid"
    with pytest.raises(DirectiveError, match="finite") as info:
        await robot.lights.set_color("#00FF00", brightness=float("nan"))
    with pytest.raises(DirectiveError, match="object"):
        await robot.lights.set_color(object())
    assert len(sink.directives) == 2


async def test_proxy_tracks_display_ownership_like_the_sdk() -> None:
    robot = RobotProxy(ALL)
    robot.bind(Sink())
    assert not robot.owns_display
    await robot.expression_runtime.start("standby")
    assert robot.owns_display
    await robot.expression_runtime.update(preset="thinking")
    assert robot.owns_display
    await robot.animation.play("happy")
    assert not robot.owns_display
    await robot.expression_runtime.start("standby")
    await robot.expression_runtime.stop()
    assert not robot.owns_display
    with pytest.raises(DirectiveError):
        await robot.expression_runtime.start("sleepy")
    assert not robot.owns_display  # a refused call changes nothing


def test_a_dropped_proxy_is_freed_without_the_garbage_collector() -> None:
    """Sessions come and go: their proxies must not wait for a full GC pass (no cycles)."""
    import gc
    import weakref

    gc.disable()
    try:
        proxy = RobotProxy(["light"])
        domain = proxy.lights
        gone = weakref.ref(proxy)
        del proxy, domain
        assert gone() is None
    finally:
        gc.enable()
