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
* ``SimRobot`` (:mod:`agentcade.sim`): an ``SdkRobot`` connected over a real socket
  to a simulated device; ``--robot sim`` is wired above this layer
  (:func:`agentcade.wiring.robot.open_robot`), so the device layer never imports the
  simulator.

Directives are expected to be validated already (``validate_directive``); the robots
only map SDK exceptions to :class:`DeviceError`.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Literal, Protocol, TextIO, TypeVar

import trio
from watcherobot import CommandError, JobCancelledError, JobFailedError, WatcheRobotError
from watcherobot.job import Job
from watcherobot.robot import WatcheRobot
from websockets.exceptions import WebSocketException

from agentcade.core.allowlist import JOB_CALLS, KNOWN_CAPABILITIES
from agentcade.core.errors import DeviceError, DeviceErrorKind, lone_exception
from agentcade.core.lifecycle.robot_link import LinkEvent, LinkState, RobotLink
from agentcade.core.protocol import Directive
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.daemon import DaemonStatus, ask_daemon, ask_device, control_url_for
from agentcade.device.validate import bind_call

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
    "print_notice",
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


AwayReason = Literal["socket_closed", "device_offline", "no_reply"]
"""Why the robot is away: the Daemon socket closed, the Daemon says the device is offline, or
the link carries no replies (a stalled socket, or a Daemon that cannot say)."""

RECONNECT_BACKOFF = (0.2, 5.0)
"""First and longest pause between reconnection attempts (doubling in between)."""
PROBE_TIMEOUT = 1.0
"""How long a ``sys.sdk.ready.get`` probe may take before the link counts as stalled."""
CLOSE_BUDGET = 2.5
"""The most :meth:`SdkRobot.aclose` takes: inside the Daemon's 3 s shutdown window."""
RECONNECT_START_TIMEOUT = 2.0
"""The handshake timeout of a reconnection attempt (the first connection uses 5 s)."""

_AWAY_TEXT: dict[str, str] = {
    "socket_closed": "和 Daemon 的连接断了",
    "device_offline": "Daemon 说机器人不在线",
    "no_reply": "机器人没有回应",
}


