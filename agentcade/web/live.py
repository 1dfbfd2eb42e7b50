"""The live view's memory: the last turns, each with its trace records, kept in order.

A ``LiveLog`` is a trace sink (``trace.add_sink(log)``). Every record that carries a
request id belongs to the turn of that id (the main agent gives each utterance one, and
the game requests, replies, spoken lines and robot directives it causes carry it too);
records without one (a robot connecting, a game loading) are kept apart. Memory is
bounded: ``max_turns`` turns, ``max_records`` records per turn, long strings clipped.

A robot directive that ran (``directive_executed``) gets ``shown``: what a person saw, the
screen as SVG and the head and lights in words (``agentcade.web.screen``), read from the
full directive of the game reply that asked for it (``game_reply``'s ``directive_data``,
which is not kept: the record keeps the short ``directives``).

Pages that watch (the WebSocket of the live page) subscribe with a callback; a callback
must not block (the server's puts the record on a bounded channel and drops a watcher
that falls behind: the page then reconnects and reloads the whole view).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

from agentcade.web.screen import ScreenReader

__all__ = ["LiveLog", "Watcher"]

Watcher = Callable[[dict[str, Any]], None]

_CLIP = 1500


def _clip(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _CLIP else value[:_CLIP] + "…"
    if isinstance(value, dict):
        return {str(k): _clip(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clip(v) for v in value[:50]]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _clip(str(value))


class LiveLog:
    """The last turns of the trace, grouped by request id (a trace sink)."""

    def __init__(self, *, max_turns: int = 50, max_records: int = 300) -> None:
        self.max_turns = max_turns
        self.max_records = max_records
        self._turns: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._other: deque[dict[str, Any]] = deque(maxlen=max_records)
        self._watchers: list[Watcher] = []
        self._asked: dict[str, dict[str, deque[dict[str, Any]]]] = {}
        """Per turn: the directives its game replies asked for, by their short form."""
        self._readers: dict[str, ScreenReader] = {}

    def _see(self, rid: str, record: dict[str, Any], rec: dict[str, Any]) -> None:
        """Remember what a reply asked for; say what an executed directive showed."""
        if record.get("type") == "game_reply":
            data, short = record.get("directive_data"), record.get("directives")
            if isinstance(data, list) and isinstance(short, list):
                asked = self._asked.setdefault(rid, {})
                for described, wire in zip(short, data, strict=False):
                    if isinstance(described, str) and isinstance(wire, dict):
                        asked.setdefault(described, deque(maxlen=64)).append(wire)
        elif record.get("type") == "directive_executed" and record.get("outcome") != "error":
            queue = self._asked.get(rid, {}).get(str(record.get("directive")))
            if queue:
                shown = self._readers.setdefault(rid, ScreenReader()).read(queue.popleft())
                if shown is not None:
                    rec["shown"] = shown.to_json()

    def __call__(self, record: dict[str, Any]) -> None:
        rec = _clip({k: v for k, v in record.items() if k != "directive_data"})
        rid = rec.get("request_id")
        if isinstance(rid, str) and rid:
            self._see(rid, record, rec)
            records = self._turns.get(rid)
            if records is None:
                records = self._turns[rid] = []
                while len(self._turns) > self.max_turns:
                    gone, _ = self._turns.popitem(last=False)
                    self._asked.pop(gone, None)
                    self._readers.pop(gone, None)
            if len(records) < self.max_records:
                records.append(rec)
        else:
            self._other.append(rec)
        for watcher in list(self._watchers):
            watcher(rec)

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call ``watcher`` with every new record; returns the function that stops it."""
        self._watchers.append(watcher)

        def stop() -> None:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

        return stop

    def snapshot(self) -> dict[str, Any]:
        """Everything kept, oldest turn first: ``{"turns": [...], "other": [...]}``."""
        return {
            "turns": [{"id": rid, "records": list(recs)} for rid, recs in self._turns.items()],
            "other": list(self._other),
        }
