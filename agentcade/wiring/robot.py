"""Opening the robot a command names, the simulated one included.

``--robot sim`` is the simulated robot (:mod:`agentcade.sim`, a layer above the device), so
it is wired here, at the top, and the device layer never imports the simulator; every other
kind is :func:`agentcade.device.robots.open_robot`'s.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TextIO

from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device import robots
from agentcade.device.robots import Robot
from agentcade.sim import Room, SimDevice, open_sim_robot
from agentcade.sim.process import open_sim_process_robot

__all__ = ["open_robot"]


@asynccontextmanager
async def open_robot(
    spec: str = "console",
    *,
    trace: Trace = NULL_TRACE,
    out: TextIO | None = None,
    notice: Callable[[str], None] | None = robots.print_notice,
    room: Room | None = None,
    sim_speed: float = 1.0,
    own_process: bool = False,
) -> AsyncIterator[Robot]:
    """The robot named by ``spec`` (``sim``: the simulated robot over a real socket, its
    microphone in ``room``, its speaker and microphone ``sim_speed`` times faster than real
    time; with ``own_process``, in a process of its own, as a real robot keeps its own clock
    beside a busy host: :mod:`agentcade.sim.process`, whose hooks are the
    microphone's only — ``play`` reads the screen of one in this process).

    Every other ``spec`` and every error is :func:`agentcade.device.robots.open_robot`'s.
    """
    if spec == "sim" and own_process and not getattr(sys, "frozen", False):
        # (The one-file executable has no ``python -m`` to start the robot's process with:
        # there the simulated robot stays in this one.)
        async with open_sim_process_robot(room=room, speed=sim_speed, trace=trace, out=out,
                                          notice=notice) as remote:
            trace.record("robot_connected", robot=remote.name, url=remote.device.url)
            yield remote
        return
    if spec == "sim":
        device = SimDevice(room=room, audio_speed=sim_speed)
        async with open_sim_robot(device=device, out=out, trace=trace, notice=notice) as sim:
            trace.record("robot_connected", robot=sim.name, url=sim.device.url)
            yield sim
        return
    async with robots.open_robot(spec, trace=trace, out=out, notice=notice) as robot:
        yield robot