class _CloseCleanupFilter(logging.Filter):
    """Drops the SDK's "... cleanup failed while closing robot" warnings (with traceback).

    ``WatcheRobot.close`` logs them when its last commands cannot reach the robot, which is
    what closing a robot that went away means; ``robot_lost`` has already said so.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).endswith("while closing robot")


class _ReplacedStreamFilter(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for an audio stream that was
    replaced.

    Stopping the sound (a barge-in) cancels the future of the SDK's sending task; when that
    task then ends with ``WatcheRobotError('audio stream was replaced')`` nobody is left to
    read it, and asyncio logs it from the SDK's loop thread. The stop is ours and meant.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (str(record.msg).startswith("Task exception was never retrieved")
                    and "audio stream was replaced" in str(error))


_SDK_LOG = logging.getLogger("watcherobot.robot")
if not any(isinstance(f, _CloseCleanupFilter) for f in _SDK_LOG.filters):
    _SDK_LOG.addFilter(_CloseCleanupFilter())
_ASYNCIO_LOG = logging.getLogger("asyncio")
if not any(isinstance(f, _ReplacedStreamFilter) for f in _ASYNCIO_LOG.filters):
    _ASYNCIO_LOG.addFilter(_ReplacedStreamFilter())


def _transport_of(robot: WatcheRobot) -> Any:
    """The transport a ``WatcheRobot`` was built on (robot-sdk.md §3: ``robot._transport``)."""
    return robot._transport


class _Inbox:
    """What the SDK's threads report about a session, handed over to the trio task.

    ``post`` may be called from any thread (the SDK's loop thread calls it from its
    listener and disconnect callback): it appends to a deque and wakes the trio side through
    the run's token, never blocking the SDK's loop (robot-sdk.md §6, caveat 1).
    """

    def __init__(self) -> None:
        self._items: collections.deque[tuple[object, str, bool | None]] = collections.deque()
        self._token: trio.lowlevel.TrioToken | None = None
        self._event: trio.Event | None = None

    def post(self, session: object, kind: str, online: bool | None = None) -> None:
        self._items.append((session, kind, online))
        token = self._token
        if token is not None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(self._wake)

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()

    async def get(self, patience: float = math.inf) -> tuple[object, str, bool | None] | None:
        """The next report, or None after ``patience`` seconds without one."""
        self._token = trio.lowlevel.current_trio_token()
        with trio.move_on_after(patience):
            while not self._items:
                self._event = trio.Event()
                await self._event.wait()
            return self._items.popleft()
        return None


def _open_session(
    url: str | None, *, command_timeout: float, start_timeout: float, inbox: _Inbox
) -> WatcheRobot:
    """Open one SDK session (blocking): a transport, a ``WatcheRobot`` on it, started.

    ``url`` None means the Application environment (``DaemonApplicationTransport``). The
    session reports to ``inbox``: ``closed`` when its socket goes (the SDK then shuts the
    ``WatcheRobot`` for good, robot.py ``_on_disconnect``), ``device`` with ``online`` for
    each ``daemon.device.state`` message.

    Raises:
        TimeoutError: no handshake within ``start_timeout``.
        WatcheRobotError, OSError: the socket could not be opened or the Daemon refused.
    """
    transport: Any
    if url is None:
        from watcherobot.application.transport import DaemonApplicationTransport

        transport = DaemonApplicationTransport(command_timeout=command_timeout)
    else:
        from watcherobot.desktop_session import DesktopRobotSession

        transport = DesktopRobotSession(url, command_timeout=command_timeout)
    made: list[WatcheRobot] = []
    set_callbacks = transport.set_callbacks

    def watched_callbacks(
        on_message: Callable[[dict[str, Any]], None],
        on_binary: Callable[[Any], None],
        on_disconnect: Callable[[], None],
    ) -> None:
        def disconnected() -> None:
            on_disconnect()
            if made:
                inbox.post(made[0], "closed")

        set_callbacks(on_message, on_binary, disconnected)

    # Our own transport instance: wrap its disconnect callback before WatcheRobot sets it.
    transport.set_callbacks = watched_callbacks
    robot = WatcheRobot(transport)
    made.append(robot)

    def listen(message: dict[str, Any]) -> None:
        if message.get("type") == "daemon.device.state":
            data = message.get("data")
            if isinstance(data, dict) and isinstance(data.get("online"), bool):
                inbox.post(robot, "device", data["online"])

    transport.add_message_listener(listen)
    transport.start(timeout=start_timeout)  # on failure it has closed itself
    return robot


class SdkRobot:
    """The real robot through ``watcherobot`` (``WatcheRobot`` on a transport).

    Every blocking SDK call runs in a worker thread through one ``CapacityLimiter(1)``, so
    calls reach the device in order; a call is never abandoned once started (it may
    already have reached the device), so cancellation waits for it (at most the
    command timeout). Job waits poll ``Job.wait(0.1)`` in a thread so that they are
    cancellable; a cancelled wait sends ``job.cancel()`` (shielded).

    The link (:meth:`watch`, run in a nursery while the robot is used): the robot is
    *away* while the Daemon socket is closed, the Daemon says the device is offline
    (``daemon.device.state``), or a command got no reply and a probe got none either.
    While away, :meth:`execute` fails at once (``unavailable``) instead of waiting out a
    command timeout, and Job waits end ``failed``; ``watch`` reconnects with backoff (a
    closed ``WatcheRobot`` cannot be reopened: a new session replaces it) and brings the
    robot back when the device answers again. The link's state is its machine's
    (:mod:`agentcade.core.lifecycle.robot_link`): this class only feeds it what it noticed
    (a loss, an answer, a reconnection, the close) and branches on the state.

    Speech is printed (``小懒：…``) to ``out``: this host has no TTS of its own.

    Build one with :meth:`connect`, or wrap a ``WatcheRobot`` you own (it is then not
    reconnected).
    """

    def __init__(
        self,
        robot: WatcheRobot,
        *,
        name: str = "robot",
        out: TextIO | None = None,
        speaker: str = SPEAKER,
        reopen: Callable[[], WatcheRobot] | None = None,
        control: Callable[[], DaemonStatus | None] | None = None,
        inbox: _Inbox | None = None,
    ) -> None:
        self.name = name
        self._sdk = robot
        self._out = out
        self._speaker = speaker
        self._limiter = trio.CapacityLimiter(1)
        self._link = RobotLink()
        self._reopen = reopen
        self._control = control
        self._inbox = inbox or _Inbox()
        self._away_since = 0.0
        self._trace: Trace = NULL_TRACE
        self._notice: Callable[[str], None] = lambda _line: None
        self._nursery: trio.Nursery | None = None
        self.reconnects = 0
        """How many times a new session replaced a lost one."""

    @property
    def sdk(self) -> WatcheRobot:
        """The current ``WatcheRobot`` (for device info; call it only via :meth:`call`).

        A reconnection replaces it: do not keep it.
        """
        return self._sdk

    @classmethod
    async def connect(
        cls,
        url: str | None = None,
        *,
        command_timeout: float = 5.0,
        start_timeout: float = 5.0,
        out: TextIO | None = None,
        name: str = "robot",
        control: Callable[[], DaemonStatus | None] | None = None,
    ) -> SdkRobot:
        """Connect to the robot and learn its capabilities.

        ``url`` is the Daemon's desktop socket (``DesktopRobotSession``). Without one, the
        Application environment is used when ``WATCHER_APP_*`` is set
        (``DaemonApplicationTransport``), else :data:`DEFAULT_DESKTOP_URL`. ``control`` asks
        the Daemon whether the device is online (:mod:`agentcade.device.daemon`).

        Raises:
            DeviceError: ``unavailable`` if the connection cannot be made; ``reason`` is one
                line saying what happened and what to do.
        """
        if url is None and not all(os.environ.get(v) for v in _APP_ENV):
            url = DEFAULT_DESKTOP_URL
        where = url or "WatcheRobot 应用环境"
        inbox = _Inbox()
        opener = partial(_open_session, url, command_timeout=command_timeout, inbox=inbox)
        try:
            robot = await trio.to_thread.run_sync(partial(opener, start_timeout=start_timeout))
        except TimeoutError as exc:
            raise DeviceError(
                "unavailable",
                "connect",
                f"机器人的 Daemon（{where}）{start_timeout:g} 秒内没有完成握手："
                "看看 Daemon 是否卡住（watcherobot daemon status），再试",
            ) from exc
        except (OSError, WatcheRobotError, WebSocketException) as exc:
            raise DeviceError(
                "unavailable",
                "connect",
                f"连不上机器人的 Daemon（{where}）：先启动它（watcherobot daemon start），"
                "或检查 --robot 的地址",
            ) from exc
        reopen = partial(opener, start_timeout=min(start_timeout, RECONNECT_START_TIMEOUT))
        return cls(robot, name=name, out=out, reopen=reopen, control=control, inbox=inbox)

    @property
    def capabilities(self) -> tuple[str, ...]:
        return tuple(self.sdk.capabilities)

    @property
    def command_timeout(self) -> float:
        timeout = getattr(_transport_of(self.sdk), "command_timeout", 5.0)
        return float(timeout) if isinstance(timeout, int | float) else 5.0

    @property
    def online(self) -> bool:
        """Whether directives can reach the robot now (not away, not closed)."""
        return self._link.state is LinkState.ONLINE

    @property
    def away_reason(self) -> str | None:
        """Why the robot is away (``socket_closed``, ``device_offline``, ``no_reply``), or None.

        The output queue skips directives at once while this is set.
        """
        if self._closed():
            return "closed"
        return None if self._link.reason is None else self._link.reason.value

    def _closed(self) -> bool:
        # A call, not a property: the state changes across awaits (and in aclose).
        return self._link.state is LinkState.CLOSED

    async def call(self, fn: Callable[[], T]) -> T:
        """Run one blocking SDK call in the serialized worker thread."""
        return await trio.to_thread.run_sync(fn, limiter=self._limiter)

    async def execute(self, directive: Directive) -> Job | None:
        wire = _to_wire(directive)
        call = wire.call
        if not self.online:
            await trio.lowlevel.checkpoint()
            raise DeviceError("unavailable", call, self._away_line())
        session = self._sdk
        try:
            result = await self.call(bind_call(session, wire))
        except CommandError as exc:
            raise DeviceError("rejected", call, exc.reason) from exc
        except TimeoutError as exc:
            self._inbox.post(session, "no_reply")
            raise DeviceError("timeout", call, str(exc) or "no reply from the robot") from exc
        except (WatcheRobotError, OSError, WebSocketException) as exc:
            # WebSocketException: a stalled link's keepalive timeout surfaces from a command
            # as websockets' ConnectionClosedError (measured: after ~50 s).
            raise DeviceError("unavailable", call, str(exc) or type(exc).__name__) from exc
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
                    if not self.online:  # it will not finish where we can see it
                        return "failed"
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
        if job.state.terminal or not self.online:
            return
        # The thread is not abandoned: job.cancel() returns within the command timeout.
        with (
            trio.CancelScope(shield=True),
            contextlib.suppress(TimeoutError, OSError, WatcheRobotError, WebSocketException),
        ):
            await self.call(job.cancel)

    async def speak(self, text: str) -> None:
        await trio.lowlevel.checkpoint()
        _write(self._out, f"{self._speaker}：{text}")

    async def aclose(self) -> None:
        """Close the SDK robot within :data:`CLOSE_BUDGET` seconds, whatever the link does.

        Online, ``WatcheRobot.close`` stops a display it owns, then the transport. Away, the
        transport is closed first, so that clean-up fails at once instead of waiting out
        two command timeouts (measured before: 10 s). Past the budget the closing threads
        are left to finish on their own.
        """
        if self._closed():
            return
        away = self._link.state is not LinkState.ONLINE
        self._link.handle(LinkEvent.CLOSE)
        robot = self._sdk
        with trio.CancelScope(shield=True, deadline=trio.current_time() + CLOSE_BUDGET):
            if away:
                transport = _transport_of(robot)
                await trio.to_thread.run_sync(transport.close, abandon_on_cancel=True)
            await trio.to_thread.run_sync(robot.close, abandon_on_cancel=True)

    # -- the link -------------------------------------------------------------------------

    async def watch(
        self,
        *,
        trace: Trace = NULL_TRACE,
        notice: Callable[[str], None] | None = None,
        away: AwayReason | None = None,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Keep the link until cancelled: notice losses, reconnect, bring the robot back.

        Start it with ``await nursery.start(robot.watch, ...)`` and cancel it before
        :meth:`aclose`; ``away``: it starts away (the Daemon said the device is offline).
        Records ``robot_lost`` (reason) and ``robot_back`` (ms away, reconnects);
        ``notice`` gets one line for each (``play`` prints it).
        """
        self._trace = trace
        if notice is not None:
            self._notice = notice
        if away is not None:
            self._lose(away, quiet=True)  # the status line has said it
        poll = RECONNECT_BACKOFF[0]
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            while True:
                item = await self._inbox.get(math.inf if self.online else poll)
                if self._closed():
                    return
                if item is None:  # still away: look again, less often each time
                    poll = min(poll * 2, RECONNECT_BACKOFF[1])
                    await self._diagnose()
                    continue
                session, kind, online = item
                if session is not self._sdk:
                    continue  # a session we already replaced
                if kind == "closed":
                    self._lose("socket_closed")
                    await self._reconnect()
                elif kind == "device" and online is False:
                    self._lose("device_offline")
                elif kind == "device" and self._link.state is LinkState.AWAY:
                    await self._probe()  # refreshes the capabilities
                    self._back()
                elif kind == "no_reply" and self.online:
                    self._lose("no_reply")
                    await self._diagnose()
                if self.online:
                    poll = RECONNECT_BACKOFF[0]

    def _lose(self, reason: AwayReason, *, quiet: bool = False) -> None:
        loss = LinkEvent(reason)
        if self._closed() or self._link.reason is loss:
            return  # closed: a worker thread reporting late; same reason: already told
        first = self.online
        self._link.handle(loss)
        if first:
            self._away_since = trio.current_time()
        self._trace.record("robot_lost", robot=self.name, reason=reason)
        if not quiet:
            self._notice(f"机器人暂时用不了：{_AWAY_TEXT[reason]}。动作先跳过，连上后自动恢复")

    def _back(self) -> None:
        if self._link.state is not LinkState.AWAY:
            return  # online already, or closed meanwhile
        self._link.handle(LinkEvent.ANSWERED)
        ms = round((trio.current_time() - self._away_since) * 1000)
        self._trace.record(
            "robot_back",
            robot=self.name,
            ms=ms,
            reconnects=self.reconnects,
            capabilities=len(self.capabilities),
        )
        self._notice(f"机器人回来了（离开了 {ms / 1000:.1f} 秒）")

    def _away_line(self) -> str:
        if self._closed():
            return "the robot connection is closed"
        reason = self.away_reason or "no_reply"
        return f"the robot is away ({reason}): skipped at once"

    async def _ask(self) -> DaemonStatus | None:
        if self._control is None:
            return None
        return await trio.to_thread.run_sync(self._control, abandon_on_cancel=True)

    async def _probe(self) -> bool:
        """Whether the device answers ``sys.sdk.ready.get`` within :data:`PROBE_TIMEOUT`.

        The transport updates the capabilities from the ``evt.sdk.ready`` it brings.
        """
        transport = _transport_of(self._sdk)

        def ask() -> None:
            transport.send_command("sys.sdk.ready.get", {}, timeout=PROBE_TIMEOUT)

        try:
            await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
        except CommandError:
            return True  # it answered, if only to refuse
        except (TimeoutError, OSError, WatcheRobotError, WebSocketException):
            return False
        return True

    async def _diagnose(self) -> None:
        """Away with an open socket: is the device gone, or is our link stalled?"""
        status = await self._ask()
        if status is not None and status.online is False:
            self._lose("device_offline")
            return
        if await self._probe():
            self._back()
            return
        # The Daemon says the device is there (or cannot say), yet nothing answers us:
        # the socket is stalled. Drop it (closing may hang: not waited for) and start anew.
        old = self._sdk
        if self._nursery is not None:
            self._nursery.start_soon(self._close_quietly, old)
        await self._reconnect()

    async def _close_quietly(self, robot: WatcheRobot) -> None:
        with contextlib.suppress(Exception):
            await trio.to_thread.run_sync(robot.close, abandon_on_cancel=True)

    async def _reconnect(self) -> None:
        """Open a new session, with backoff, until one opens (or forever: cancel it)."""
        if self._reopen is None or self._closed():
            return  # a WatcheRobot we were given: stay away
        reopen = self._reopen
        delay = RECONNECT_BACKOFF[0]
        self._link.handle(LinkEvent.RECONNECT)

        def attempt() -> WatcheRobot:
            robot = reopen()
            if self._closed():  # closed while this thread was abandoned: do not leak it
                robot.close()
            return robot

        while not self._closed():
            try:
                robot = await trio.to_thread.run_sync(attempt, abandon_on_cancel=True)
            except (TimeoutError, OSError, WatcheRobotError, WebSocketException):
                await trio.sleep(delay)
                delay = min(delay * 2, RECONNECT_BACKOFF[1])
                continue
            if self._closed():  # closed while the thread returned: do not leak it
                await self._close_quietly(robot)
                return
            self._sdk = robot
            self.reconnects += 1
            self._link.handle(LinkEvent.OPENED)
            break
        else:
            return
        if self._sdk.capabilities:
            self._back()
            return
        status = await self._ask()
        if status is not None and status.online is False:
            self._lose("device_offline")
        elif await self._probe():
            self._back()
        else:
            self._lose("no_reply")

    def __repr__(self) -> str:
        return f"SdkRobot({self.name!r}, capabilities={len(self.capabilities)})"


