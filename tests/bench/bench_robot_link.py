"""The robot link: what a lost robot costs, through the real SDK against the simulated Daemon.

Run: ``.venv/bin/python tests/bench/bench_robot_link.py``. Prints one figure a line:

* 7 directives through the output queue while the Daemon has no robot (each used to wait
  out the 5 s command timeout: 35 s);
* ``aclose`` when the robot vanished, known (device dropped) and unknown (a stalled link),
  with the SDK owning a display (used to be 10 s; the Daemon's window is 3 s);
* from the device's return (``daemon.device.state`` online) to directives running again;
* from the Daemon socket's return (refusing, then accepting) to directives running again;
* from a command sent into a stalled link to directives running again on a new session.

The command timeout is the default of ``play``/``run`` (5 s).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agentcade.core.protocol import Directive, GameReply
from agentcade.device.robots import DeviceError, open_robot
from agentcade.main.output import OutputQueue
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.testing.timed_robot import Game, recording_trace

TIMEOUT = 5.0
SEVEN = [
    Directive(call="lights.set_color", args=["#00FF00"]),
    Directive(call="animation.play", args=["happy"]),
    Directive(call="motion.move_to", kwargs={"pan_deg": 60, "tilt_deg": 110, "duration_ms": 300}),
    Directive(call="lights.off"),
    Directive(call="expression_runtime.start", args=["thinking"]),
    Directive(call="motion.play_action", args=["wave"]),
    Directive(call="audio.play", args=["ding"]),
]


async def until(predicate: Callable[[], bool], limit: float = 30.0) -> float:
    started = time.monotonic()
    with trio.fail_after(limit):
        while not predicate():  # noqa: ASYNC110 - state the SDK's threads change
            await trio.sleep(0.005)
    return time.monotonic() - started


def figure(label: str, seconds: float) -> None:
    print(f"{label:<62} {seconds:7.2f} s", flush=True)


async def seven_with_no_robot() -> None:
    device = SimDevice()
    device.drop_device()
    trace, records = recording_trace()
    async with trio.open_nursery() as nursery:
        await nursery.start(device.serve)
        assert device.control_url is not None
        os.environ["WATCHER_RUNTIME_CONTROL_PORT"] = device.control_url.rsplit(":", 1)[1]
        assert device.url is not None
        async with open_robot(device.url, trace=trace, notice=None, out=io.StringIO()) as robot:
            queue = OutputQueue(robot, trace=trace)
            await nursery.start(queue.run)
            started = time.monotonic()
            await queue.put(GameReply(text="好", directives=SEVEN), game=Game())
            await queue.drain()
            figure("7 directives, Daemon without a robot (was 35 s)", time.monotonic() - started)
        nursery.cancel_scope.cancel()
    assert len(records.of("directive_skipped")) == 7


async def close_when_vanished(how: str) -> None:
    device = SimDevice()
    async with open_sim_robot(device=device, command_timeout=TIMEOUT, out=io.StringIO()) as robot:
        await robot.execute(SEVEN[4])  # the SDK owns a display: close has clean-up to send
        if how == "dropped":
            device.drop_device()
            await until(lambda: not robot.online)
        else:
            device.stall_link()
        started = time.monotonic()
        await robot.aclose()
        figure(f"close, robot vanished ({how}) (was 10 s, must be <= 3)", time.monotonic() - started)


async def back_after_device_returns() -> None:
    device = SimDevice()
    async with open_sim_robot(device=device, command_timeout=TIMEOUT, out=io.StringIO()) as robot:
        device.drop_device()
        await until(lambda: not robot.online)
        started = time.monotonic()
        device.bring_back_device()
        await until(lambda: robot.online)
        await robot.execute(SEVEN[0])
        figure("device back -> directive done (daemon.device.state)", time.monotonic() - started)


async def back_after_socket_returns() -> None:
    device = SimDevice()
    async with open_sim_robot(device=device, command_timeout=TIMEOUT, out=io.StringIO()) as robot:
        device.close_sockets(refuse=True)
        await until(lambda: not robot.online)
        await trio.sleep(2.0)  # the Daemon is away a while: the backoff has grown
        started = time.monotonic()
        device.reopen()
        await until(lambda: robot.online)
        await robot.execute(SEVEN[0])
        figure("Daemon socket back after 2 s -> directive done", time.monotonic() - started)


async def back_after_stall() -> None:
    device = SimDevice()
    async with open_sim_robot(device=device, command_timeout=TIMEOUT, out=io.StringIO()) as robot:
        device.stall_link()
        started = time.monotonic()
        with contextlib.suppress(DeviceError):
            await robot.execute(SEVEN[0])
        failed = time.monotonic() - started
        await until(lambda: robot.online and robot.reconnects == 1)
        await robot.execute(SEVEN[0])
        figure("stalled link: the command in flight fails after", failed)
        figure("stalled link: command sent -> new session, directive done", time.monotonic() - started)


async def main() -> None:
    await seven_with_no_robot()
    await close_when_vanished("dropped")
    await close_when_vanished("stalled")
    await back_after_device_returns()
    await back_after_socket_returns()
    await back_after_stall()


if __name__ == "__main__":
    trio.run(main)
