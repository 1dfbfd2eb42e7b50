"""One session with the robot through ``watcherobot``, and what the SDK's threads report of it.

:func:`open_session` opens a transport (the Daemon's desktop socket or the Application
environment) and a started ``WatcheRobot`` on it, blocking; the session tells an
:class:`Inbox` when its socket closes and what ``daemon.device.state`` says, from the SDK's
threads, and :class:`~agentcade.device.sdk_robot.SdkRobot` reads it on trio's side. The
SDK's log lines that only repeat what the link already said are filtered here.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
from collections.abc import Callable
from typing import Any

import trio
from watcherobot.robot import WatcheRobot

__all__ = ["Inbox", "open_session", "transport_of"]


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


def transport_of(robot: WatcheRobot) -> Any:
    """The transport a ``WatcheRobot`` was built on (robot-sdk.md §3: ``robot._transport``)."""
    return robot._transport


class Inbox:
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


def open_session(
    url: str | None, *, command_timeout: float, start_timeout: float, inbox: Inbox
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
