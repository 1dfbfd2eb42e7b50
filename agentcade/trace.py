"""The trace: one record per thing that happened, grouped by request id.

Records are plain dicts ``{"type": ..., "ts": ..., "request_id": ..., ...}`` handed to
sinks (a console printer, a JSON-lines file, tests). The request id travels in a
context variable, so a game's tool calls made deep inside a turn land under the request
that caused them without being passed around (trio copies the context into child tasks).

Secrets never reach a sink: fields whose names look like credentials are masked, and
known secret values (the model key) are scrubbed from every string.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "NULL_TRACE",
    "JsonLinesSink",
    "Sink",
    "Trace",
    "caller_scope",
    "current_caller",
    "current_request_id",
    "request_scope",
]

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
        for sink in list(self._sinks):
            sink(rec)

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
    """Writes each record as one JSON line (``--trace-file``)."""

    def __init__(self, path: str | Path) -> None:
        self._file: TextIO = Path(path).open("a", encoding="utf-8")  # noqa: SIM115

    def __call__(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()
