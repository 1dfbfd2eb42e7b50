"""Running ``agentcade`` as a real process, with no model configured (a long-running one
driven line by line: ``agentcade.testing.process.AgentcadeProcess``)."""

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
