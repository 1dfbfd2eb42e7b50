"""Server-sent events framing, both directions (sans-IO).

Encoding follows sse-starlette as the SDK server uses it: ``data: <json>\\r\\n\\r\\n`` per
event, ``event: error`` for error events, ``: ping - <time>`` comments, JSON from
``json.dumps(obj, ensure_ascii=False)`` (default separators, never multi-line).

``SSEDecoder`` is the WHATWG parsing algorithm reduced to what A2A needs: CRLF, LF or CR
line ends (also split across reads), ``:`` comments, ``event:``, multi-line ``data:``
joined with ``\\n``, one optional space after the colon, a UTF-8 BOM at the very start of
the stream dropped (WHATWG: "one leading U+FEFF BOM ... must be ignored"). ``id:`` and
``retry:`` are parsed and ignored. An event whose data is empty is not dispatched: it
carries no JSON-RPC message, and the SDK's client skips it too (``if not data``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_EVENT_SIZE", "SSEDecoder", "SSEEvent", "encode_data", "encode_ping"]

MAX_EVENT_SIZE = 4 * 1024 * 1024
"""Largest event a decoder accepts. A reply is at most 500 characters of text plus some
directives (a drawing is the biggest: a few KiB); 4 MiB leaves room without letting a
broken peer make us buffer forever."""


def encode_data(payload: Any, *, event: str | None = None) -> bytes:
    """One event frame carrying ``payload`` as JSON."""
    text = json.dumps(payload, ensure_ascii=False)
    head = f"event: {event}\r\n" if event else ""
    return f"{head}data: {text}\r\n\r\n".encode()


def encode_ping(now: dt.datetime | None = None) -> bytes:
    """A keep-alive comment, like sse-starlette's ``: ping - <utc time>``."""
    now = now or dt.datetime.now(dt.UTC)
    return f": ping - {now}\r\n\r\n".encode()


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: its type (``message`` by default) and joined data."""

    event: str
    data: str


_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Incremental SSE parser: ``feed(bytes) -> list[SSEEvent]``.

    Raises:
        ValueError: one event grew beyond ``max_event_size`` bytes, or is not UTF-8.
    """

    def __init__(self, *, max_event_size: int = MAX_EVENT_SIZE) -> None:
        self._buf = bytearray()
        self._pending_cr = False
        self._event = ""
        self._data: list[str] = []
        self._size = 0
        self._max = max_event_size
        self._start = b""
        """Bytes of the stream's start held back until we know whether they are a BOM."""
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume bytes; return the events completed by them.

        Linear in the bytes fed: only the new bytes are scanned for line ends (the kept
        buffer never holds one), so a peer trickling one huge line cannot make the host
        rescan it on every read.
        """
        out: list[SSEEvent] = []
        if not self._started:
            self._start += chunk
            if len(self._start) < len(_BOM) and _BOM.startswith(self._start):
                return out  # maybe a BOM split across reads
            chunk = self._start.removeprefix(_BOM)
            self._start, self._started = b"", True
        if self._pending_cr and chunk[:1] == b"\n":  # the LF of a CRLF split across reads
            chunk = chunk[1:]
        self._pending_cr = False
        buf = self._buf
        scan_from = len(buf)
        buf += chunk
        start = 0
        for match in _LINE_END.finditer(buf, scan_from):
            if match.group() == b"\r" and match.end() == len(buf):
                self._pending_cr = True  # maybe the first half of a CRLF
            self._line(bytes(buf[start : match.start()]), out)
            start = match.end()
        del buf[:start]
        if len(buf) + self._size > self._max:
            raise ValueError(f"an SSE event is larger than {self._max} bytes")
        return out

    def _line(self, raw: bytes, out: list[SSEEvent]) -> None:
        try:
            line = raw.decode()
        except UnicodeDecodeError as exc:
            raise ValueError(f"an SSE line is not UTF-8: {exc}") from None
        if not line:
            data = "\n".join(self._data)
            if data:
                out.append(SSEEvent(self._event or "message", data))
            self._event, self._data, self._size = "", [], 0
            return
        if line.startswith(":"):
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._size += len(raw)
            if self._size > self._max:
                raise ValueError(f"an SSE event is larger than {self._max} bytes")
        elif name == "event":
            self._event = value
