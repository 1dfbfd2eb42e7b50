"""Programs run as real processes by tests: their output collected and waited on by pattern.

:class:`Program` (:mod:`agentcade.sim.program`, re-exported here) is any program started
with its output on a pipe; the Daemon harness runs the Daemon, the Application and
``agentcade run`` as programs. :class:`AgentcadeProcess` is ``python -m agentcade ...``
(``play``, ``serve``, ``run``) started by :meth:`AgentcadeProcess.start` and driven line by
line on its stdin.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

import trio

from agentcade.sim.program import Program

__all__ = ["AgentcadeProcess", "Program"]


class AgentcadeProcess(Program):
    """A long-running ``python -m agentcade ...`` (``play``, ``serve``) driven line by line:
    ``say`` types one line on its stdin."""

    @classmethod
    async def start(cls, nursery: trio.Nursery, env: dict[str, str], *args: str) -> AgentcadeProcess:
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "agentcade", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        me = cls(proc, f"agentcade {args[0]}" if args else "agentcade")
        nursery.start_soon(me.read)
        return me

    async def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.send_all(line.encode() + b"\n")

    async def stop(self) -> None:
        """End it (its stdin closed: ``play`` ends at the end of its input), a kill after 10 s."""
        if self.running and self.proc.stdin is not None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.proc.stdin.aclose()
        with trio.move_on_after(10):
            await self.proc.wait()
        await self._kill()
