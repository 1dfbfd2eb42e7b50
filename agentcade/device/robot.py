"""What the output queue needs of a robot: the ``Robot`` protocol and the names all kinds share.

``Robot`` is one small interface:

* ``execute(directive)`` performs one SDK call and returns a job handle for calls that
  start a Job (``JOB_CALLS``), else None. A device failure raises :class:`DeviceError`.
* ``wait_job(handle, limit)`` waits up to ``limit`` seconds and says how the job ended:
  ``"completed"``, ``"failed"``, ``"cancelled"`` or ``"timeout"`` (still running; it is
  *not* cancelled). If the waiting task is cancelled, the job is cancelled on the robot.
* ``speak(text)`` says a sentence; ``aclose()`` lets go of the robot.

Its kinds: :class:`~agentcade.device.console.ConsoleRobot`,
:class:`~agentcade.device.sdk_robot.SdkRobot` (and the simulated robot above this layer);
:func:`agentcade.device.robots.open_robot` opens the one a command names.
"""

from __future__ import annotations

import sys
from typing import Any, Literal, Protocol, TextIO

from agentcade.core.protocol import Directive

__all__ = ["APP_ENV", "DEFAULT_DESKTOP_URL", "SPEAKER", "Outcome", "Robot", "write_line"]

Outcome = Literal["completed", "failed", "cancelled", "timeout"]


SPEAKER = "小懒"
"""The name speech is printed under."""

DEFAULT_DESKTOP_URL = "ws://127.0.0.1:8765"
"""The Daemon's external (desktop) socket on its default port."""

APP_ENV = ("WATCHER_APP_DESKTOP_WS_URL", "WATCHER_APP_DEVICE_WS_URL")
"""The variables the Daemon sets for an Application: all set means ``--robot app``."""


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


def write_line(out: TextIO | None, line: str) -> None:
    """Write one line to ``out`` (``None``: ``sys.stdout`` at the time of writing), flushed."""
    stream = out if out is not None else sys.stdout
    stream.write(line + "\n")
    stream.flush()
