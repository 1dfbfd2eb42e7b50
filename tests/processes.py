"""Running ``agentcade`` as a real process, with no model configured."""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import trio


def offline_env(home: Path, *drop: str) -> dict[str, str]:
    """This environment without model settings (and ``drop`` prefixes), in its own home."""
    prefixes = ("LLM_", "OPENAI_", *drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env["AGENTCADE_HOME"] = str(home)
    env["AGENTCADE_PAGES_PORT"] = "0"  # the local pages on a free port, never a shared 8790
    # A process runs on the wall clock, which no test can mock: the longest patience, so a
    # loaded machine adds no "稍等" to output a test compares. A test of the patience line
    # sets its own (test_faults_cli).
    env["AGENTCADE_PATIENCE"] = "30"
    return env


def run_voice_command(
    home: Path, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m agentcade ARGS`` (``run``, ``e2e``) in ``home`` with no model and no speech
    settings (the offline model, espeak-ng and the scripted recogniser); text captured."""
    return subprocess.run(
        [sys.executable, "-m", "agentcade", *args], capture_output=True, text=True,
        env=offline_env(home, "ASR_", "TTS_", "VAD_"), timeout=timeout, check=False,
    )


async def run_agentcade(
    env: dict[str, str], *args: str, lines: str, limit: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """``python -m agentcade ARGS`` with ``lines`` on stdin; output captured."""
    with trio.fail_after(limit):
        return await trio.run_process(
            [sys.executable, "-m", "agentcade", *args],
            stdin=lines.encode(),
            capture_stdout=True,
            capture_stderr=True,
            env=env,
            check=False,
        )


class AgentcadeProcess:
    """A long-running ``python -m agentcade ...`` (``play``, ``serve``) driven line by line.

    Output (stdout and stderr together) is collected by a task of ``nursery``; ``expect``
    waits for a piece of it; ``say`` types one line on stdin.
    """

    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        self.output = ""
        self._changed = trio.Event()

    @classmethod
    async def start(cls, nursery: trio.Nursery, env: dict[str, str], *args: str) -> AgentcadeProcess:
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "agentcade", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        me = cls(proc)
        nursery.start_soon(me._read)
        return me

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await self.proc.stdout.receive_some():
            self.output += decoder.decode(chunk)
            self._changed.set()
            self._changed = trio.Event()

    async def expect(self, pattern: str, *, after: int = 0, limit: float = 30) -> re.Match[str]:
        """Wait until ``pattern`` (a regex) appears in the output past offset ``after``."""
        with trio.fail_after(limit):
            while (found := re.compile(pattern).search(self.output, after)) is None:
                if self.proc.returncode is not None or self.proc.poll() is not None:
                    raise AssertionError(f"agentcade exited; output:\n{self.output}")
                await self._changed.wait()
        return found

    async def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        await self.proc.stdin.send_all(line.encode() + b"\n")

    async def stop(self) -> None:
        """End it (``/quit`` for play, then a signal), at most a few seconds."""
        if self.proc.poll() is None and self.proc.stdin is not None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.proc.stdin.aclose()
        with trio.move_on_after(10):
            await self.proc.wait()
        if self.proc.poll() is None:
            self.proc.kill()
            await self.proc.wait()
