"""The robots directives run on: one small interface, three kinds.

``Robot`` is what the output queue talks to:

* ``execute(directive)`` performs one SDK call and returns a job handle for calls that
  start a Job (``JOB_CALLS``), else None. A device failure raises :class:`DeviceError`.
* ``wait_job(handle, limit)`` waits up to ``limit`` seconds and says how the job ended:
  ``"completed"``, ``"failed"``, ``"cancelled"`` or ``"timeout"`` (still running; it is
  *not* cancelled). If the waiting task is cancelled, the job is cancelled on the robot.
* ``speak(text)`` says a sentence; ``aclose()`` lets go of the robot.

Kinds:

* :class:`ConsoleRobot`: prints speech and directives (``chat``/``play`` text mode); jobs
  complete at once.
* :class:`SdkRobot`: the real robot through ``watcherobot`` (Daemon desktop socket or the
  Application environment). The SDK is blocking and thread-based (robot-sdk.md §6), so
  every call runs in a worker thread, one at a time.
* ``SimRobot`` (:mod:`agentcade.device.sim`): an ``SdkRobot`` connected over a real socket
  to a simulated device.

Directives are expected to be validated already (``validate_directive``); the robots
only map SDK exceptions to :class:`DeviceError`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal, Protocol, TextIO, TypeVar

import trio
from watcherobot import CommandError, JobCancelledError, JobFailedError, WatcheRobotError
from watcherobot.job import Job
from watcherobot.robot import WatcheRobot

from agentcade.allowlist import JOB_CALLS, KNOWN_CAPABILITIES
from agentcade.device.validate import bind_call
from agentcade.errors import DeviceError, DeviceErrorKind
from agentcade.protocol import Directive
from agentcade.trace import NULL_TRACE, Trace

__all__ = [
    "DEFAULT_DESKTOP_URL",
    "ROBOT_KINDS",
    "SPEAKER",
    "ConsoleRobot",
    "DeviceError",
    "DeviceErrorKind",
    "Outcome",
    "Robot",
    "SdkRobot",
    "open_robot",
]

Outcome = Literal["completed", "failed", "cancelled", "timeout"]


SPEAKER = "小懒"
"""The name speech is printed under."""

DEFAULT_DESKTOP_URL = "ws://127.0.0.1:8765"
"""The Daemon's external (desktop) socket on its default port."""

_APP_ENV = ("WATCHER_APP_DESKTOP_WS_URL", "WATCHER_APP_DEVICE_WS_URL")
_JOB_POLL = 0.1
"""How long one ``Job.wait`` in a worker thread may block (the cancellation latency)."""

T = TypeVar("T")


class Robot(Protocol):
    """What the output queue needs of a robot."""

    name: str

    @property
    def capabilities(self) -> tuple[str, ...]:
        """What the robot advertises (firmware flags for a real robot)."""
        ...

    async def execute(self, directive: Directive) -> Any | None:
        """Run one call; a job handle for Job calls, else None. Raises DeviceError."""
        ...

    async def wait_job(self, handle: Any, limit: float) -> Outcome:
        """Wait up to ``limit`` s for a job; cancelling the wait cancels the job."""
        ...

    async def speak(self, text: str) -> None:
        """Say ``text``."""
        ...

    async def aclose(self) -> None:
        """Release the robot."""
        ...


def _write(out: TextIO | None, line: str) -> None:
    stream = out if out is not None else sys.stdout
    stream.write(line + "\n")
    stream.flush()


# --- console ------------------------------------------------------------------------------


class _DoneJob:
    """The job handle of a console robot: finished when it starts."""

    state = "completed"
    reason: str | None = None


