"""The robot SDK's real Daemon, with the simulated robot paired to it (tests, ``e2e --robot daemon``).

:func:`open_daemon_harness` builds, inside a :class:`~agentcade.sim.netns.PrivateNetwork`
it makes for the run (the Daemon's pairing broadcasts UDP: it never runs on the machine's
own network; the harness refuses to start anything until the namespace is checked private):

1. a :class:`~agentcade.sim.SimDevice` (served on this machine's 127.0.0.1) and its
   network side, a :class:`~agentcade.sim.lan_robot.LanRobot` (inside the namespace);
2. ``watcherobot daemon start`` with its own ``HOME`` and ports (``WATCHER_RUNTIME_*_PORT``)
   and the environment the Application will get (an Application receives the Daemon's);
3. ``watcherobot robot pair CODE``: the SDK's own LAN pairing, answered by the robot.

The :class:`DaemonHarness` then runs agentcade the two ways a family does:
:meth:`DaemonHarness.app_run` (``watcherobot app run DIR``, the Application) and
:meth:`DaemonHarness.desktop` (``agentcade run --robot ws://...``, next to the Daemon), and
drives the Daemon (:meth:`DaemonHarness.app_stop`, :meth:`DaemonHarness.restart_daemon`,
:meth:`DaemonHarness.control`). Leaving the block stops everything it started: programs,
then the Daemon (``watcherobot daemon stop``; its process is killed if it lingers), the
robot and the namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h11
import trio
from trio_websocket import WebSocketConnection, wrap_client_stream

from agentcade.sim import SimDevice
from agentcade.sim.lan_robot import LanRobot
from agentcade.sim.netns import PrivateNetwork, open_private_network
from agentcade.sim.program import Program

__all__ = ["DaemonHarness", "DaemonPorts", "Program", "open_daemon_harness"]

SILENCE_BYTES = 32000
"""One second of 16 kHz silence after a line (voice detection hears it end)."""
REPOSITORY = Path(__file__).resolve().parents[2]
"""The checkout: ``app.json`` and ``app.py`` are at its root."""


@dataclass(frozen=True)
class DaemonPorts:
    """The Daemon's ports inside the namespace (not its defaults, to tell them apart)."""

    external: int = 28765
    control: int = 28767
    pairing: int = 28021
    """Where the Daemon binds for pairing; it broadcasts to 37021 whatever this is."""
    preview: int = 28022

    def environment(self) -> dict[str, str]:
        return {
            "WATCHER_RUNTIME_EXTERNAL_PORT": str(self.external),
            "WATCHER_RUNTIME_CONTROL_PORT": str(self.control),
            "WATCHER_RUNTIME_PAIRING_PORT": str(self.pairing),
            "WATCHER_RUNTIME_PREVIEW_UDP_PORT": str(self.preview),
        }


def _scripts() -> Path:
    return Path(sys.executable).parent


