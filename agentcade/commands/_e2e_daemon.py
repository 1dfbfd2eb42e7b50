"""``agentcade e2e --robot daemon``: the stage where the robot steps are played under the real Daemon.

Inside a private network namespace made for the run (:mod:`agentcade.sim.netns`; the
Daemon's pairing broadcasts UDP, so it never runs on this machine's network, and without
such a namespace the command refuses), :func:`open_daemon_stage` starts the robot SDK's
own Daemon, pairs the simulated robot to it over the SDK's LAN pairing and has the Daemon
start agentcade as its Application (``watcherobot app run`` on this checkout's ``app.py``),
as :mod:`agentcade.sim.daemon_harness` does for ``tests/test_daemon.py``.

The Application is another process: what the runner needs to know of it comes over the
test-only control endpoint it serves in test mode (:mod:`agentcade.core.under_test`: the
runner sets ``AGENTCADE_TEST_MODE``, the port and the seed in the environment the Daemon
hands its Application) — the game in play, whether it is busy, what it keeps unrevealed,
what was heard, when the robot is ready. What it did is read from its trace file
(``AGENTCADE_TRACE_FILE``, which never holds an unrevealed answer) and from the simulated
robot, which lives in this process and runs ``speed`` times faster than real time. The
Application does not know (its speaker is paced by credits, the microphone's packets come
sooner): at 3 and 4 times it heard 玩你画我猜 as 玩你换我猜谜, at 2 well, so ``e2e`` runs
it at 2. The lines are spoken into that robot's microphone; the Application hears them with
its own recogniser and voice (the embedded ones).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from agentcade.core.errors import AgentcadeError
from agentcade.core.under_test import (
    CONTROL_PORT_ENV,
    DRAW_PACE_ENV,
    LONG_POLL,
    SEED_ENV,
    SEED_PATH,
    STATE_PATH,
    TEST_MODE_ENV,
    HostState,
)
from agentcade.sim import SimDevice
from agentcade.sim.daemon_harness import REPOSITORY, DaemonHarness, open_daemon_harness
from agentcade.sim.program import Program
from agentcade.voice.models import baker_voice_dir, models_dir, whisper_base_dir
from agentcade.wiring.voice import SCENARIO_SILENCE_BYTES

__all__ = ["CONTROL_PORT", "ApplicationEnded", "DaemonStage", "app_missing", "open_daemon_stage"]

CONTROL_PORT = 28790
"""The Application's test-only endpoint, inside the namespace (where nothing else runs)."""
START_LIMIT = 180.0
"""From ``app run`` to the greeting: the Application loads the embedded recogniser and the
neural voice first (about 20 s on a quiet machine, more beside other work)."""
QUIET_S = 0.3
"""The robot is quiet when nothing has played for this long (the echo tail, ``Tuning.echo_tail_s``)."""
DRAW_PACE = 4
"""How many times slower the Application draws: a line said while a game draws (你画我猜's
"talk while busy") must be heard by the Application's own recogniser before the drawing
ends. At the game's own pace (1.5-3.5 s of strokes) that holds on a quiet machine only:
beside two busy benchmarks the Application took up to 8 s to recognise the line. At 4 the
shortest drawing lasts 6 s; each drawing of the test costs that much more time, in CI."""
_DROPPED = ("WATCHER_APP_", "AGENTCADE_TRACE_FILE", "AGENTCADE_TEST_")


class ApplicationEnded(AgentcadeError):
    """The Application the Daemon started ended (or never answered) before the steps were played."""


def app_missing() -> str | None:
    """Why this installation cannot be an Application (None: ``app.py`` and ``app.json`` are
    there: a checkout of agentcade, not an installed package or the executable)."""
    missing = [name for name in ("app.py", "app.json") if not (REPOSITORY / name).is_file()]
    if missing:
        return (f"{' and '.join(missing)} not found in {REPOSITORY}: --robot daemon runs agentcade "
                "from a checkout of its repository")
    return None


