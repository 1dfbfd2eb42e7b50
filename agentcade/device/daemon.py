"""What the robot's Daemon says before we use the robot, and the one line that says it.

The SDK's own CLI asks the Daemon's control port before it touches hardware
(``watcherobot/robot_cli.py``, ``run``): ``GET /daemon/status`` — refuse while
``application.state`` is ``starting``/``running``/``stopping``, because the Daemon then routes
device frames to that Application and not to desktop clients — and ``GET /daemon/devices`` —
``device.online``. A desktop session to a Daemon with no robot still "connects" (capabilities
``[]``) and every command then times out, so asking first is the only way to say at once
what is wrong. The control port is ``8767`` (``WATCHER_RUNTIME_CONTROL_PORT``) on the host of
the desktop socket; an Application gets ``WATCHER_APP_DEVICE_STATUS_URL`` instead.

Pure apart from :func:`ask_daemon` (blocking ``urllib``: call it in a worker thread).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "BUSY_STATES",
    "DEFAULT_CONTROL_PORT",
    "DaemonStatus",
    "ask_daemon",
    "ask_device",
    "control_url_for",
    "parse_devices",
    "parse_status",
]

DEFAULT_CONTROL_PORT = 8767
"""The Daemon's control HTTP port (``runtime/daemon/__main__.py``)."""

BUSY_STATES = frozenset({"starting", "running", "stopping"})
"""Application states in which the Daemon routes the robot to that Application (robot_cli.py)."""

@dataclass(frozen=True)
class DaemonStatus:
    """The Daemon's answer, reduced to what decides whether we may use the robot.

    Attributes:
        holder: the id of an Application that holds the robot now, else None.
        online: whether a robot is connected to the Daemon (None: not known).
        device_state: the Daemon's device slot state (``connected``, ``reconnecting``...).
    """

    holder: str | None
    online: bool | None
    device_state: str | None = None


def control_url_for(desktop_url: str) -> str:
    """The control port next to a desktop socket URL (same host, port 8767 or the env's)."""
    host = urlsplit(desktop_url).hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    raw = os.environ.get("WATCHER_RUNTIME_CONTROL_PORT", "").strip()
    port = int(raw) if raw.isdigit() and 0 < int(raw) < 65536 else DEFAULT_CONTROL_PORT
    return f"http://{host}:{port}"


def parse_status(status: dict[str, Any]) -> str | None:
    """The Application holding the robot, from ``GET /daemon/status`` (None: nobody)."""
    application = status.get("application")
    if not isinstance(application, dict) or application.get("state") not in BUSY_STATES:
        return None
    current = application.get("current_app")
    if isinstance(current, dict):  # the registry's record of the selected Application
        current = current.get("id") or current.get("name")
    return str(current) if current else "另一个应用"


def parse_devices(devices: dict[str, Any]) -> tuple[bool | None, str | None]:
    """``(online, state)`` from ``GET /daemon/devices`` (``{"device": {...}}``)."""
    device = devices.get("device", devices)
    if not isinstance(device, dict):
        return None, None
    online = device.get("online")
    state = device.get("state")
    return (online if isinstance(online, bool) else None, state if isinstance(state, str) else None)


def _get(url: str, timeout: float) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            decoded = json.loads(response.read().decode("utf-8"))
    except (OSError, urllib.error.URLError, ValueError):
        return None
    return decoded if isinstance(decoded, dict) else None


def ask_daemon(control_url: str, *, timeout: float = 1.0) -> DaemonStatus | None:
    """Ask the control port; None when it does not answer (blocking: run it in a thread)."""
    base = control_url.rstrip("/")
    status = _get(base + "/daemon/status", timeout)
    if status is None:
        return None
    devices = _get(base + "/daemon/devices", timeout)
    online, state = parse_devices(devices) if devices is not None else (None, None)
    return DaemonStatus(parse_status(status), online, state)


def ask_device(status_url: str, *, timeout: float = 1.0) -> DaemonStatus | None:
    """An Application's view: ``WATCHER_APP_DEVICE_STATUS_URL`` answers like ``/daemon/devices``."""
    devices = _get(status_url, timeout)
    if devices is None:
        return None
    online, state = parse_devices(devices)
    return DaemonStatus(None, online, state)

