"""An asyncio loop in its own thread, so the SDK's asyncio voice providers run under trio.

``watcherobot.voice`` (providers, contracts) is asyncio-only (robot-sdk.md §6, caveat 2).
:class:`AsyncioBridge` owns one asyncio event loop on a daemon thread; :meth:`run` submits a
coroutine to it and waits from trio without blocking trio. Cancellation crosses both ways:

* trio -> asyncio: cancelling the trio caller cancels the asyncio task and waits (shielded,
  at most :data:`CANCEL_GRACE` s) for it to finish its cleanup, so no provider call keeps
  running after its turn is gone;
* asyncio -> trio: a task cancelled on the asyncio side (the loop shutting down, a
  provider cancelling itself) reaches the trio caller as :class:`~agentcade.core.errors.VoiceError`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import trio

from agentcade.core.errors import VoiceError

__all__ = ["CANCEL_GRACE", "AsyncioBridge"]

T = TypeVar("T")
CANCEL_GRACE = 2.0
"""How long a cancelled provider call may take to clean up on the asyncio side."""


class AsyncioBridge:
    """One asyncio loop on its own thread; :meth:`close` stops it (idempotent)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name="agentcade-asyncio", daemon=True)
        self._thread.start()
        self._closed = False

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.close()

    def call_soon(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the asyncio thread (e.g. feeding an ``asyncio.Queue``)."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
            self.loop.call_soon_threadsafe(fn, *args)

    async def run(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``make()`` on the asyncio loop and return its result.

        Raises:
            VoiceError: the asyncio task was cancelled there, or the bridge is closed.
            Exception: whatever the coroutine raised.
        """
        if self._closed:
            raise VoiceError("the voice provider bridge is closed")
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        started: list[bool] = []

        def wake() -> None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(done.set)

        async def runner() -> T:
            started.append(True)
            try:
                return await make()
            finally:
                wake()  # only once the coroutine is really over, cleanup included

        future = asyncio.run_coroutine_threadsafe(runner(), self.loop)

        def finished(f: concurrent.futures.Future[T]) -> None:
            if not f.cancelled():
                wake()

        future.add_done_callback(finished)
        try:
            await done.wait()
        except trio.Cancelled:
            future.cancel()  # cancels the asyncio task (run_coroutine_threadsafe chains it)
            with trio.CancelScope(shield=True), trio.move_on_after(
                CANCEL_GRACE if started else 0.05
            ):
                await done.wait()
            raise
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise VoiceError("the voice provider's call was cancelled") from None

    def close(self) -> None:
        """Stop the loop (cancelling what still runs there) and join its thread."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=CANCEL_GRACE + 1)
