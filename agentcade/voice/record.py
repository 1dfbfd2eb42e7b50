"""``--record DIR``: every clip the robot said and every utterance it heard, as WAV files.

So an author can listen to a session afterwards: ``NNN-robot.wav`` (24 kHz mono, what the
speaker played) and ``NNN-heard.wav`` (16 kHz mono, the utterance as the recogniser got it),
numbered in one sequence in the order they happened. Files are written by a worker thread,
never on the event loop, and a failed write is one line and a ``record_failed`` trace
record: recording never stops the game.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from pathlib import Path

import trio

from agentcade.core.errors import VoiceError
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.voice.pcm import to_wav

__all__ = ["Recorder", "open_record_dir"]

ROBOT_RATE = 24000
HEARD_RATE = 16000


def open_record_dir(path: Path) -> Path:
    """``path``, created if need be, after checking a file can be written there.

    Raises:
        VoiceError: the folder cannot be made or written (the message says which).
    """
    probe = path / ".agentcade-record-probe"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise VoiceError(f"--record: 不能写入 {path}（{exc.strerror or exc}），换一个文件夹") from None
    return path


class Recorder:
    """Numbers the clips and writes them; run :meth:`run` in a nursery."""

    def __init__(self, folder: Path, *, trace: Trace = NULL_TRACE) -> None:
        self.folder = folder
        self._trace = trace
        self._count = 0
        self._send, self._receive = trio.open_memory_channel[tuple[Path, bytes, int]](math.inf)
        self._failed = False
        self.written: list[Path] = []

    def robot(self, pcm: bytes) -> None:
        """A clip the speaker is playing (24 kHz mono s16le)."""
        self._queue("robot", pcm, ROBOT_RATE)

    def heard(self, pcm: bytes) -> None:
        """An utterance the recogniser got (16 kHz mono s16le)."""
        self._queue("heard", pcm, HEARD_RATE)

    def _queue(self, kind: str, pcm: bytes, rate: int) -> None:
        self._count += 1
        path = self.folder / f"{self._count:03d}-{kind}.wav"
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            self._send.send_nowait((path, pcm, rate))  # closed: shutting down, the session is over

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Write queued clips until cancelled; what is queued then is still written."""
        task_status.started()
        try:
            async for path, pcm, rate in self._receive:
                await self._write(path, pcm, rate)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(5):
                self._send.close()
                async for path, pcm, rate in self._receive:
                    await self._write(path, pcm, rate)

    async def _write(self, path: Path, pcm: bytes, rate: int) -> None:
        try:
            await trio.to_thread.run_sync(_write_file, path, to_wav(pcm, rate))
        except OSError as exc:
            self._trace.record("record_failed", file=str(path), error=exc.strerror or str(exc))
            if not self._failed:
                self._failed = True
                sys.stderr.write(f"agentcade: 录音写不进 {path}（{exc.strerror or exc}），游戏照常进行。\n")
            return
        self.written.append(path)


def _write_file(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    os.replace(tmp, path)
