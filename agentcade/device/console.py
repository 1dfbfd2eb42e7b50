"""The console robot: prints speech and directives (``chat`` and ``play`` in text mode).

Its jobs complete at once.
"""

from __future__ import annotations

from typing import Any, TextIO

import trio

from agentcade.core.allowlist import JOB_CALLS, KNOWN_CAPABILITIES
from agentcade.core.protocol import Directive
from agentcade.device.robot import SPEAKER, Outcome, write_line

__all__ = ["ConsoleRobot"]


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
        write_line(self._out, f"  [机器人] {directive.describe()}")
        return _DoneJob() if directive.call in JOB_CALLS else None

    async def wait_job(self, handle: Any, limit: float) -> Outcome:
        await trio.lowlevel.checkpoint()
        return "completed"

    async def speak(self, text: str) -> None:
        await trio.lowlevel.checkpoint()
        write_line(self._out, f"{self._speaker}：{text}")

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()

