"""Robots: the console robot, and the simulated device driven through the REAL SDK.

The sim tests connect ``watcherobot.desktop_session.DesktopRobotSession`` +
``watcherobot.robot.WatcheRobot`` to :class:`~agentcade.sim.SimDevice` over a
loopback socket, so they run in real time (the SDK has its own threads and asyncio loop).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable

import pytest
import trio
from watcherobot.job import JobState

from agentcade.core.allowlist import ALLOWED_CALLS, FRONT_PAN, FRONT_TILT
from agentcade.core.protocol import Directive
from agentcade.core.vector import Stroke, decode_vector, encode_vector
from agentcade.device.robots import ConsoleRobot, DeviceError, SdkRobot
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.sim.screen import ascii_raster
from agentcade.sim.state import SIM_ANIMATIONS, SIM_CAPABILITIES, SimState, SimTimings
from agentcade.testing.timed_robot import d, recording_trace

# robot-sdk.md §2's worked example: a horizontal bar and a bent stroke.
SDK_EXAMPLE = "0102040200640064012c0064080300ce003200ce00c800fa00fa"
CROSS = encode_vector([Stroke([(20, 206), (391, 206)], 8), Stroke([(206, 20), (206, 391)], 8)])


async def test_console_robot_prints_and_completes_jobs_at_once() -> None:
    out = io.StringIO()
    robot = ConsoleRobot(out)
    assert await robot.execute(d("lights.set_color", "#00FF00")) is None
    job = await robot.execute(d("behavior.play", "desktop_expression_panel"))
    assert await robot.wait_job(job, 10) == "completed"
    await robot.speak("你好")
    await robot.aclose()
    assert out.getvalue().splitlines() == [
        "  [机器人] lights.set_color('#00FF00')",
        "  [机器人] behavior.play('desktop_expression_panel')",
        "小懒：你好",
    ]


# --- handshake -------------------------------------------------------------------------------


async def test_handshake_and_ready_capabilities_through_the_real_sdk_session() -> None:
    started = time.monotonic()
    async with open_sim_robot(out=io.StringIO()) as robot:
        connected = time.monotonic() - started
        assert robot.capabilities == SIM_CAPABILITIES
        for capability in set(ALLOWED_CALLS.values()):
            assert capability in robot.capabilities
        assert robot.sdk.supports("expression.runtime.v3")
        assert robot.sdk.animation.available_ids == SIM_ANIMATIONS
        assert robot.sdk.device_info["device_id"] == "SIM-0001"
        dev = robot.device
        assert dev.received[0] == ("sys.sdk.ready.get", {})
        # ready arrives before its ACK, so start() does not sit out the 1 s ready wait
        assert connected < 0.9
        pong = await robot.call(lambda: robot.sdk._transport.send_command("sys.ping", {"n": 7}))
        assert pong["type"] == "sys.pong"
        assert pong["data"]["n"] == 7


async def test_connect_failure_is_a_device_error() -> None:
    with pytest.raises(DeviceError) as info:
        await SdkRobot.connect("ws://127.0.0.1:9", start_timeout=2.0)
    assert info.value.kind == "unavailable"


# --- every kind of directive changes the device ------------------------------------------------

Check = Callable[[SimState], bool]

CASES: list[tuple[Directive, Check]] = [
    (
        d("lights.set_color", "#00ff00", brightness=0.8, zone="side"),
        lambda s: (
            (s.lights.on, s.lights.color, s.lights.brightness, s.lights.zone)
            == (True, "#00FF00", 0.8, "side")
        ),
    ),
    (
        d("lights.play_effect", "breathing", color="#FF8800", period_ms=800, repeat=0),
        lambda s: (s.lights.effect, s.lights.color, s.lights.repeat) == ("breathing", "#FF8800", 0),
    ),
    (d("lights.off"), lambda s: not s.lights.on),
    (
        d("animation.play", "happy"),
        lambda s: s.screen == "animation:happy" and s.animation == "happy",
    ),
    (d("animation.prefetch", "sad"), lambda s: s.screen == "standby"),
    (
        d("behavior.play", "desktop_expression_panel"),
        lambda s: s.behavior == "desktop_expression_panel",
    ),
    (
        d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=100),
        lambda s: s.moving_to == (60, 110),
    ),
    (d("motion.set_target", pan_deg=120), lambda s: s.head == (120, FRONT_TILT)),
    (d("motion.play_action", "wave"), lambda s: s.action == "wave"),
    (d("audio.play", "ding"), lambda s: s.sound == "ding"),
    (
        d("expression_runtime.start", "thinking", gaze_x=0.5, color="#A1F03C"),
        lambda s: (
            s.screen == "expression"
            and s.expression.preset == "thinking"
            and s.expression.params["gaze_x"] == 0.5
            and s.expression.params["color_rgb565"] == 42887
        ),
    ),
    (d("expressions.play_official", "smile"), lambda s: s.screen == "official:smile"),
    (d("works.play", "my_work_1"), lambda s: s.screen == "work:my_work_1"),
    (
        d("works.play_expression", "my_work_1", clip_id="intro:1"),
        lambda s: s.screen == "work:my_work_1/intro:1",
    ),
]


@pytest.fixture
async def sim():
    async with open_sim_robot(out=io.StringIO()) as robot:
        yield robot
        assert robot.device.errors == []


@pytest.mark.parametrize(("directive", "check"), CASES, ids=[c[0].describe() for c in CASES])
async def test_each_directive_changes_the_sim(sim, directive: Directive, check: Check) -> None:
    await sim.execute(directive)
    assert check(sim.device.state), sim.device.describe()


async def test_stops_and_updates_change_the_sim(sim) -> None:
    dev = sim.device
    await sim.execute(d("animation.play", "happy"))
    await sim.execute(d("animation.stop"))
    assert (dev.state.animation, dev.state.screen) == (None, "standby")
    await sim.execute(d("behavior.play", "desktop_expression_panel"))
    await sim.execute(d("behavior.stop"))
    assert (dev.state.behavior, dev.state.screen) == (None, "standby")
    await sim.execute(d("motion.play_action", "wave"))
    await sim.execute(d("motion.stop"))
    assert dev.state.action is None
    await sim.execute(d("expression_runtime.start", "standby"))
    await sim.execute(d("expression_runtime.update", preset="speaking", openness=0.5))
    assert (dev.state.expression.preset, dev.state.expression.params["openness"]) == (
        "speaking",
        0.5,
    )
    await sim.execute(d("expression_runtime.stop"))
    assert (dev.state.screen, dev.state.expression.running) == ("standby", False)
    assert [e[1:] for e in dev.events if e[1] == "cancelled"] == [
        ("cancelled", "stopped"),
        ("cancelled", "stopped"),
        ("cancelled", "stopped"),
    ]


# --- device refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("directive", "reason"),
    [
        (d("lights.set_color", "#00FF00", zone="front"), "invalid_zone"),
        (d("lights.play_effect", "sparkle"), "unknown_effect"),
        (d("animation.play", "dance"), "unknown_animation"),
        (d("motion.move_to", pan_deg=10, tilt_deg=110, duration_ms=300), "pan_out_of_range"),
        (d("motion.set_target", tilt_deg=140), "tilt_out_of_range"),
        (d("expression_runtime.update", preset="thinking"), "expression_runtime_not_running"),
    ],
)
async def test_the_sim_nacks_bad_values(sim, directive: Directive, reason: str) -> None:
    with pytest.raises(DeviceError) as info:
        await sim.execute(directive)
    assert (info.value.kind, info.value.reason, info.value.call) == (
        "rejected",
        reason,
        directive.call,
    )


async def test_head_zone_is_sent_as_side(sim) -> None:
    await sim.execute(d("lights.set_color", "#112233", zone="head"))
    assert sim.device.received[-1] == (
        "ctrl.light.set",
        {"color": "#112233", "brightness": 1.0, "zone": "side"},
    )


async def test_closed_robot_is_unavailable() -> None:
    async with open_sim_robot(out=io.StringIO()) as robot:
        pass
    with pytest.raises(DeviceError) as info:
        await robot.execute(d("lights.off"))
    assert info.value.kind == "unavailable"


# --- jobs ----------------------------------------------------------------------------------------


async def test_a_move_completes_after_its_duration(sim) -> None:
    job = await sim.execute(d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=300))
    assert job is not None
    assert sim.device.state.head == (FRONT_PAN, FRONT_TILT)
    started = time.monotonic()
    assert await sim.wait_job(job, 5) == "completed"
    assert 0.25 < time.monotonic() - started < 0.6
    assert sim.device.state.head == (60, 110)
    assert sim.device.state.moving_to is None


async def test_a_job_past_the_limit_is_a_timeout_and_keeps_running(sim) -> None:
    job = await sim.execute(d("behavior.play", "desktop_expression_panel"))
    started = time.monotonic()
    assert await sim.wait_job(job, 0.3) == "timeout"
    assert 0.25 < time.monotonic() - started < 0.6
    assert job.state is JobState.RUNNING
    assert sim.device.running("behavior") == [job.id]


async def test_cancelling_the_wait_cancels_the_job(sim) -> None:
    job = await sim.execute(d("lights.play_effect", "rainbow", repeat=0))
    with trio.move_on_after(0.3):
        await sim.wait_job(job, 10)
    assert ("ctrl.job.cancel", {"operation_id": job.id}) in sim.device.received
    assert sim.device.events[-1] == (job.id, "cancelled", "cancel_requested")
    assert sim.device.state.lights.effect is None
    assert await sim.wait_job(job, 2) == "cancelled"
    assert job.state is JobState.CANCELLED


async def test_a_superseded_animation_is_cancelled(sim) -> None:
    first = await sim.execute(d("animation.play", "happy"))
    second = await sim.execute(d("animation.play", "sad"))
    assert await sim.wait_job(first, 1) == "cancelled"
    assert sim.device.state.screen == "animation:sad"
    assert await sim.wait_job(second, 3) == "completed"
    assert sim.device.state.screen == "standby"


async def test_job_durations_follow_the_timings() -> None:
    device = SimDevice(timings=SimTimings(animation=0.2, audio=0.1))
    async with open_sim_robot(device=device, out=io.StringIO()) as robot:
        started = time.monotonic()
        job = await robot.execute(d("animation.play", "happy"))
        assert job is not None
        assert await robot.wait_job(job, 5) == "completed"
        assert 0.15 < time.monotonic() - started < 0.5


# --- the screen ----------------------------------------------------------------------------------


async def test_screen_renders_the_drawing_as_text_and_png(sim, tmp_path) -> None:
    await sim.execute(
        d(
            "expression_runtime.start",
            "standby",
            accessory="custom_vector",
            custom_vector_path=CROSS,
            custom_accessory_layer="front",
        )
    )
    dev = sim.device
    assert dev.state.expression.custom_vector_path == CROSS
    assert dev.state.expression.strokes() == decode_vector(CROSS)
    text = dev.render_text()
    lines = text.splitlines()
    assert (
        lines[0]
        == "screen: expression preset=standby accessory=custom_vector (2 strokes, 4 points)"
    )
    raster = lines[lines.index("+" + "-" * 40 + "+") :]
    assert len(raster) == 22
    # 412 px -> 40 columns x 20 rows: x 20..391 is columns 1..37, y 20..391 is rows 0..18
    assert raster[1 + 206 * 20 // 412] == "| " + "#" * 37 + "  |"  # the bar at y=206
    column = [row[1 + 206 * 40 // 412] for row in raster[1:-1]]
    assert "".join(column) == "#" * 19 + " "  # the bar at x=206

    png = dev.render_png(tmp_path / "screen.png")
    assert png.startswith(b"\x89PNG")
    assert (tmp_path / "screen.png").read_bytes() == png
    from PIL import Image

    image = Image.open(tmp_path / "screen.png").convert("L")
    assert image.size == (412, 412)
    assert image.getpixel((100, 206)) == 255  # on the bar
    assert image.getpixel((100, 100)) == 0  # off the drawing


def test_ascii_raster_of_the_sdk_example() -> None:
    raster = ascii_raster(decode_vector(SDK_EXAMPLE)).splitlines()
    assert raster[0] == raster[-1] == "+" + "-" * 40 + "+"
    bar_row = 100 * 20 // 412 + 1
    assert raster[bar_row][1 + 100 * 40 // 412 : 1 + 300 * 40 // 412 + 1].strip("#") == ""


async def test_screen_without_a_drawing(sim) -> None:
    await sim.execute(d("expressions.play_official", "smile"))
    assert sim.device.render_text().splitlines()[0] == "screen: official:smile"
    assert sim.device.render_png().startswith(b"\x89PNG")


# --- the device without a ready answer ---------------------------------------------------------


async def test_device_info_is_empty_when_ready_is_not_answered() -> None:
    device = SimDevice(answer_ready=False)
    started = time.monotonic()
    async with open_sim_robot(device=device, out=io.StringIO()) as robot:
        assert time.monotonic() - started >= 0.9  # the SDK's 1 s ready wait
        assert robot.capabilities == ()


# --- open_robot -----------------------------------------------------------------------------


async def test_open_robot_kinds(monkeypatch) -> None:
    from agentcade.testing.timed_robot import recording_trace
    from agentcade.wiring.robot import open_robot

    trace, records = recording_trace()
    out = io.StringIO()
    async with open_robot("console", trace=trace, out=out) as robot:
        await robot.speak("在")
    assert out.getvalue() == "小懒：在\n"
    async with open_robot("sim", trace=trace, out=out) as robot:
        assert robot.capabilities == SIM_CAPABILITIES
    assert [r["robot"] for r in records.of("robot_connected")] == ["console", "sim"]
    with pytest.raises(ValueError, match="unknown robot"):
        async with open_robot("toaster"):
            pass
    for name in ("WATCHER_APP_DESKTOP_WS_URL", "WATCHER_APP_DEVICE_WS_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(DeviceError, match="WATCHER_APP"):
        async with open_robot("app"):
            pass


# --- the link: ask the Daemon first, skip while away, reconnect, close in time -----------------
#
# The Daemon around the simulated device answers its control port and sends
# ``daemon.device.state``; the robot is the real SDK session over real sockets.
# Wall-clock time here: the SDK works in threads, which trio's mock clock cannot see (it
# would jump past them), so a wait polls its condition with a bound (``until``).


@pytest.fixture
async def daemon(nursery, monkeypatch):
    """A simulated Daemon + device; ``WATCHER_RUNTIME_CONTROL_PORT`` points at its control port."""
    device = SimDevice()
    await nursery.start(device.serve)
    assert device.control_url is not None
    monkeypatch.setenv("WATCHER_RUNTIME_CONTROL_PORT", device.control_url.rsplit(":", 1)[1])
    yield device
    assert device.errors == []


async def until(predicate: Callable[[], bool], limit: float = 8.0) -> float:
    """Wait (polling) until ``predicate()`` holds; the seconds it took."""
    started = time.monotonic()
    with trio.fail_after(limit):
        while not predicate():  # noqa: ASYNC110 - state the SDK's threads change
            await trio.sleep(0.02)
    return time.monotonic() - started


def lines_of(notices: list[str]) -> Callable[[str], None]:
    return notices.append


SEVEN = [
    d("lights.set_color", "#00FF00"),
    d("animation.play", "happy"),
    d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=300),
    d("lights.off"),
    d("expression_runtime.start", "thinking"),
    d("motion.play_action", "wave"),
    d("audio.play", "ding"),
]


async def test_the_control_port_answers_like_the_daemon(daemon) -> None:
    from agentcade.device.daemon import ask_daemon

    status = await trio.to_thread.run_sync(ask_daemon, daemon.control_url)
    assert status is not None
    assert (status.holder, status.online, status.device_state) == (None, True, "connected")
    daemon.drop_device()
    daemon.holder = "com.example.other"
    status = await trio.to_thread.run_sync(ask_daemon, daemon.control_url)
    assert status is not None
    assert (status.holder, status.online, status.device_state) == (
        "com.example.other",
        False,
        "reconnecting",
    )
    assert await trio.to_thread.run_sync(ask_daemon, "http://127.0.0.1:9") is None


async def test_before_use_one_line_says_the_robot_is_online(daemon) -> None:
    from agentcade.wiring.robot import open_robot

    notices: list[str] = []
    async with open_robot(daemon.url, notice=lines_of(notices), out=io.StringIO()) as robot:
        assert isinstance(robot, SdkRobot)
        assert robot.online
        await robot.execute(d("lights.off"))
    assert notices == [f"已连上 {daemon.url}，机器人在线（SIM-0001），没有别的应用在用它"]


async def test_an_application_holding_the_robot_is_refused_before_connecting(daemon) -> None:
    from agentcade.wiring.robot import open_robot

    daemon.holder = "com.example.other"
    with pytest.raises(DeviceError) as info:
        async with open_robot(daemon.url, notice=None):
            pass
    assert info.value.reason == (
        "机器人正被应用 com.example.other 占用：先运行 watcherobot app stop，再试"
    )
    assert daemon.sessions == 0


async def test_a_robot_not_online_yet_is_used_away_and_comes_back(daemon) -> None:
    from agentcade.wiring.robot import open_robot

    daemon.drop_device()
    notices: list[str] = []
    trace, records = recording_trace()
    async with open_robot(
        daemon.url, trace=trace, notice=lines_of(notices), out=io.StringIO()
    ) as robot:
        assert isinstance(robot, SdkRobot)
        assert not robot.online
        assert notices[0].startswith(f"已连上 {daemon.url}，但 Daemon 说机器人没连上：先只说话")
        daemon.bring_back_device()
        await until(lambda: robot.online)
        assert robot.capabilities == SIM_CAPABILITIES  # learned when it came
        await robot.execute(d("lights.set_color", "#00FF00"))
        assert daemon.state.lights.on
    assert [r["reason"] for r in records.of("robot_lost")] == ["device_offline"]
    assert len(records.of("robot_back")) == 1
    assert notices[-1].startswith("机器人回来了")


async def output_queue_plays(robot, directives, trace) -> None:
    from agentcade.core.protocol import GameReply
    from agentcade.main.output import OutputQueue
    from agentcade.testing.timed_robot import Game

    async with trio.open_nursery() as nursery:
        queue = OutputQueue(robot, trace=trace, job_wait_limit=5)
        await nursery.start(queue.run)
        await queue.put(GameReply(text="好", directives=directives), game=Game())
        await queue.drain()
        nursery.cancel_scope.cancel()


async def test_directives_while_the_device_is_away_are_skipped_at_once(daemon) -> None:
    """Measured before: 7 directives cost 35 s with no robot (a command timeout each)."""
    from agentcade.wiring.robot import open_robot

    daemon.drop_device()
    trace, records = recording_trace()
    async with open_robot(daemon.url, trace=trace, notice=None, out=io.StringIO()) as robot:
        await output_queue_plays(robot, SEVEN, trace)
    skipped = records.of("directive_skipped")
    assert [(r["call"], r["kind"], r["reason"]) for r in skipped] == [
        (directive.call, "robot_away", "device_offline") for directive in SEVEN
    ]
    assert records.of("directive_executed") == []
    assert [t for t in daemon.dropped if not t.startswith("sys.")] == []  # none even sent


@pytest.fixture
async def traced():
    trace, records = recording_trace()
    async with open_sim_robot(out=io.StringIO(), trace=trace) as robot:
        yield robot, records
        assert robot.device.errors == []


async def test_a_device_that_drops_mid_session_is_skipped_then_used_again(traced) -> None:
    sim, records = traced
    dev = sim.device
    await sim.execute(d("lights.set_color", "#00FF00"))
    dev.drop_device()
    await until(lambda: not sim.online)  # daemon.device.state online false
    with pytest.raises(DeviceError) as info:
        await sim.execute(d("lights.off"))
    assert (info.value.kind, dev.dropped) == ("unavailable", [])
    dev.bring_back_device()
    await until(lambda: sim.online)
    await sim.execute(d("lights.off"))
    assert not dev.state.lights.on
    assert [r["type"] for r in records if r["type"].startswith("robot_")] == [
        "robot_lost",
        "robot_back",
    ]


async def test_a_job_in_flight_when_the_device_drops_ends_failed_at_once(sim) -> None:
    job = await sim.execute(d("behavior.play", "desktop_expression_panel"))
    sim.device.drop_device()
    started = time.monotonic()
    assert await sim.wait_job(job, 10) == "failed"
    assert time.monotonic() - started < 2


async def test_a_closed_daemon_socket_is_reopened_with_backoff(traced) -> None:
    sim, records = traced
    dev = sim.device
    first = sim.sdk
    dev.close_sockets(refuse=True)  # the Daemon restarts: closed, then refusing a while
    await until(lambda: not sim.online)
    with pytest.raises(DeviceError):
        await sim.execute(d("lights.off"))
    await until(lambda: dev.refused >= 3)  # a few refused attempts
    dev.reopen()
    took = await until(lambda: sim.online)
    assert took < 3  # the backoff is still short after about a second
    assert sim.sdk is not first
    assert sim.reconnects == 1
    await sim.execute(d("lights.set_color", "#0000FF"))
    assert dev.state.lights.color == "#0000FF"
    assert records.of("robot_lost")[0]["reason"] == "socket_closed"
    assert records.of("robot_back")[0]["reconnects"] == 1


async def test_a_link_that_stalls_with_a_command_in_flight_fails_it_and_recovers(sim) -> None:
    """Before: every later directive timed out, then websockets' ConnectionClosedError
    (keepalive timeout) escaped a command after ~50 s."""
    dev = sim.device
    dev.stall_link()
    started = time.monotonic()
    with pytest.raises(DeviceError) as info:
        await sim.execute(d("lights.set_color", "#00FF00"))
    assert info.value.kind == "timeout"
    assert time.monotonic() - started < sim.command_timeout + 1.5
    # a probe gets no answer either, the Daemon says the robot is there: a new session
    await until(lambda: sim.reconnects == 1 and sim.online)
    await sim.execute(d("lights.set_color", "#00FF00"))
    assert dev.state.lights.on
    assert dev.sessions == 2


async def test_a_keepalive_closed_error_from_the_sdk_is_a_device_error() -> None:
    """The exception a stalled socket's keepalive raised from ``send_command`` (measured
    with the real ``DesktopRobotSession``) becomes ``unavailable``, not a traceback."""
    from watcherobot.robot import WatcheRobot
    from websockets.exceptions import ConnectionClosedError
    from websockets.frames import Close

    class KeepaliveTimedOut:
        capabilities = ("light",)

        def __init__(self) -> None:
            self.device_info: dict[str, str] = {}

        def set_callbacks(self, *callbacks: object) -> None:
            pass

        def send_command(self, *args: object, **kwargs: object) -> dict:
            raise ConnectionClosedError(Close(1011, "keepalive ping timeout"), None)

        def close(self) -> None:
            pass

    robot = SdkRobot(WatcheRobot(KeepaliveTimedOut()))
    with pytest.raises(DeviceError) as info:
        await robot.execute(d("lights.off"))
    assert (info.value.kind, info.value.call) == ("unavailable", "lights.off")
    assert "keepalive ping timeout" in info.value.reason


@pytest.mark.parametrize("how", ["dropped", "stalled"])
async def test_close_takes_under_3_s_when_the_robot_vanished(how: str) -> None:
    """Measured before: 10 s (the SDK's display clean-up waits out two command timeouts)."""
    from agentcade.device.sdk_robot import CLOSE_BUDGET

    device = SimDevice()
    async with open_sim_robot(device=device, command_timeout=5.0, out=io.StringIO()) as robot:
        await robot.execute(d("expression_runtime.start", "thinking"))  # the SDK owns a display
        if how == "dropped":
            device.drop_device()
            await until(lambda: not robot.online)
        else:
            device.stall_link()  # nobody has noticed yet
        started = time.monotonic()
        await robot.aclose()
        took = time.monotonic() - started
    assert took < CLOSE_BUDGET + 0.3 < 3


async def test_leaving_while_reconnecting_is_quick_and_leaks_no_session(daemon) -> None:
    from agentcade.device.sdk_robot import CLOSE_BUDGET
    from agentcade.wiring.robot import open_robot

    async with open_robot(daemon.url, notice=None, out=io.StringIO()) as robot:
        assert isinstance(robot, SdkRobot)
        daemon.close_sockets(refuse=True)
        await until(lambda: not robot.online)
        daemon.hello_delay = 1.0  # the next attempt is mid-handshake when we leave
        daemon.reopen()
        await until(lambda: daemon.open_sockets == 1)
        started = time.monotonic()
    assert time.monotonic() - started < CLOSE_BUDGET
    # the abandoned attempt finishes its handshake, sees the robot closed, lets go
    await until(lambda: daemon.open_sockets == 0, limit=5)
    assert daemon.sessions == 2


async def test_a_flapping_device_ends_up_online_and_used(traced) -> None:
    sim, records = traced
    dev = sim.device
    for _ in range(5):
        dev.drop_device()
        await trio.lowlevel.checkpoint()
        dev.bring_back_device()
    dev.drop_device()
    await until(lambda: not sim.online)
    dev.bring_back_device()
    await until(lambda: sim.online)
    await sim.execute(d("lights.set_color", "#FF0000"))
    assert dev.state.lights.color == "#FF0000"
    kinds = [r["type"] for r in records if r["type"].startswith("robot_")]
    assert kinds[-2:] == ["robot_lost", "robot_back"]
    assert kinds.count("robot_lost") == kinds.count("robot_back")


def test_the_sdk_task_of_a_stopped_sound_logs_nothing_but_other_lost_errors_do(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import asyncio
    import gc

    from watcherobot.errors import WatcheRobotError

    async def send(why: str) -> None:
        raise WatcheRobotError(why)

    async def orphans() -> None:
        tasks = [asyncio.ensure_future(send(why))
                 for why in ("audio stream was replaced", "the socket broke")]
        await asyncio.sleep(0.01)
        del tasks  # nobody read their errors: asyncio logs them as they are collected

    with caplog.at_level("ERROR"):
        asyncio.run(orphans())
        gc.collect()
    lost = [str(r.exc_info[1]) for r in caplog.records if r.exc_info]
    assert lost == ["the socket broke"]
