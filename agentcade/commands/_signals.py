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
import threading
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
    """While the block runs, a stop signal cancels ``scope`` and is noted in the result.

    An exception from the block comes out as itself, not wrapped in the watcher's
    ExceptionGroup, so the command's own ``except`` clauses (a robot that cannot be used,
    settings to fix) still see it. Outside the main thread (a command run by a test or an
    embedding program) no signal can arrive, so none is watched.
    """
    stopped = Stopped()
    if threading.current_thread() is not threading.main_thread():
        yield stopped
        return
    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        try:
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
        except BaseExceptionGroup as group:
            if len(group.exceptions) != 1:
                raise
            exc = group.exceptions[0]
            raise exc from exc.__cause__


def exit_code(stopped: Stopped) -> int:
    """0, or the shell's code for the signal (130 for Ctrl-C, 143 for SIGTERM)."""
    return 0 if stopped.signal is None else 128 + int(stopped.signal)
