"""Sync game tools run in a worker thread, with a time bound.

A game author's ``def`` tool that blocks (``time.sleep(20)``, a slow file or network call)
would otherwise stop the event loop, and with it every session of every game in the
process. In a worker thread it stops only its own turn, and only for
:data:`SYNC_TOOL_BUDGET` seconds: then the turn goes on without it (the model hears the
tool did not work) and the thread is abandoned to finish on its own. A tool that took long
is logged, so the author hears about it; ``agentcade check`` warns about blocking calls in
tools before that (rule ``tool-blocking``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

__all__ = ["SLOW_SYNC_TOOL", "SYNC_TOOL_BUDGET", "run_sync_tool"]

log = logging.getLogger(__name__)

SYNC_TOOL_BUDGET = 10.0
"""Seconds a sync tool may take before its turn gives up on it."""
SLOW_SYNC_TOOL = 0.5
"""A sync tool slower than this is logged as blocking (it should be ``async`` or cheap)."""

_LIMITER = trio.CapacityLimiter(16)
"""Threads for sync tools at once; a turn whose tool cannot get one waits (bounded too)."""


async def run_sync_tool(call: Callable[[], Any]) -> Any:
    """``Tool.invoke``'s ``run_sync``: ``call()`` in a worker thread, bounded.

    Raises:
        TimeoutError: the tool did not finish within :data:`SYNC_TOOL_BUDGET` (the model is
            told, like any tool failure).
    """
    started = trio.current_time()
    with trio.move_on_after(SYNC_TOOL_BUDGET):
        result = await trio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=_LIMITER)
        took = trio.current_time() - started
        if took > SLOW_SYNC_TOOL:
            log.warning("a sync tool blocked for %.1f s; make it async or cheap", took)
        return result
    log.warning("a sync tool did not finish in %g s; its turn went on without it", SYNC_TOOL_BUDGET)
    raise TimeoutError(f"没有在 {SYNC_TOOL_BUDGET:g} 秒内完成")