ROBOT_KINDS = ("console", "sim", "app", "ws://<host>:<port>")
"""What :func:`open_robot` accepts."""


def robot_spec_problem(spec: str) -> str | None:
    """What is wrong with a ``--robot`` value, as one line to print; None when it is fine."""
    if spec in ("console", "sim", "app"):
        return None
    if spec.startswith(("ws://", "wss://")) and len(spec.split("://", 1)[1]) > 0:
        return None
    return (
        f"不认识的机器人 {spec!r}：用 console、sim、app（作为 WatcheRobot 应用运行时）"
        f"或 Daemon 的地址 ws://主机:端口（默认 {DEFAULT_DESKTOP_URL}）"
    )


@asynccontextmanager
async def watched(
    robot: SdkRobot,
    *,
    trace: Trace = NULL_TRACE,
    notice: Callable[[str], None] | None = None,
    away: AwayReason | None = None,
) -> AsyncIterator[SdkRobot]:
    """Run ``robot.watch`` while the block runs, then close the robot (≤ CLOSE_BUDGET s)."""
    with lone_exception():
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(robot.watch, trace=trace, notice=notice, away=away))
            try:
                yield robot
            finally:
                nursery.cancel_scope.cancel()
                await robot.aclose()


def print_notice(line: str) -> None:
    _write(sys.stderr, f"[机器人] {line}")


