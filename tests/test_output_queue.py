"""The output queue: order, Job waits and their cap, re-validation, errors, reset, cancel.

Most tests use ``TimedRobot`` (pure trio) under ``autojump_clock``, so times are exact;
the last ones run the queue on the simulated robot over a real socket, in real time.
"""

from __future__ import annotations

import io
from typing import Literal

import pytest
import trio

from agentcade import effects
from agentcade.core.allowlist import FRONT_PAN, FRONT_TILT
from agentcade.core.protocol import Directive, GameReply
from agentcade.core.vector import Stroke, encode_vector
from agentcade.device.proxy import RobotProxy
from agentcade.device.robots import ConsoleRobot, DeviceError
from agentcade.main.output import JOB_WAIT_LIMIT, OutputQueue, reset_directives
from agentcade.sim import open_sim_robot
from agentcade.testing.timed_robot import Game, TimedRobot, d, recording_trace

STAR = encode_vector(
    [Stroke([(206, 60), (250, 350), (60, 160), (350, 160), (160, 350), (206, 60)])]
)


def reply(text: str = "", *directives, session: Literal["active", "ended"] = "active") -> GameReply:
    return GameReply(text=text, directives=list(directives), session=session)


async def test_console_prints_directives_in_order_before_the_text(nursery) -> None:
    out = io.StringIO()
    queue = OutputQueue(ConsoleRobot(out))
    await nursery.start(queue.run)
    await queue.put(
        reply(
            "答对了！",
            d("lights.set_color", "#00FF00", brightness=0.8),
            d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=400),
            d("animation.play", "happy"),
        ),
        game=Game(),
    )
    await queue.put(reply("下一题。"), game=Game())
    await queue.drain()
    assert out.getvalue().splitlines() == [
        "  [机器人] lights.set_color('#00FF00', brightness=0.8)",
        "  [机器人] motion.move_to(pan_deg=60, tilt_deg=110, duration_ms=400)",
        "  [机器人] animation.play('happy')",
        "小懒：答对了！",
        "小懒：下一题。",
    ]


async def test_jobs_are_waited_for_before_the_text(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    start = trio.current_time()
    await queue.put(
        reply(
            "好",
            d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=400),
            d("lights.off"),
            d("animation.play", "happy"),
        ),
        game=Game(),
    )
    await queue.drain()
    assert [(round(t - start, 3), e) for t, e in robot.timeline] == [
        (0.0, "run motion.move_to(pan_deg=60, tilt_deg=110, duration_ms=400)"),
        (0.4, "done motion.move_to"),
        (0.4, "run lights.off()"),
        (0.4, "run animation.play('happy')"),
        (1.9, "done animation.play"),
        (1.9, "say 好"),
    ]
    executed = records.of("directive_executed")
    assert [(r["call"], r["outcome"], r["ms"]) for r in executed] == [
        ("motion.move_to", "completed", 400),
        ("lights.off", "ok", 0),
        ("animation.play", "completed", 1500),
    ]
    assert [r["type"] for r in records] == [
        "directive_executed",
        "directive_executed",
        "directive_executed",
        "spoken",
    ]


async def test_endless_job_is_capped_at_ten_seconds_and_effects_are_not_waited(
    nursery, autojump_clock
) -> None:
    assert JOB_WAIT_LIMIT == 10.0
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    start = trio.current_time()
    await queue.put(reply("灯亮了", d("lights.play_effect", "rainbow", repeat=0)), game=Game())
    await queue.put(reply("开始表演", d("behavior.play", "desktop_expression_panel")), game=Game())
    await queue.drain()
    said = [(round(t - start, 3), e) for t, e in robot.timeline if e.startswith("say")]
    assert said == [(0.0, "say 灯亮了"), (10.0, "say 开始表演")]
    outcomes = [(r["call"], r["outcome"]) for r in records.of("directive_executed")]
    assert outcomes == [("lights.play_effect", "started"), ("behavior.play", "timeout")]
    assert robot.cancelled == []  # past the cap the job keeps running: the reset stops it


