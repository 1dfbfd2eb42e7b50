"""The simulated robot in a process of its own: a robot's clock beside a busy host.

A real robot keeps time with its own hardware, whatever the desktop does. In the host's
process the simulated robot does not: its microphone's frames wait for the host's event
loop, and even on a thread of its own it waits for the interpreter's lock, held by a host
that the operating system has descheduled (measured with two CPU-bound processes beside it
on two cores: frames up to 762 ms late, 95 times in 40 sentences). In a process of its own,
with its own interpreter, it is scheduled like any program that sleeps most of the time.

:func:`open_sim_process_robot` starts ``python -m agentcade.sim.process``, which
serves a :class:`~agentcade.sim.SimDevice` (the room and speed given) on
:class:`~agentcade.sim.WallClock` and answers a small control connection (one JSON
line each way: feed the microphone, read the clips and the device's lateness), and connects
a real SDK robot to it. ``robot.device`` is a :class:`SimProcess`: the subset of the device's
test hooks a voice bench uses (``audio.microphone.feed``/``drained``, ``audio.clips``,
``audio.wait_clips``/``wait_sound``/``wait_done``, ``audio.behind``, ``now``), mirrored by
polling. Times are ``time.perf_counter()``, the same clock in both processes.

The child ends when its standard input closes: a host that dies does not leave it behind.
"""

from __future__ import annotations

import base64
import json
import math
import pickle
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, TextIO

import trio

from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.daemon import ask_daemon
from agentcade.device.sdk_robot import SdkRobot, watched
from agentcade.sim.room import Room

__all__ = ["SimProcess", "SimProcessRobot", "open_sim_process_robot"]

POLL_S = 0.01
"""How often the host's mirror of the device's clips is brought up to date."""


@dataclass(eq=False)
class RemoteClip:
    """A clip the robot played, as last read from its process (see ``SimClip``)."""

    began: float
    started: float | None = None
    ended: float | None = None
    outcome: str = "playing"
    seconds: float = 0.0


class _RemoteMicrophone:
    def __init__(self, process: SimProcess) -> None:
        self._process = process
        self._send, self._queue = trio.open_memory_channel[bytes](math.inf)
        self._unsent = 0

    def feed(self, pcm: bytes) -> None:
        """Queue 16 kHz mono s16le audio for the robot's microphone (sent at once)."""
        if len(pcm) % 2:
            raise ValueError("PCM ends with a partial sample")
        self._unsent += 1
        self._send.send_nowait(pcm)

    async def drained(self) -> None:
        """Wait until everything fed has been heard by the robot's microphone."""
        while self._unsent or self._process.pending_seconds > 0:  # noqa: ASYNC110 - a poll
            await trio.sleep(POLL_S)

    async def _pump(self) -> None:
        async for pcm in self._queue:
            await self._process.ask("feed", pcm=base64.b64encode(pcm).decode())
            self._unsent -= 1
            await self._process.refresh()


class _RemoteAudio:
    def __init__(self, process: SimProcess) -> None:
        self._process = process
        self.microphone = _RemoteMicrophone(process)
        self.clips: list[RemoteClip] = []
        self.behind: list[tuple[float, int]] = []
        """Each time the device fell behind: (worst lateness in seconds, frames late)."""

    async def _until(self, ready: Callable[[], bool]) -> None:
        while not ready():  # noqa: ASYNC110 - the device is another process
            await trio.sleep(POLL_S)

    async def wait_clips(self, count: int) -> None:
        await self._until(lambda: len(self.clips) >= count)

    async def wait_sound(self, clip: RemoteClip) -> None:
        await self._until(lambda: clip.started is not None or clip.outcome != "playing")

    async def wait_done(self, clip: RemoteClip) -> None:
        await self._until(lambda: clip.outcome != "playing")