def status_line(robot: SdkRobot, status: DaemonStatus | None, where: str) -> str:
    """The one line said before use: is a robot online, does anybody else hold it."""
    if status is None:
        state = "在线" if robot.capabilities else "状态不明"
        return f"已连上 {where}，机器人{state}（没问到 Daemon 的控制端口，没法确认有没有别的应用在用它）"
    if status.online is False:
        return (
            f"已连上 {where}，但 Daemon 说机器人没连上：先只说话，机器人连上后动作自动恢复"
            "（看看机器人的电源和网络，或运行 watcherobot robot status）"
        )
    device = robot.sdk.device_info.get("device_id")
    named = f"（{device}）" if isinstance(device, str) and device else ""
    return f"已连上 {where}，机器人在线{named}，没有别的应用在用它"


@asynccontextmanager
async def open_robot(
    spec: str = "console",
    *,
    trace: Trace = NULL_TRACE,
    out: TextIO | None = None,
    notice: Callable[[str], None] | None = print_notice,
) -> AsyncIterator[Robot]:
    """The robot named by ``spec``, closed on exit.

    ``console``: :class:`ConsoleRobot`; ``app``: the WatcheRobot Application environment (``WATCHER_APP_*``); a ``ws://`` or
    ``wss://`` URL: the Daemon's desktop socket. A ``robot_connected`` record names it.

    For ``app`` and URLs the Daemon is asked first (:mod:`agentcade.device.daemon`): an
    Application holding the robot is refused; a robot that is not online yet is used
    away (directives skipped) until it comes. ``notice`` gets the one status line, then a
    line each time the robot goes away or comes back (default: stderr).

    Raises:
        ValueError: an unknown ``spec``.
        DeviceError: the robot cannot be used (``reason``: what happened, what to do).
    """
    robot: Robot
    say = notice or (lambda _line: None)
    if spec == "console":
        robot = ConsoleRobot(out)
        trace.record("robot_connected", robot=robot.name, capabilities=list(robot.capabilities))
        try:
            yield robot
        finally:
            await robot.aclose()
        return
    if spec == "app" or spec.startswith(("ws://", "wss://")):
        control: Callable[[], DaemonStatus | None] | None
        if spec == "app":
            if not all(os.environ.get(v) for v in _APP_ENV):
                raise DeviceError(
                    "unavailable",
                    "connect",
                    f"没有在 WatcheRobot 应用里运行（{' 和 '.join(_APP_ENV)} 没有设置）："
                    "用 watcherobot app run 启动，或用 --robot ws://127.0.0.1:8765 连桌面 Daemon",
                )
            status_url = os.environ.get("WATCHER_APP_DEVICE_STATUS_URL", "").strip()
            control = partial(ask_device, status_url) if status_url else None
        else:
            control = partial(ask_daemon, control_url_for(spec))
        status = await trio.to_thread.run_sync(control) if control is not None else None
        if status is not None and status.holder is not None:
            raise DeviceError(
                "unavailable",
                "connect",
                f"机器人正被应用 {status.holder} 占用：先运行 watcherobot app stop，再试",
            )
        sdk = await SdkRobot.connect(None if spec == "app" else spec, out=out, control=control)
        offline = status is not None and status.online is False
        where = "WatcheRobot 应用环境" if spec == "app" else spec
        say(status_line(sdk, status, where))
        trace.record(
            "robot_connected",
            robot=sdk.name,
            url=None if spec == "app" else spec,
            capabilities=list(sdk.capabilities),
            online=not offline,
            daemon_answered=status is not None,
        )
        async with watched(sdk, trace=trace, notice=notice, away="device_offline" if offline else None):
            yield sdk
        return
    raise ValueError(f"unknown robot {spec!r}: use one of {', '.join(ROBOT_KINDS)}")
