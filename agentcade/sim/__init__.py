"""The simulated robot: ``--robot sim`` (``run``, ``play``, ``e2e``) and every robot test.

The device side of the robot SDK's wire protocol, with its Daemon and control port,
microphone, speaker and back touch, reached by the real ``watcherobot`` SDK over a socket.
One concept a module:

* :mod:`~agentcade.sim.device`: ``SimDevice``, the link (a WebSocket server) and the fake
  Daemon around it (control port, dropping the robot, closing or stalling the sockets);
* :mod:`~agentcade.sim.firmware`: the commands it obeys and the Jobs it runs;
* :mod:`~agentcade.sim.state`: the device state (lights, head, what plays, the screen);
* :mod:`~agentcade.sim.screen`: the screen drawn as text, ASCII and PNG;
* :mod:`~agentcade.sim.audio`: the microphone, speaker and back touch;
* :mod:`~agentcade.sim.room`: the room (``Room`` / ``parse_room``: fan noise, television
  bursts, a quiet child, the robot's own echo), and :mod:`~agentcade.sim.child`, the
  child's voice that speaks into it;
* :mod:`~agentcade.sim.robot`: ``open_sim_robot`` (a ``SimRobot``: the real SDK robot
  connected to a device in this process) and ``WallClock``;
* :mod:`~agentcade.sim.process`: ``open_sim_process_robot``, the device in a process of its
  own, whose clock never waits for a busy host (not imported here: the child process is
  ``python -m agentcade.sim.process``);
* :mod:`~agentcade.sim.daemon_harness`: the robot SDK's *real* Daemon with this robot paired
  to it over the SDK's LAN pairing (:mod:`~agentcade.sim.lan_robot`), only ever inside a
  private network namespace (:mod:`~agentcade.sim.netns`; Linux, root), running agentcade as
  its Application (``e2e --robot daemon``, ``tests/test_daemon.py``; not imported here);
  :mod:`~agentcade.sim.program`, a program whose output is waited on by pattern.

The public test kit (a fake model server, the Daemon harness, ...) is
:mod:`agentcade.testing`; the product's wiring imports this package, never that one.
"""

from agentcade.sim.device import SimDevice as SimDevice
from agentcade.sim.robot import (
    SimRobot as SimRobot,
    WallClock as WallClock,
    open_sim_robot as open_sim_robot,
)
from agentcade.sim.room import Room as Room, parse_room as parse_room

__all__ = [
    "Room",
    "SimDevice",
    "SimRobot",
    "WallClock",
    "open_sim_robot",
    "parse_room",
]
