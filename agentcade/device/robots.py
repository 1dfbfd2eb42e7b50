"""Opening the robot a command names: ``console``, ``app`` or the Daemon's ``ws://`` socket.

:func:`open_robot` asks the Daemon first (an Application holding the robot is refused; a
robot not online yet is used away until it comes), says one status line, and closes the
robot on exit. The kinds are :mod:`agentcade.device.console` and
:mod:`agentcade.device.sdk_robot`, the interface :mod:`agentcade.device.robot` (re-exported
here, where the rest of the host imports them from); ``--robot sim`` is wired above this
layer (:func:`agentcade.wiring.robot.open_robot`), so the device layer never imports the
simulator.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TextIO

import trio

from agentcade.core.errors import DeviceError, DeviceErrorKind
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.console import ConsoleRobot
from agentcade.device.daemon import DaemonStatus, ask_daemon, ask_device, control_url_for
from agentcade.device.robot import (
    APP_ENV,
    DEFAULT_DESKTOP_URL,
    SPEAKER,
    Outcome,
    Robot,
    write_line,
)
from agentcade.device.sdk_robot import SdkRobot, watched

__all__ = [
    "APP_ENV",
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
    "robot_spec_problem",
    "watched",
]


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



def print_notice(line: str) -> None:
    write_line(sys.stderr, f"[机器人] {line}")


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
            if not all(os.environ.get(v) for v in APP_ENV):
                raise DeviceError(
                    "unavailable",
                    "connect",
                    f"没有在 WatcheRobot 应用里运行（{' 和 '.join(APP_ENV)} 没有设置）："
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
