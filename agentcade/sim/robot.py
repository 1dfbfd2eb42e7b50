"""Opening the simulated robot: a device in this process, a real SDK robot connected to it.

:func:`open_sim_robot` starts a :class:`~agentcade.sim.device.SimDevice` in a nursery and
connects a :class:`SimRobot` (an :class:`~agentcade.device.robots.SdkRobot` over the real
``DesktopRobotSession`` and ``WatcheRobot``) to it, watched like any robot. The same robot in
a process of its own is :mod:`agentcade.sim.process`'s, on :class:`WallClock`, the clock both
processes read.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TextIO

import trio

from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.daemon import ask_daemon
from agentcade.device.sdk_robot import SdkRobot, watched
from agentcade.sim.device import SimDevice

__all__ = ["SimRobot", "WallClock", "open_sim_robot"]


class SimRobot(SdkRobot):
    """An :class:`SdkRobot` whose device is a :class:`SimDevice` (``.device``)."""

    device: SimDevice


class WallClock(trio.abc.Clock):
    """``time.perf_counter()`` as a trio clock: a device in a process of its own
    (:mod:`agentcade.sim.process`) and a host or bench that runs with this clock too
    read the same times (trio's default clock starts at a random offset in each run)."""

    def start_clock(self) -> None:
        pass

    def current_time(self) -> float:
        return time.perf_counter()

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return deadline - time.perf_counter()


@asynccontextmanager
async def open_sim_robot(
    *,
    device: SimDevice | None = None,
    command_timeout: float = 2.0,
    out: TextIO | None = None,
    trace: Trace = NULL_TRACE,
    notice: Callable[[str], None] | None = None,
) -> AsyncIterator[SimRobot]:
    """Start a simulated device and connect a real SDK robot to it over a socket.

    ``robot.device`` is the device (state, render). The robot's link is watched
    (:meth:`SdkRobot.watch`, asking the simulated control port), so it reconnects when the
    device's hooks take it away. Leaving the block closes the SDK robot and stops the device.
    (A robot whose clock must not wait for a busy host: :mod:`agentcade.sim.process`.)
    """
    device = device or SimDevice()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(device.serve)
        assert device.control_url is not None
        robot = await SimRobot.connect(
            url,
            command_timeout=command_timeout,
            out=out,
            name="sim",
            control=partial(ask_daemon, device.control_url),
        )
        assert isinstance(robot, SimRobot)
        robot.device = device
        try:
            async with watched(robot, trace=trace, notice=notice):
                yield robot
        finally:
            nursery.cancel_scope.cancel()
