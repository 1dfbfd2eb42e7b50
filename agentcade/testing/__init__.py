"""Tools for testing games and the host, like ``trio.testing``: public and documented.

A game author's own tests use the same parts agentcade's tests do:

* ``serve_fake_openai`` / ``FakeOpenAI`` (``Reply``, ``Fail``, ``Garbage``, ``Hang``): a
  scripted OpenAI-compatible chat-completions server on a real 127.0.0.1 port, so the real
  ``openai`` client (and so a real ``SkillAgent``) talks to it;
* ``TimedRobot``: a robot whose Jobs take a fixed time on trio's clock, for exact tests
  under ``autojump_clock``; ``recording_trace`` collects trace records into ``Records``;
* ``Program`` / ``AgentcadeProcess``: a real process whose output is waited on by pattern,
  and ``python -m agentcade ...`` (``play``, ``serve``, ``run``) driven line by line;
* ``cpu_load``: CPU-bound processes beside a test or a bench (a busy desktop);
* ``open_daemon_harness`` (a ``DaemonHarness``; Linux, as root): the robot SDK's real
  Daemon with the simulated robot paired to it over the SDK's LAN pairing (the robot's
  network side: ``agentcade.sim.lan_robot``), the Application and ``agentcade run`` as
  programs, all inside a private network namespace (``agentcade.sim.netns``); it lives in
  :mod:`agentcade.sim.daemon_harness`, because ``agentcade e2e --robot daemon`` uses it too;
* ``agentcade.testing.ear`` (with the ``ear`` extra): ``Ear``, an offline Whisper base that
  listens to what the robot said, and ``heard_share`` to score it (not imported here: it
  needs faster-whisper).

The simulated robot itself (``SimDevice``, ``open_sim_robot``, ``Room``) is a feature of the
product (``--robot sim``): :mod:`agentcade.sim`. Nothing here is used while a family plays,
nor by ``play``, ``run`` or ``e2e``: only tests and benches import it.
"""

from agentcade.sim.daemon_harness import (
    DaemonHarness as DaemonHarness,
    open_daemon_harness as open_daemon_harness,
)
from agentcade.testing.fake_openai import (
    Fail as Fail,
    FakeOpenAI as FakeOpenAI,
    Garbage as Garbage,
    Hang as Hang,
    Reply as Reply,
    serve_fake_openai as serve_fake_openai,
)
from agentcade.testing.load import cpu_load as cpu_load
from agentcade.testing.process import AgentcadeProcess as AgentcadeProcess, Program as Program
from agentcade.testing.timed_robot import (
    Records as Records,
    TimedRobot as TimedRobot,
    recording_trace as recording_trace,
)

__all__ = [
    "AgentcadeProcess",
    "DaemonHarness",
    "Fail",
    "FakeOpenAI",
    "Garbage",
    "Hang",
    "Program",
    "Records",
    "Reply",
    "TimedRobot",
    "cpu_load",
    "open_daemon_harness",
    "recording_trace",
    "serve_fake_openai",
]
