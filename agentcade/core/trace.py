"""The trace: one record per thing that happened, grouped by request id.

Records are plain dicts ``{"type": ..., "ts": ..., "request_id": ..., ...}`` handed to
sinks (a console printer, a JSON-lines file, tests). The request id travels in a
context variable, so a game's tool calls made deep inside a turn land under the request
that caused them without being passed around (trio copies the context into child tasks).

Secrets never reach a sink: fields whose names look like credentials are masked, and
known secret values (the model key) are scrubbed from every string.

A sink that fails never fails the code that made the record: a game's tool call must not
die because a trace file's disk filled up. A sink that raises is dropped (logged once);
``JsonLinesSink`` says so itself in one line on stderr and stops writing.
"""

from __future__ import annotations

import contextvars
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

from agentcade.core.errors import TraceFileError

__all__ = [
    "NULL_TRACE",
    "JsonLinesSink",
    "Sink",
    "Trace",
    "TraceFileError",
    "caller_scope",
    "current_caller",
    "current_request_id",
    "request_scope",
]

log = logging.getLogger(__name__)

_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "agentcade_request_id", default=None
)
_caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentcade_caller", default=None)
_SECRET_NAMES = ("key", "token", "secret", "password", "authorization")
_MASK = "***"

Sink = Callable[[dict[str, Any]], None]


def current_request_id() -> str | None:
    """The request id of the code running now, if any."""
    return _request_id.get()


@contextmanager
def request_scope(request_id: str | None) -> Iterator[None]:
    """Attribute every record made inside the block to ``request_id``."""
    token = _request_id.set(request_id)
    try:
        yield
    finally:
        _request_id.reset(token)


def current_caller() -> str | None:
    """The game code running now: a tool's name, or a hook's (``on_start``), if any."""
    return _caller.get()


@contextmanager
def caller_scope(name: str) -> Iterator[None]:
    """Attribute what happens inside the block (a refused robot call) to the tool ``name``.

    A trace record names the tool that caused it, so ``check`` can say which tool made a
    robot call the game may not make, without the robot proxy knowing about tools.
    """
    token = _caller.set(name)
    try:
        yield
    finally:
        _caller.reset(token)


class Trace:
    """Collects records and hands each to every sink; cheap when there are no sinks."""

    def __init__(self, *sinks: Sink) -> None:
        self._sinks: list[Sink] = list(sinks)
        self._secrets: set[str] = set()
        self._thread = threading.get_ident()
        self._pending: deque[dict[str, Any]] = deque()

    @property
    def enabled(self) -> bool:
        """Whether anyone listens; callers skip building expensive records otherwise."""
        return bool(self._sinks)

    def add_sink(self, sink: Sink) -> None:
        """Send future records to ``sink`` too."""
        self._sinks.append(sink)

    def remove_sink(self, sink: Sink) -> None:
        """Stop sending records to ``sink`` (no error when it was not added)."""
        if sink in self._sinks:
            self._sinks.remove(sink)

    def add_secret(self, value: str | None) -> None:
        """Scrub ``value`` from every future record (e.g. the model's API key)."""
        if value and len(value) >= 4:
            self._secrets.add(value)

    def record(self, type: str, **fields: Any) -> None:
        """Make one record of kind ``type`` and give it to the sinks."""
        if not self._sinks:
            return
        rec: dict[str, Any] = {"type": type, "ts": round(time.time(), 3)}
        rid = _request_id.get()
        if rid:
            rec["request_id"] = rid
        rec.update({k: self._clean(k, v) for k, v in fields.items()})
        if threading.get_ident() != self._thread:
            # A sync tool in a worker thread (agentcade.game.worker): sinks belong to the
            # event loop's thread (the live page feeds a trio channel), so the record
            # waits for the next one made there (the tool's own tool_call record).
            self._pending.append(rec)
            return
        while self._pending:
            self._deliver(self._pending.popleft())
        self._deliver(rec)

    def _deliver(self, rec: dict[str, Any]) -> None:
        for sink in list(self._sinks):
            try:
                sink(rec)
            except Exception:  # the sink boundary: tracing never breaks what it traces
                log.warning("trace sink %r failed; it gets no more records", sink, exc_info=True)
                self.remove_sink(sink)

    def _clean(self, name: str, value: Any) -> Any:
        if any(s in name.lower() for s in _SECRET_NAMES) and isinstance(value, str) and value:
            return _MASK
        if isinstance(value, str):
            for secret in self._secrets:
                value = value.replace(secret, _MASK)
            return value
        if isinstance(value, dict):
            return {str(k): self._clean(str(k), v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._clean("", v) for v in value]
        return value


NULL_TRACE = Trace()
"""A trace nobody listens to (the default)."""


class JsonLinesSink:
    """Writes each record as one JSON line (``--trace-file``).

    A missing folder is created. Once a write fails (a full disk, a removed drive), the
    sink says so in one line (to ``report``; the log by default) and writes nothing
    more: play goes on.

    Raises:
        TraceFileError: the file cannot be opened for appending.
    """

    def __init__(self, path: str | Path, *, report: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self._report = report or log.warning
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: TextIO | None = self.path.open("a", encoding="utf-8")
        except OSError as exc:
            raise TraceFileError(
                f"--trace-file {self.path}: 打不开（{exc.strerror or exc}），请换一个文件路径"
            ) from None

    def __call__(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            self._file.flush()
        except OSError as exc:
            self.close()
            self._report(
                f"trace 文件 {self.path} 写不进去了（{exc.strerror or exc}），"
                "之后的记录不再写入；游戏照常进行。"
            )

    def close(self) -> None:
        """Close the file (a failing close is forgotten: the records are already lost)."""
        file, self._file = self._file, None
        if file is not None:
            with suppress(OSError):
                file.close()