class DaemonHarness:
    """See the module docstring. Attributes: ``net``, ``device``, ``robot``, ``home``
    (the Daemon's and the Application's HOME), ``env`` (their environment), ``ports``."""

    def __init__(
        self,
        net: PrivateNetwork,
        device: SimDevice,
        robot: LanRobot,
        home: Path,
        env: Mapping[str, str],
        ports: DaemonPorts,
        nursery: trio.Nursery,
    ) -> None:
        self.net = net
        self.device = device
        self.robot = robot
        self.home = home
        self.ports = ports
        self.trace_file = Path(env.get("AGENTCADE_TRACE_FILE") or home / "trace.jsonl")
        """Where agentcade writes its trace (``AGENTCADE_TRACE_FILE``; read by :meth:`records`)."""
        self.env = {**env, "HOME": str(home), "AGENTCADE_TRACE_FILE": str(self.trace_file),
                    **ports.environment()}
        self._nursery = nursery
        self.programs: list[Program] = []
        self.daemon_pid: int | None = None

    @property
    def desktop_url(self) -> str:
        return f"ws://127.0.0.1:{self.ports.external}"

    # -- programs ------------------------------------------------------------------------

    async def start(self, argv: Sequence[str], *, name: str, env: Mapping[str, str] | None = None) -> Program:
        """Start ``argv`` inside the namespace with the harness's environment (+ ``env``)."""
        proc = await trio.lowlevel.open_process(
            self.net.command(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**self.env, **(env or {})},
            cwd=str(self.home),
        )
        program = Program(proc, name)
        self.programs.append(program)
        self._nursery.start_soon(program.read)
        return program

    async def watcherobot(self, *args: str, limit: float = 60) -> str:
        """``watcherobot ARGS`` to its end, inside the namespace; its output.

        Raises:
            AssertionError: it failed (with its output).
        """
        program = await self.start([str(_scripts() / "watcherobot"), *args], name=f"watcherobot {args[0]}")
        code = await program.wait(limit)
        await trio.lowlevel.checkpoint()
        if code != 0:
            raise AssertionError(f"watcherobot {' '.join(args)} failed ({code}):\n{program.output}")
        return program.output

    async def app_run(self, app_dir: Path = REPOSITORY) -> Program:
        """``watcherobot app run APP_DIR``: the Daemon starts the Application."""
        return await self.start([str(_scripts() / "watcherobot"), "app", "run", str(app_dir)],
                                name="watcherobot app run")

    async def app_stop(self) -> float:
        """``watcherobot app stop``; seconds until the Application's process is gone."""
        status = await self.control("GET", "/daemon/status")
        pid = status["application"].get("process_id")
        started = trio.current_time()
        await self.watcherobot("app", "stop")
        if isinstance(pid, int):
            await self.until(lambda: not _alive(pid), every=0.02)
        return trio.current_time() - started

    async def desktop(self, *args: str) -> Program:
        """``agentcade run --robot ws://...`` next to the Daemon (its desktop socket)."""
        return await self.start(
            [sys.executable, "-m", "agentcade", "run", "--robot", self.desktop_url, *args],
            name="agentcade run",
        )

    @asynccontextmanager
    async def desktop_socket(self) -> AsyncIterator[WebSocketConnection]:
        """A desktop client's socket to the Daemon (hello ``role: desktop`` acknowledged)."""
        stream = await self.net.connect_tcp("127.0.0.1", self.ports.external)
        async with stream, trio.open_nursery() as nursery:
            ws = await wrap_client_stream(nursery, stream, "127.0.0.1", "/")
            try:
                await ws.send_message(_frame("sys.client.hello", {"role": "desktop"}))
                ack = json.loads(await ws.get_message())
                assert ack.get("type") == "sys.ack", ack
                yield ws
            finally:
                await ws.aclose()

    # -- what agentcade did and heard -----------------------------------------------------

    @staticmethod
    async def until(check: Callable[[], bool | Awaitable[bool]], *, limit: float = 30,
                    every: float = 0.05) -> None:
        """Wait until ``check()`` holds, looking every ``every`` s, at most ``limit`` s.

        What is waited for lives in other processes (the trace file, the Daemon's state,
        the robot's model fed by them): it is polled, there is no event to wait on.
        """
        with trio.fail_after(limit):
            while True:
                answer = check()
                if not isinstance(answer, bool):
                    answer = await answer
                if answer:
                    return
                await trio.sleep(every)

    def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The trace's records so far (of one ``kind``)."""
        try:
            text = self.trace_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        found = []
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line being written
            if isinstance(record, dict) and (kind is None or record.get("type") == kind):
                found.append(record)
        return found

    async def wait_records(self, kind: str, count: int = 1, *, limit: float = 30) -> list[dict[str, Any]]:
        """Wait until the trace has ``count`` records of ``kind``; all of them."""
        await self.until(lambda: len(self.records(kind)) >= count, limit=limit, every=0.1)
        return self.records(kind)

    async def wait_quiet(self, quiet: float = 1.0, *, limit: float = 60) -> None:
        """Wait until the robot has spoken (the greeting), listens (microphone open) and has
        said nothing for ``quiet`` s."""
        audio = self.device.audio

        def quiet_now() -> bool:
            last = audio.clips[-1].ended if audio.clips else None
            return (audio.playing is None and last is not None
                    and trio.current_time() - last >= quiet
                    and audio.microphone.open_session is not None)

        await self.until(quiet_now, limit=limit)

    async def say(self, pcm: bytes) -> None:
        """Say 16 kHz mono PCM into the robot's microphone, then a second of silence."""
        self.device.audio.microphone.feed(pcm + bytes(SILENCE_BYTES))
        await self.device.audio.microphone.drained()

    # -- the Daemon ----------------------------------------------------------------------

    async def control(self, method: str, path: str, payload: object = None, *,
                      port: int | None = None, limit: float = 10) -> dict[str, Any]:
        """One request to the Daemon's control port (or another ``port`` on 127.0.0.1 in the
        namespace: the Application's test-only endpoint), within ``limit`` s; the JSON answer."""
        body = b"" if payload is None else json.dumps(payload).encode()
        headers = [("host", "127.0.0.1"), ("connection", "close"),
                   ("content-length", str(len(body)))]
        if payload is not None:
            headers.append(("content-type", "application/json"))
        conn = h11.Connection(h11.CLIENT)
        with trio.fail_after(limit):
            stream = await self.net.connect_tcp("127.0.0.1", self.ports.control if port is None else port)
            async with stream:
                await stream.send_all(conn.send(h11.Request(method=method, target=path, headers=headers)))
                await stream.send_all(conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage()))
                data = b""
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        conn.receive_data(await stream.receive_some())
                    elif isinstance(event, h11.Data):
                        data += bytes(event.data)
                    elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                        break
        answer = json.loads(data)
        assert isinstance(answer, dict)
        return answer

    async def device_state(self) -> dict[str, Any]:
        """``GET /daemon/devices``' device: ``state``, ``online``..."""
        device = (await self.control("GET", "/daemon/devices"))["device"]
        assert isinstance(device, dict)
        return device

    async def wait_device(self, state: str, *, limit: float = 30) -> None:
        """Wait until the Daemon says the robot's slot is ``state``."""

        async def there() -> bool:
            return bool((await self.device_state())["state"] == state)

        await self.until(there, limit=limit, every=0.1)

    async def start_daemon(self) -> None:
        """``watcherobot daemon start`` (ready when it returns)."""
        await self.watcherobot("daemon", "start")
        status = await self.control("GET", "/daemon/status")
        self.daemon_pid = status["runtime"]["pid"]

    async def stop_daemon(self) -> None:
        """``watcherobot daemon stop``; its process killed if it lingers."""
        if self.daemon_pid is None:
            return
        pid, self.daemon_pid = self.daemon_pid, None
        with trio.move_on_after(20):
            await self.watcherobot("daemon", "stop")
        with contextlib.suppress(trio.TooSlowError):
            await self.until(lambda: not _alive(pid), limit=5)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGINT)

    async def restart_daemon(self) -> None:
        """Stop the Daemon and start it again (it remembers the robot: reunite)."""
        await self.stop_daemon()
        await self.start_daemon()

    async def pair(self) -> None:
        """``watcherobot robot pair CODE``: the robot answers the broadcast and says hello."""
        await self.watcherobot("robot", "pair", self.robot.code)
        with trio.fail_after(10):
            await self.robot.wait_linked()

    async def close(self) -> None:
        """Stop what was started: programs (Ctrl-C, then kill), then the Daemon."""
        for program in self.programs:
            await program.stop()
        await self.stop_daemon()