async def test_cap_is_configurable(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    queue = OutputQueue(robot, job_wait_limit=2.5)
    await nursery.start(queue.run)
    start = trio.current_time()
    await queue.put(reply("好", d("behavior.play", "desktop_expression_panel")), game=Game())
    await queue.drain()
    assert round(trio.current_time() - start, 3) == 2.5


async def test_remote_game_directives_are_revalidated(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    remote = Game("remote_game", ("light",))
    await queue.put(
        reply(
            "看灯",
            d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=400),  # undeclared
            d("camera.capture"),  # not open to games
            d("lights.set_color", "#00FF00", zone="ceiling"),  # invalid zone
            d("lights.set_color", "#00FF00"),
        ),
        game=remote,
        remote=True,
    )
    await queue.drain()
    assert robot.events() == ["run lights.set_color('#00FF00')", "say 看灯"]
    skipped = records.of("directive_skipped")
    assert [(r["call"], r["kind"], r["game"], r["remote"]) for r in skipped] == [
        ("motion.move_to", "undeclared", "remote_game", True),
        ("camera.capture", "not_allowed", "remote_game", True),
        ("lights.set_color", "invalid", "remote_game", True),
    ]
    assert "motion" in skipped[0]["reason"]
    assert "ceiling" in skipped[2]["reason"]


async def test_host_words_carry_no_directives(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    await queue.put(reply("你好", d("lights.off")), game=None)
    await queue.drain()
    assert robot.events() == ["say 你好"]
    assert records.of("directive_skipped")[0]["kind"] == "undeclared"


async def test_a_device_error_is_recorded_and_the_queue_goes_on(nursery, autojump_clock) -> None:
    robot = TimedRobot(
        fail={
            "lights.set_color": DeviceError("rejected", "lights.set_color", "invalid_zone"),
            "animation.play": DeviceError("timeout", "animation.play", "no reply"),
        }
    )
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    await queue.put(
        reply(
            "继续",
            d("lights.set_color", "#00FF00"),
            d("animation.play", "happy"),
            d("motion.move_to", pan_deg=60, tilt_deg=110, duration_ms=400),
        ),
        game=Game(),
    )
    await queue.put(reply("还在"), game=Game())
    await queue.drain()
    assert robot.events()[-3:] == ["done motion.move_to", "say 继续", "say 还在"]
    executed = records.of("directive_executed")
    assert [(r["call"], r["outcome"], r.get("error"), r.get("reason")) for r in executed] == [
        ("lights.set_color", "error", "rejected", "invalid_zone"),
        ("animation.play", "error", "timeout", "no reply"),
        ("motion.move_to", "completed", None, None),
    ]


async def test_drain_waits_for_everything_queued_so_far(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    queue = OutputQueue(robot)
    await queue.drain()  # nothing queued: returns at once
    await nursery.start(queue.run)
    start = trio.current_time()
    await queue.put(reply("一", d("audio.play", "ding")), game=Game())
    await queue.put(reply("二", d("animation.play", "happy")), game=Game())
    assert not queue.idle
    await queue.drain()
    assert queue.idle
    assert round(trio.current_time() - start, 3) == 2.5
    assert robot.events()[-1] == "say 二"


async def test_reset_comes_after_the_last_sentence(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    game = Game("riddle", ("motion", "expression.runtime.v3"))
    nod = d("motion.move_to", pan_deg=90, tilt_deg=105, duration_ms=300)
    await queue.put(reply("再见", nod, session="ended"), game=game)
    queue.reset_after_session(game)
    await queue.drain()
    assert robot.events() == [
        "run motion.move_to(pan_deg=90, tilt_deg=105, duration_ms=300)",
        "done motion.move_to",
        "say 再见",
        "run motion.stop()",
        f"run motion.move_to(pan_deg={FRONT_PAN}, tilt_deg={FRONT_TILT}, duration_ms=600)",
        "done motion.move_to",
    ]  # the screen was never used: no expression_runtime.stop
    (done,) = records.of("session_reset")
    assert done["game"] == "riddle"
    assert [r.get("reset", False) for r in records.of("directive_executed")] == [False, True, True]


async def test_a_game_that_ran_nothing_gets_no_reset(nursery, autojump_clock) -> None:
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    game = Game("talky", ("light", "motion", "expression.runtime.v3"))
    await queue.put(reply("我只会说话", session="ended"), game=game)
    queue.reset_after_session(game)
    await queue.drain()
    assert robot.events() == ["say 我只会说话"]
    assert records.of("session_reset") == []


def test_reset_covers_only_the_capabilities_given() -> None:
    assert reset_directives(()) == []
    assert [x.call for x in reset_directives(("light",))] == ["lights.off"]
    everything = [
        x.call
        for x in reset_directives(
            (
                "light",
                "animation",
                "behavior",
                "motion",
                "expression.runtime.v3",
                "resource.expression.official",
            )
        )
    ]
    assert everything == [
        "animation.stop",
        "behavior.stop",
        "lights.off",
        "motion.stop",
        "motion.move_to",
        "expression_runtime.stop",
        "animation.play",
    ]


async def test_cancelling_the_queue_cancels_the_job_and_leaves_no_task(autojump_clock) -> None:
    robot = TimedRobot()
    queue = OutputQueue(robot)
    before = trio.lowlevel.current_statistics().tasks_living
    async with trio.open_nursery() as nursery:
        await nursery.start(queue.run)
        await queue.put(reply("跳舞", d("behavior.play", "desktop_expression_panel")), game=Game())
        await queue.put(reply("never said"), game=Game())
        await trio.sleep(1)
        nursery.cancel_scope.cancel()
    assert trio.lowlevel.current_statistics().tasks_living == before
    assert robot.cancelled == ["behavior.play"]
    assert "say never said" not in robot.events()
    with trio.fail_after(1):
        await queue.drain()  # items nobody will play are released
    with pytest.raises(RuntimeError, match="stopped"):
        await queue.put(reply("late"), game=Game())


# --- on the simulated robot, over a real socket (real time) ---------------------------------


async def test_a_session_on_the_sim_then_reset() -> None:
    out = io.StringIO()
    trace, records = recording_trace()
    async with open_sim_robot(out=out) as robot:
        dev = robot.device
        queue = OutputQueue(robot, trace=trace, job_wait_limit=1.0)
        async with trio.open_nursery() as nursery:
            await nursery.start(queue.run)
            game = Game(
                "draw_guess",
                ("light", "motion", "animation", "behavior", "expression.runtime.v3"),
            )
            await queue.put(
                reply(
                    "猜猜我画的是什么",
                    d("lights.play_effect", "breathing", color="#FF8800", repeat=0),
                    d("motion.move_to", pan_deg=60, tilt_deg=120, duration_ms=200),
                    d(
                        "expression_runtime.start",
                        "standby",
                        accessory="custom_vector",
                        custom_vector_path=STAR,
                    ),
                ),
                game=game,
                remote=True,
            )
            await queue.put(
                reply("来跳个舞", d("behavior.play", "desktop_expression_panel")), game=game
            )
            await queue.drain()
            assert dev.state.lights.effect == "breathing"
            assert dev.state.head == (60, 120)
            assert dev.state.behavior == "desktop_expression_panel"  # past the 1 s cap
            await queue.put(reply("不玩了，再见", session="ended"), game=game)
            queue.reset_after_session(game)
            await queue.drain()
            nursery.cancel_scope.cancel()
        st = dev.state
        assert (st.lights.on, st.lights.effect) == (False, None)
        assert st.head == (FRONT_PAN, FRONT_TILT)
        assert st.behavior is None
        assert st.animation is None
        assert st.screen == "standby"
        assert not st.expression.running
        assert dev.running() == []
        assert dev.errors == []
    assert out.getvalue().splitlines() == [
        "小懒：猜猜我画的是什么",
        "小懒：来跳个舞",
        "小懒：不玩了，再见",
    ]
    outcomes = [(r["call"], r["outcome"]) for r in records.of("directive_executed")]
    assert outcomes[:4] == [
        ("lights.play_effect", "started"),
        ("motion.move_to", "completed"),
        ("expression_runtime.start", "ok"),
        ("behavior.play", "timeout"),
    ]
    assert [r["call"] for r in records.of("directive_executed") if r.get("reset")] == [
        "behavior.stop",
        "lights.off",
        "motion.stop",
        "motion.move_to",
        "expression_runtime.stop",
    ]
    kinds = [r["type"] for r in records]
    # the last sentence is spoken before the reset starts
    assert kinds.index("spoken", kinds.index("directive_executed", 4)) < kinds.index(
        "session_reset"
    )


async def test_a_device_nack_on_the_sim_is_recorded_and_the_queue_goes_on() -> None:
    trace, records = recording_trace()
    async with open_sim_robot(out=io.StringIO()) as robot:
        queue = OutputQueue(robot, trace=trace)
        async with trio.open_nursery() as nursery:
            await nursery.start(queue.run)
            await queue.put(
                reply(
                    "好",
                    d("animation.play", "dance"),  # the SDK accepts any id; the device does not
                    d("lights.set_color", "#00FF00", zone="head"),  # host maps head -> side
                ),
                game=Game(),
            )
            await queue.drain()
            nursery.cancel_scope.cancel()
        assert robot.device.state.lights.zone == "side"
    first, second = records.of("directive_executed")
    assert (first["outcome"], first["error"], first["reason"]) == (
        "error",
        "rejected",
        "unknown_animation",
    )
    assert second["outcome"] == "ok"
    assert records.of("spoken")[0]["text"] == "好"


async def test_cancelling_the_queue_cancels_the_job_on_the_sim() -> None:
    async with open_sim_robot(out=io.StringIO()) as robot:
        queue = OutputQueue(robot)
        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                await nursery.start(queue.run)
                await queue.put(
                    reply("跳舞", d("behavior.play", "desktop_expression_panel")), game=Game()
                )
                with trio.fail_after(2):
                    await robot.device.wait_for(lambda s: s.behavior is not None)
                nursery.cancel_scope.cancel()
        dev = robot.device
        assert ("ctrl.job.cancel", {"operation_id": 1}) in dev.received
        assert dev.events[-1] == (1, "cancelled", "cancel_requested")
        assert dev.state.behavior is None


async def test_interrupt_stops_the_reply_playing_and_drops_the_queued_ones(
    nursery, autojump_clock
) -> None:
    robot = TimedRobot()
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    game = Game()
    heard: list[str] = []
    queue.put_nowait(reply("第一句", d("animation.play", "happy")), game=game,
                     after=lambda: heard.append("第一句"))
    queue.put_nowait(reply("第二句"), game=game, after=lambda: heard.append("第二句"))
    queue.reset_after_session(game)
    await trio.sleep(0.5)  # the first reply's animation is running
    queue.interrupt()
    queue.put_nowait(reply("之后的话"), game=game)
    await queue.drain()
    assert robot.cancelled == ["animation.play"]
    assert [e for e in robot.events() if e.startswith("say")] == ["say 之后的话"]
    assert "run animation.stop()" in robot.events()  # the reset still ran
    assert heard == []  # nothing the family did not hear goes into history
    assert [r["text"] for r in records.of("reply_interrupted")] == ["第一句"]
    assert [r["text"] for r in records.of("reply_dropped")] == ["第二句"]


class _Collect:
    """A directive sink for a game's ``RobotProxy``: what ``effects`` recorded."""

    def __init__(self) -> None:
        self.directives: list[Directive] = []

    def record(self, directive: Directive) -> None:
        self.directives.append(directive)

    async def flush(self) -> None:
        await trio.lowlevel.checkpoint()


async def _reaction(face, gesture, *, then=None) -> list[Directive]:
    proxy = RobotProxy(["motion", "expression.runtime.v3"])
    sink = _Collect()
    proxy.bind(sink)
    await effects.react(proxy, face, gesture, then=then)
    return sink.directives


def _at(robot: TimedRobot, prefix: str) -> list[float]:
    return [t for t, e in robot.timeline if e.startswith(prefix)]


async def test_a_verdict_is_spoken_at_once_while_the_head_shakes(nursery, autojump_clock) -> None:
    robot = TimedRobot(speech_per_char=0.2)
    queue = OutputQueue(robot)
    await nursery.start(queue.run)
    start = trio.current_time()
    await queue.put(reply("不对哦，再猜猜", *await _reaction("sorry", "shake_head")), game=Game())
    await queue.drain()
    said = _at(robot, "say")[0] - start
    moves = [t - start for t in _at(robot, "run motion.move_to")]
    assert said == 0  # the sentence does not wait for the five moves
    said_end = _at(robot, "said")[0] - start
    assert len(moves) == 5
    assert moves[0] == 0
    assert moves[1] < said_end


async def test_the_face_stays_until_its_sentence_has_been_said(nursery, autojump_clock) -> None:
    robot = TimedRobot(speech_per_char=0.5)  # 7 characters: 3.5 s, longer than the moves
    queue = OutputQueue(robot)
    await nursery.start(queue.run)
    await queue.put(reply("答对啦，你真棒！", *await _reaction("happy", "nod")), game=Game())
    await queue.drain()
    events = robot.events()
    face = events.index(next(e for e in events if "custom_vector_path" in e))
    said = events.index("said 答对啦，你真棒！")
    back = next(i for i, e in enumerate(events) if "accessory='none'" in e)  # standby eyes
    assert face < events.index("say 答对啦，你真棒！") < said < back
    assert _at(robot, "said")[0] == max(t for t, _ in robot.timeline[:-1])  # put back right after


async def test_a_reaction_returns_to_the_games_picture_after_the_sentence(
    nursery, autojump_clock
) -> None:
    robot = TimedRobot(speech_per_char=0.1)
    queue = OutputQueue(robot)
    await nursery.start(queue.run)
    star = [Stroke([(206, 60), (250, 350), (60, 160), (206, 60)])]
    await queue.put(reply("不对，再看看", *await _reaction("sorry", "shake_head", then=star)),
                    game=Game())
    await queue.drain()
    last = robot.events()[-1]
    assert last.startswith("run expression_runtime.")
    assert "custom_vector_path" in last
    assert encode_vector(star)[:30] in last  # the game's picture, not the face


async def test_a_barge_in_during_a_reaction_still_puts_the_screen_back(
    nursery, autojump_clock
) -> None:
    robot = TimedRobot(speech_per_char=0.5)
    trace, records = recording_trace()
    queue = OutputQueue(robot, trace=trace)
    await nursery.start(queue.run)
    await queue.put(reply("不对哦，再猜猜", *await _reaction("sorry", "shake_head")), game=Game())
    await trio.sleep(0.5)
    queue.interrupt()
    await queue.drain()
    assert "said 不对哦，再猜猜" not in robot.events()
    assert "motion.move_to" in robot.cancelled
    assert "accessory='none'" in robot.events()[-1]  # the standby eyes, not the sorry face
    assert [r["text"] for r in records.of("reply_interrupted")] == ["不对哦，再猜猜"]


async def test_a_drawing_is_complete_before_its_sentence(nursery, autojump_clock) -> None:
    robot = TimedRobot(speech_per_char=0.1)
    queue = OutputQueue(robot)
    await nursery.start(queue.run)
    proxy = RobotProxy(["expression.runtime.v3"])
    sink = _Collect()
    proxy.bind(sink)
    strokes = [Stroke([(60, 60), (350, 60)]), Stroke([(60, 200), (350, 200)])]
    await effects.draw(proxy, effects.stroke_steps(strokes), interval=0)
    await queue.put(reply("画好啦", *sink.directives), game=Game())
    await queue.drain()
    events = robot.events()
    assert all("expression_runtime" in e for e in events[: len(sink.directives)])
    assert events[len(sink.directives)] == "say 画好啦"
