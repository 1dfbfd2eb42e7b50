"""SIGINT (Ctrl-C) and SIGTERM for the commands that run until stopped.

trio turns Ctrl-C into a ``KeyboardInterrupt`` raised wherever the code happens to be,
game code included, and SIGTERM ends the process at once by default. Here both become a
cancellation of the command's work, acted on within a moment even while a model or a
remote game hangs, followed by the command's bounded cleanup (``play``: the game's
goodbye and the robot's reset; ``serve``: a final reply to every turn in flight). On
Windows only SIGINT (and SIGBREAK where it exists) can be received this way.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import trio

__all__ = ["STOP_SIGNALS", "Stopped", "exit_code", "stop_on_signals"]

STOP_SIGNALS: tuple[int, ...] = (
    (signal.SIGINT, signal.SIGTERM)
    if sys.platform != "win32"
    else tuple(s for s in (signal.SIGINT, getattr(signal, "SIGBREAK", None)) if s is not None)
)


@dataclass
class Stopped:
    """Which signal stopped the command (None: it ended on its own)."""

    signal: int | None = None


@asynccontextmanager
async def stop_on_signals(scope: trio.CancelScope) -> AsyncIterator[Stopped]:
    """While the block runs, a stop signal cancels ``scope`` and is noted in the result."""
    stopped = Stopped()
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                async for signum in signals:
                    stopped.signal = signum
                    scope.cancel()
                    return

            nursery.start_soon(watch)
            try:
                yield stopped
            finally:
                nursery.cancel_scope.cancel()


def exit_code(stopped: Stopped) -> int:
    """0, or the shell's code for the signal (130 for Ctrl-C, 143 for SIGTERM)."""
    return 0 if stopped.signal is None else 128 + int(stopped.signal)
