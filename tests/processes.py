"""Running ``agentcade`` as a real process, with no model configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import trio


def offline_env(home: Path, *drop: str) -> dict[str, str]:
    """This environment without model settings (and ``drop`` prefixes), in its own home."""
    prefixes = ("LLM_", "OPENAI_", *drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env["AGENTCADE_HOME"] = str(home)
    return env


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
