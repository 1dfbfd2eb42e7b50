"""Tools for testing games and the host, like ``trio.testing``: public and documented.

A game author's own tests use the same parts agentcade's tests do:

* ``serve_fake_openai`` / ``FakeOpenAI`` (``Reply``, ``Fail``, ``Garbage``, ``Hang``): a
  scripted OpenAI-compatible chat-completions server on a real 127.0.0.1 port, so the real
  ``openai`` client (and so a real ``SkillAgent``) talks to it;
* ``SimDevice`` / ``open_sim_robot`` (a ``SimRobot``): the simulated robot (the device side of the robot
  SDK's wire protocol, with its Daemon and control port, microphone, speaker and back
  touch), reached by the real ``watcherobot`` SDK over a socket; ``--robot sim`` is this;
* ``Room`` / ``parse_room``: the simulated robot's room (fan noise, television bursts, a
  quiet child, the robot's own echo): ``SimDevice(room=...)``, ``run --room``;
* ``TimedRobot``: a robot whose Jobs take a fixed time on trio's clock, for exact tests
  under ``autojump_clock``; ``recording_trace`` collects trace records into ``Records``;
* ``agentcade.testing.ear`` (with the ``ear`` extra): ``Ear``, an offline Whisper base that
  listens to what the robot said, and ``heard_share`` to score it (not imported here: it
  needs faster-whisper).

Nothing here is used while a family plays: only ``agentcade play/run --robot sim`` and
tests import it.
"""

from agentcade.testing.fake_openai import (
    Fail as Fail,
    FakeOpenAI as FakeOpenAI,
    Garbage as Garbage,
    Hang as Hang,
    Reply as Reply,
    serve_fake_openai as serve_fake_openai,
)
from agentcade.testing.room import Room as Room, parse_room as parse_room
from agentcade.testing.sim import (
    SimDevice as SimDevice,
    SimRobot as SimRobot,
    open_sim_robot as open_sim_robot,
)
from agentcade.testing.timed_robot import (
    Records as Records,
    TimedRobot as TimedRobot,
    recording_trace as recording_trace,
)

__all__ = [
    "Fail",
    "FakeOpenAI",
    "Garbage",
    "Hang",
    "Records",
    "Reply",
    "Room",
    "SimDevice",
    "SimRobot",
    "TimedRobot",
    "open_sim_robot",
    "parse_room",
    "recording_trace",
    "serve_fake_openai",
]
