"""The real robot through ``watcherobot``, and the supervision of its link.

:class:`SdkRobot` drives the robot over the Daemon's desktop socket or the Application
environment. The SDK is blocking and thread-based (robot-sdk.md §6), so every call runs in
a worker thread, one at a time. Its link (:meth:`SdkRobot.watch`; :func:`watched` runs it
around a block) notices the robot going away (the socket closed, the Daemon says it is
offline, no reply) and reconnects with backoff; the states are
:class:`agentcade.core.lifecycle.robot_link.RobotLink`'s. The simulated robot
(:mod:`agentcade.sim`) is an ``SdkRobot`` over a real socket too.

Directives are expected to be validated already (``validate_directive``); the robot only
maps SDK exceptions to :class:`DeviceError`.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Literal, TextIO, TypeVar

import trio
from watcherobot import CommandError, JobCancelledError, JobFailedError, WatcheRobotError
from watcherobot.job import Job
from watcherobot.robot import WatcheRobot
from websockets.exceptions import WebSocketException

from agentcade.core.errors import DeviceError, lone_exception
from agentcade.core.lifecycle.robot_link import LinkEvent, LinkState, RobotLink
from agentcade.core.protocol import Directive
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.daemon import DaemonStatus
from agentcade.device.robot import APP_ENV, DEFAULT_DESKTOP_URL, SPEAKER, Outcome, write_line
from agentcade.device.sdk_session import Inbox, open_session, transport_of
from agentcade.device.validate import bind_call

__all__ = ["CLOSE_BUDGET", "AwayReason", "SdkRobot", "watched"]

_JOB_POLL = 0.1
"""How long one ``Job.wait`` in a worker thread may block (the cancellation latency)."""

T = TypeVar("T")


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
        inbox: Inbox | None = None,
    ) -> None:
        self.name = name
        self._sdk = robot
        self._out = out
        self._speaker = speaker
        self._limiter = trio.CapacityLimiter(1)
        self._link = RobotLink()
        self._reopen = reopen
        self._control = control
        self._inbox = inbox or Inbox()
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
        if url is None and not all(os.environ.get(v) for v in APP_ENV):
            url = DEFAULT_DESKTOP_URL
        where = url or "WatcheRobot 应用环境"
        inbox = Inbox()
        opener = partial(open_session, url, command_timeout=command_timeout, inbox=inbox)
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
        timeout = getattr(transport_of(self.sdk), "command_timeout", 5.0)
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
        write_line(self._out, f"{self._speaker}：{text}")

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
                transport = transport_of(robot)
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
        transport = transport_of(self._sdk)

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