class ConsoleRobot:
    """Prints what a robot would do: ``小懒：…`` and ``  [机器人] lights.set_color('#00FF00')``.

    Args:
        out: the text stream; ``None`` means ``sys.stdout`` at the time of writing.
        capabilities: what it claims to support (default: everything a game can declare).
    """

    name = "console"

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        capabilities: tuple[str, ...] = tuple(sorted(KNOWN_CAPABILITIES)),
        speaker: str = SPEAKER,
    ) -> None:
        self._out = out
        self._capabilities = capabilities
        self._speaker = speaker

    @property
    def capabilities(self) -> tuple[str, ...]:
        return self._capabilities

    async def execute(self, directive: Directive) -> _DoneJob | None:
        await trio.lowlevel.checkpoint()
        _write(self._out, f"  [机器人] {directive.describe()}")
        return _DoneJob() if directive.call in JOB_CALLS else None

    async def wait_job(self, handle: Any, limit: float) -> Outcome:
        await trio.lowlevel.checkpoint()
        return "completed"

    async def speak(self, text: str) -> None:
        await trio.lowlevel.checkpoint()
        _write(self._out, f"{self._speaker}：{text}")

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


# --- the SDK --------------------------------------------------------------------------------


def _to_wire(directive: Directive) -> Directive:
    """Host-side translations the SDK leaves to its callers.

    The light zone ``head`` is the CLI's name for ``side`` (robot_cli.py:615-616); the
    firmware's zones are ``all|side|bottom`` (the media lab's pattern).
    """
    if directive.call.startswith("lights.") and directive.kwargs.get("zone") == "head":
        return directive.model_copy(update={"kwargs": {**directive.kwargs, "zone": "side"}})
    return directive


class SdkRobot:
    """The real robot through ``watcherobot`` (``WatcheRobot`` on a transport).

    Every blocking SDK call runs in a worker thread through one ``CapacityLimiter(1)``, so
    calls reach the device in order; a call is never abandoned once started (it may
    already have reached the device), so cancellation waits for it (at most the
    command timeout). Job waits poll ``Job.wait(0.1)`` in a thread so that they are
    cancellable; a cancelled wait sends ``job.cancel()`` (shielded).

    Speech is printed (``小懒：…``) to ``out``: this host has no TTS of its own.

    Build one with :meth:`connect`, or wrap a ``WatcheRobot`` you own.
    """

    def __init__(
        self,
        robot: WatcheRobot,
        *,
        name: str = "robot",
        out: TextIO | None = None,
        speaker: str = SPEAKER,
    ) -> None:
        self.name = name
        self.sdk = robot
        """The wrapped ``WatcheRobot`` (for device info; call it only via :meth:`call`)."""
        self._out = out
        self._speaker = speaker
        self._limiter = trio.CapacityLimiter(1)
        self._closed = False

    @classmethod
    async def connect(
        cls,
        url: str | None = None,
        *,
        command_timeout: float = 5.0,
        start_timeout: float = 5.0,
        out: TextIO | None = None,
        name: str = "robot",
    ) -> SdkRobot:
        """Connect to the robot and learn its capabilities.

        ``url`` is the Daemon's desktop socket (``DesktopRobotSession``). Without one, the
        Application environment is used when ``WATCHER_APP_*`` is set
        (``DaemonApplicationTransport``), else :data:`DEFAULT_DESKTOP_URL`.

        Raises:
            DeviceError: ``unavailable`` if the connection cannot be made.
        """
        transport: Any
        if url is None and all(os.environ.get(v) for v in _APP_ENV):
            from watcherobot.application.transport import DaemonApplicationTransport

            transport = DaemonApplicationTransport(command_timeout=command_timeout)
            start: Callable[[], None] = transport.start
        else:
            from watcherobot.desktop_session import DesktopRobotSession

            transport = DesktopRobotSession(
                url or DEFAULT_DESKTOP_URL, command_timeout=command_timeout
            )

            def start() -> None:
                transport.start(timeout=start_timeout)

        robot = WatcheRobot(transport)
        try:
            await trio.to_thread.run_sync(start)
        except (TimeoutError, OSError, WatcheRobotError) as exc:
            await trio.to_thread.run_sync(robot.close)
            raise DeviceError("unavailable", "connect", f"{type(exc).__name__}: {exc}") from exc
        return cls(robot, name=name, out=out)

    @property
    def capabilities(self) -> tuple[str, ...]:
        return tuple(self.sdk.capabilities)

    @property
    def command_timeout(self) -> float:
        timeout = getattr(self.sdk._transport, "command_timeout", 5.0)
        return float(timeout) if isinstance(timeout, int | float) else 5.0

    async def call(self, fn: Callable[[], T]) -> T:
        """Run one blocking SDK call in the serialized worker thread."""
        return await trio.to_thread.run_sync(fn, limiter=self._limiter)

    async def execute(self, directive: Directive) -> Job | None:
        wire = _to_wire(directive)
        call = wire.call
        try:
            result = await self.call(bind_call(self.sdk, wire))
        except CommandError as exc:
            raise DeviceError("rejected", call, exc.reason) from exc
        except TimeoutError as exc:
            raise DeviceError("timeout", call, str(exc) or "no reply from the robot") from exc
        except WatcheRobotError as exc:
            raise DeviceError("unavailable", call, str(exc)) from exc
        except (TypeError, ValueError) as exc:
            raise DeviceError("invalid", call, str(exc)) from exc
        return result if isinstance(result, Job) else None

    async def wait_job(self, handle: Job, limit: float) -> Outcome:
        deadline = trio.current_time() + max(0.0, limit)
        try:
            while True:
                remaining = deadline - trio.current_time()
                if remaining <= 0:
                    return "timeout"
                try:
                    await trio.to_thread.run_sync(handle.wait, min(_JOB_POLL, remaining))
                except TimeoutError:
                    continue
                except JobCancelledError:
                    return "cancelled"
                except JobFailedError:
                    return "failed"
                return "completed"
        except trio.Cancelled:
            await self._cancel_job(handle)
            raise

    async def _cancel_job(self, job: Job) -> None:
        """Ask the device to cancel ``job`` even though our scope is cancelled."""
        if job.state.terminal:
            return
        # The thread is not abandoned: job.cancel() returns within the command timeout.
        with trio.CancelScope(shield=True), contextlib.suppress(TimeoutError, WatcheRobotError):
            await self.call(job.cancel)

    async def speak(self, text: str) -> None:
        await trio.lowlevel.checkpoint()
        _write(self._out, f"{self._speaker}：{text}")

    async def aclose(self) -> None:
        """Close the SDK robot (it stops a display it owns, then the transport)."""
        if self._closed:
            return
        self._closed = True
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self.sdk.close, limiter=self._limiter)

    def __repr__(self) -> str:
        return f"SdkRobot({self.name!r}, capabilities={len(self.capabilities)})"


