"""A robot on trio's clock, for tests of the output queue and of a game's effects.

``TimedRobot`` is a pure-trio :class:`~agentcade.device.robots.Robot`: each Job call takes
a simulated time (``None``: until cancelled), so tests run under ``autojump_clock`` and
the timeline is exact. ``Records`` collects trace records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import trio

from agentcade.core.allowlist import JOB_CALLS, KNOWN_CAPABILITIES
from agentcade.core.protocol import Directive
from agentcade.core.trace import Trace
from agentcade.device.robots import DeviceError, Outcome

__all__ = ["ALL_CAPS", "Game", "Records", "TimedJob", "TimedRobot", "d", "recording_trace"]

ALL_CAPS = tuple(sorted(KNOWN_CAPABILITIES))


@dataclass(frozen=True)
class Game:
    """A GameInfo-like game for the queue."""

    id: str = "test_game"
    capabilities: tuple[str, ...] = ALL_CAPS


@dataclass
class TimedJob:
    call: str
    done_at: float | None
    reason: str | None = None


DEFAULT_DURATIONS: dict[str, float | None] = {
    "motion.move_to": 0.4,
    "motion.play_action": 1.2,
    "animation.play": 1.5,
    "behavior.play": None,  # runs until stopped
    "lights.play_effect": None,
    "audio.play": 1.0,
}


class TimedRobot:
    """Records ``(time, event)`` in ``timeline``; Job calls take ``durations[call]`` s."""

    name = "timed"

    def __init__(
        self,
        durations: dict[str, float | None] | None = None,
        *,
        fail: dict[str, DeviceError] | None = None,
        speech_per_char: float = 0.0,
    ) -> None:
        self.durations = {**DEFAULT_DURATIONS, **(durations or {})}
        self.fail = fail or {}
        self.speech_per_char = speech_per_char
        """Seconds each character of spoken text takes (0: speaking is instant)."""
        self.timeline: list[tuple[float, str]] = []
        self.cancelled: list[str] = []

    @property
    def capabilities(self) -> tuple[str, ...]:
        return ALL_CAPS

    def _log(self, event: str) -> None:
        self.timeline.append((round(trio.current_time(), 3), event))

    def events(self) -> list[str]:
        return [e for _, e in self.timeline]

    async def execute(self, directive: Directive) -> TimedJob | None:
        await trio.lowlevel.checkpoint()
        if directive.call in self.fail:
            self._log(f"fail {directive.call}")
            raise self.fail[directive.call]
        self._log(f"run {directive.describe()}")
        if directive.call not in JOB_CALLS:
            return None
        duration = self.durations.get(directive.call)
        done_at = None if duration is None else trio.current_time() + duration
        return TimedJob(directive.call, done_at)

    async def wait_job(self, handle: TimedJob, limit: float) -> Outcome:
        end = trio.current_time() + limit
        try:
            if handle.done_at is not None and handle.done_at <= end:
                await trio.sleep_until(handle.done_at)
                self._log(f"done {handle.call}")
                return "completed"
            await trio.sleep_until(end)
            self._log(f"timeout {handle.call}")
            return "timeout"
        except trio.Cancelled:
            self.cancelled.append(handle.call)
            raise

    async def speak(self, text: str) -> None:
        await trio.lowlevel.checkpoint()
        self._log(f"say {text}")
        if self.speech_per_char:
            await trio.sleep(self.speech_per_char * len(text))
            self._log(f"said {text}")

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class Records(list[dict[str, Any]]):
    """A trace sink that keeps every record; ``of(type)`` filters."""

    def __call__(self, record: dict[str, Any]) -> None:
        self.append(record)

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [r for r in self if r["type"] == type_]


def recording_trace() -> tuple[Trace, Records]:
    records = Records()
    return Trace(records), records


def d(call: str, *args: Any, **kwargs: Any) -> Directive:
    return Directive(call=call, args=list(args), kwargs=kwargs)