def _frame(type_: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": type_, "code": 0, "data": data}, separators=(",", ":"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@asynccontextmanager
async def open_daemon_harness(
    home: Path,
    env: Mapping[str, str],
    *,
    device: SimDevice | None = None,
    ports: DaemonPorts | None = None,
    pair: bool = True,
) -> AsyncIterator[DaemonHarness]:
    """The Daemon running in a private namespace with the simulated robot paired to it.

    ``home`` is the run's own HOME (made if missing); ``env`` the Daemon's environment,
    which the Application gets too (``PATH``, ``AGENTCADE_HOME``, the voice settings...).

    Raises:
        NotPrivate: no private namespace could be made (nothing was started).
    """
    await trio.Path(home).mkdir(parents=True, exist_ok=True)
    device = device or SimDevice()
    async with AsyncExitStack() as stack:
        net = await stack.enter_async_context(open_private_network())
        nursery = await stack.enter_async_context(trio.open_nursery())
        stack.callback(nursery.cancel_scope.cancel)
        await nursery.start(device.serve)
        robot = LanRobot(net, device)
        await nursery.start(robot.run)
        harness = DaemonHarness(net, device, robot, home, env, ports or DaemonPorts(), nursery)
        stack.push_async_callback(_shielded, harness.close)
        await harness.start_daemon()
        if pair:
            await harness.pair()
        yield harness


async def _shielded(close: Any) -> None:
    with trio.CancelScope(shield=True):
        await close()
