"""A program run as a real process, its output collected and waited on by pattern.

:class:`Program` is any program started with its output (stdout, stderr folded in) on a
pipe: a task of the caller's nursery runs :meth:`Program.read`, :meth:`Program.expect`
waits for a piece of the output. The Daemon harness (:mod:`agentcade.sim.daemon_harness`)
runs the Daemon, the Application and ``agentcade run`` as programs; the test kit's
``AgentcadeProcess`` (``agentcade.testing.process``) is one driven line by line.
"""

from __future__ import annotations

import codecs
import re
import signal

import trio

__all__ = ["Program"]


class Program:
    """A running program whose output (stdout and stderr together) is collected in ``output``."""

    def __init__(self, proc: trio.Process, name: str) -> None:
        self.proc = proc
        self.name = name
        self.output = ""
        self._changed = trio.Event()

    async def read(self) -> None:
        """Collect the output until the program closes it (run as a task of a nursery)."""
        assert self.proc.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await self.proc.stdout.receive_some():
            self.output += decoder.decode(chunk)
            self._changed.set()
            self._changed = trio.Event()

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    async def expect(self, pattern: str, *, after: int = 0, limit: float = 30) -> re.Match[str]:
        """Wait until ``pattern`` (a regex) appears in the output past offset ``after``.

        Raises:
            AssertionError: the program exited without writing it (with its output).
        """
        regex = re.compile(pattern)
        with trio.fail_after(limit):
            while (found := regex.search(self.output, after)) is None:
                if not self.running:
                    await trio.sleep(0.2)  # the last output
                    if (found := regex.search(self.output, after)) is not None:
                        return found
                    raise AssertionError(f"{self.name} exited ({self.proc.returncode}):\n{self.output}")
                with trio.move_on_after(0.5):
                    await self._changed.wait()
        return found

    async def wait(self, limit: float = 30) -> int:
        with trio.fail_after(limit):
            return await self.proc.wait()

    async def stop(self) -> None:
        """SIGINT (Ctrl-C), then a kill after 10 s."""
        if self.running:
            self.proc.send_signal(signal.SIGINT)
            with trio.move_on_after(10):
                await self.proc.wait()
        await self._kill()

    async def _kill(self) -> None:
        if self.running:
            self.proc.kill()
            await self.proc.wait()