class DaemonStage:
    """The Application under the Daemon, as the robot steps play it (``e2e``'s ``Stage``)."""

    def __init__(self, harness: DaemonHarness, app: Program, port: int = CONTROL_PORT) -> None:
        self.harness = harness
        self.app = app
        self.port = port
        self._records: list[dict[str, Any]] = []
        self._read = 0

    async def state(self, query: str = "") -> HostState:
        """The Application's state (``query``: ``?ready=1`` / ``?heard=N`` waits for it first).

        Raises:
            ApplicationEnded: the Application is gone.
        """
        if not self.app.running:
            raise ApplicationEnded(f"the Application ended ({self.app.proc.returncode}): {_tail(self.app)}")
        answer = await self.harness.control("GET", STATE_PATH + query, port=self.port, limit=LONG_POLL + 10)
        return HostState.from_dict(answer)

    async def begin_game(self, seed: int) -> None:
        """Each game's steps start from ``seed`` (not from what the games before it, and the
        Application's other draws, left of the generator)."""
        await self.harness.control("POST", SEED_PATH, {"seed": seed}, port=self.port)

    async def ready(self) -> None:
        while not (await self.state("?ready=1")).came:
            pass

    async def wait_heard(self, count: int) -> None:
        while not (await self.state(f"?heard={count}")).came:
            pass

    async def quiet(self) -> None:
        audio = self.harness.device.audio

        def quiet_now() -> bool:
            last = audio.clips[-1].ended if audio.clips else None
            return audio.playing is None and (last is None or trio.current_time() - last >= QUIET_S)

        await self.harness.until(quiet_now, limit=LONG_POLL * 3, every=0.05)

    async def say(self, line: str, pcm: bytes) -> None:
        """Into the simulated robot's microphone (and on through the Daemon), then silence."""
        del line  # the Application's own recogniser hears it
        self.harness.device.audio.microphone.feed(pcm + bytes(SCENARIO_SILENCE_BYTES))
        await trio.lowlevel.checkpoint()

    def records(self) -> list[dict[str, Any]]:
        """The trace file's records, read on from where the last call stopped (it is polled
        while the Application works: parsing it whole each time took CPU from it)."""
        try:
            with self.harness.trace_file.open("rb") as file:
                file.seek(self._read)
                data = file.read()
        except FileNotFoundError:
            return self._records
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next call
        self._read += end
        for line in data[:end].splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                self._records.append(record)
        return self._records


def _tail(app: Program, lines: int = 6) -> str:
    return " | ".join(app.output.strip().splitlines()[-lines:]) or "no output"


def _environment(seed: int) -> dict[str, str]:
    """The Daemon's environment, which its Application gets: this one, in test mode."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED)}
    env.update({
        TEST_MODE_ENV: "1",
        CONTROL_PORT_ENV: str(CONTROL_PORT),
        SEED_ENV: str(seed),
        DRAW_PACE_ENV: str(DRAW_PACE),
        "AGENTCADE_MODELS_DIR": str(models_dir()),  # made here: the namespace has no network
    })
    return env


@asynccontextmanager
async def open_daemon_stage(*, speed: float, seed: int) -> AsyncIterator[DaemonStage]:
    """The Daemon in a private namespace, the simulated robot paired, agentcade started as
    its Application and greeted; everything stopped when the block ends.

    Raises:
        NotPrivate: no private network namespace can be made here (nothing was started).
        ModelMissing: the speech models cannot be made on this machine.
        ApplicationEnded: the Application did not start listening.
    """
    await trio.to_thread.run_sync(whisper_base_dir)
    await trio.to_thread.run_sync(baker_voice_dir)
    with tempfile.TemporaryDirectory(prefix="agentcade-e2e-daemon-") as home:
        device = SimDevice(audio_speed=speed)
        async with open_daemon_harness(Path(home) / "home", _environment(seed), device=device) as harness:
            app = await harness.app_run()
            stage = DaemonStage(harness, app)
            with trio.move_on_after(START_LIMIT) as waited:
                while not device.audio.clips:
                    if not app.running:
                        break
                    await trio.sleep(0.1)
                while app.running:  # the endpoint comes up with the pipeline
                    try:
                        await stage.ready()
                        break
                    except OSError:
                        await trio.sleep(0.2)
            if waited.cancelled_caught or not app.running:
                raise ApplicationEnded(f"the Application did not start listening within "
                                       f"{START_LIMIT:g} s: {_tail(app)}")
            yield stage