class SimProcess:
    """The host's side of a simulated robot in its own process (see the module docstring)."""

    def __init__(self, proc: trio.Process, control: trio.SocketStream, url: str,
                 control_url: str, trace: Trace = NULL_TRACE) -> None:
        self._proc = proc
        self._trace = trace
        self._control = control
        self._lock = trio.Lock()
        self._buffer = bytearray()
        self.url = url
        self.control_url = control_url
        self.pending_seconds = 0.0
        self.audio = _RemoteAudio(self)
        self._settled = 0
        """Clips before this one have ended: they are not asked for again."""

    @staticmethod
    def now() -> float:
        """The device's clock (the times of :class:`RemoteClip`)."""
        return time.perf_counter()

    async def ask(self, command: str, **fields: Any) -> dict[str, Any]:
        """One request and its answer on the control connection."""
        async with self._lock:
            line = json.dumps({"do": command, **fields}).encode() + b"\n"
            await self._control.send_all(line)
            while b"\n" not in self._buffer:
                chunk = await self._control.receive_some(65536)
                if not chunk:
                    raise RuntimeError("the simulated robot's process went away")
                self._buffer += chunk
            answer, _, rest = bytes(self._buffer).partition(b"\n")
            self._buffer[:] = rest
        result: dict[str, Any] = json.loads(answer)
        return result

    async def refresh(self) -> None:
        """Bring the mirror of the clips, the microphone and the lateness up to date."""
        clips = self.audio.clips
        while self._settled < len(clips) and clips[self._settled].outcome != "playing":
            self._settled += 1
        since = self._settled
        state = await self.ask("state", since=since)  # only what may still change
        self.pending_seconds = state["pending"]
        for i, (began, started, ended, outcome, seconds) in enumerate(state["clips"], since):
            if i == len(clips):
                clips.append(RemoteClip(began))
            clip = clips[i]
            clip.started, clip.ended, clip.outcome, clip.seconds = started, ended, outcome, seconds
        for worst, frames in state["behind"][len(self.audio.behind):]:
            self.audio.behind.append((worst, frames))
            self._trace.record("sim_behind", late_ms=round(worst * 1000), frames=frames)

    async def clip_pcm(self, index: int) -> bytes:
        """What the robot received of clip ``index`` (24 kHz mono s16le)."""
        return base64.b64decode((await self.ask("pcm", index=index))["pcm"])

    async def _follow(self) -> None:
        while True:
            await self.refresh()
            await trio.sleep(POLL_S)


class SimProcessRobot(SdkRobot):
    """An :class:`SdkRobot` whose device runs in its own process (``.device``)."""

    device: SimProcess


@asynccontextmanager
async def open_sim_process_robot(
    *,
    room: Room | None = None,
    speed: float = 1.0,
    command_timeout: float = 2.0,
    trace: Trace = NULL_TRACE,
    out: TextIO | None = None,
    notice: Callable[[str], None] | None = None,
) -> AsyncIterator[SimProcessRobot]:
    """Start a simulated robot in a process of its own and connect a real SDK robot to it
    (``out``, ``notice``: as :func:`~agentcade.sim.open_sim_robot`'s)."""
    spec = base64.b64encode(pickle.dumps({"room": room, "speed": speed})) + b"\n"
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "agentcade.sim.process"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        await proc.stdin.send_all(spec)
        first = bytearray()
        with trio.fail_after(30):
            while not first.endswith(b"\n"):
                chunk = await proc.stdout.receive_some(4096)
                if not chunk:
                    raise RuntimeError("the simulated robot's process did not start")
                first += chunk
        hello = json.loads(first)
        control = await trio.open_tcp_stream("127.0.0.1", hello["port"])
        device = SimProcess(proc, control, hello["url"], hello["control_url"], trace)
        async with control, trio.open_nursery() as nursery:
            nursery.start_soon(device._follow)
            nursery.start_soon(device.audio.microphone._pump)
            robot = await SimProcessRobot.connect(
                device.url, command_timeout=command_timeout, out=out, name="sim",
                control=partial(ask_daemon, device.control_url),
            )
            assert isinstance(robot, SimProcessRobot)
            robot.device = device
            async with watched(robot, trace=trace, notice=notice):
                yield robot
            await device.refresh()
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await proc.stdin.aclose()  # the child's signal to end
            with trio.move_on_after(5):
                await proc.wait()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


# -- the child ---------------------------------------------------------------------------


async def _serve(spec: dict[str, Any]) -> None:
    from agentcade.sim.device import SimDevice

    device = SimDevice(room=spec["room"], audio_speed=spec["speed"])
    async with trio.open_nursery() as nursery:
        url = await nursery.start(device.serve)
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(_control, device), 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        sys.stdout.write(json.dumps(
            {"url": url, "control_url": device.control_url, "port": port}) + "\n")
        sys.stdout.flush()
        await trio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()  # standard input closed: the host is done


async def _control(device: Any, stream: trio.SocketStream) -> None:
    buffer = bytearray()
    audio = device.audio
    while True:
        chunk = await stream.receive_some(1 << 20)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            request = json.loads(line)
            answer: dict[str, Any] = {}
            if request["do"] == "feed":
                audio.microphone.feed(base64.b64decode(request["pcm"]))
            elif request["do"] == "state":
                answer = {
                    "clips": [[c.began, c.started, c.ended, c.outcome, c.seconds]
                              for c in audio.clips[request["since"]:]],
                    "pending": audio.microphone.pending_seconds,
                    "behind": audio.behind,
                }
            elif request["do"] == "pcm":
                answer = {"pcm": base64.b64encode(audio.clips[request["index"]].pcm).decode()}
            await stream.send_all(json.dumps(answer).encode() + b"\n")


def main() -> None:
    from agentcade.sim.robot import WallClock

    spec = pickle.loads(base64.b64decode(sys.stdin.buffer.readline()))  # from our own parent
    trio.run(_serve, spec, clock=WallClock())


if __name__ == "__main__":
    main()