ROBOT_KINDS = ("console", "sim", "app", "ws://<host>:<port>")
"""What :func:`open_robot` accepts."""


@asynccontextmanager
async def open_robot(
    spec: str = "console", *, trace: Trace = NULL_TRACE, out: TextIO | None = None
) -> AsyncIterator[Robot]:
    """The robot named by ``spec``, closed on exit.

    ``console``: :class:`ConsoleRobot`; ``sim``: the simulated robot over a real socket;
    ``app``: the WatcheRobot Application environment (``WATCHER_APP_*``); a ``ws://`` or
    ``wss://`` URL: the Daemon's desktop socket. A ``robot_connected`` record names it.

    Raises:
        ValueError: an unknown ``spec``.
        DeviceError: the robot cannot be reached.
    """
    robot: Robot
    if spec == "console":
        robot = ConsoleRobot(out)
        trace.record("robot_connected", robot=robot.name, capabilities=list(robot.capabilities))
        try:
            yield robot
        finally:
            await robot.aclose()
        return
    if spec == "sim":
        from agentcade.device.sim import open_sim_robot

        async with open_sim_robot(out=out) as sim:
            trace.record("robot_connected", robot=sim.name, url=sim.device.url)
            yield sim
        return
    if spec == "app" or spec.startswith(("ws://", "wss://")):
        if spec == "app" and not all(os.environ.get(v) for v in _APP_ENV):
            raise DeviceError("unavailable", "connect", f"{' and '.join(_APP_ENV)} are not set")
        sdk = await SdkRobot.connect(None if spec == "app" else spec, out=out)
        trace.record(
            "robot_connected",
            robot=sdk.name,
            url=None if spec == "app" else spec,
            capabilities=list(sdk.capabilities),
        )
        try:
            yield sdk
        finally:
            await sdk.aclose()
        return
    raise ValueError(f"unknown robot {spec!r}: use one of {', '.join(ROBOT_KINDS)}")
