"""海龟汤的题库和“玩过的题”记录。The puzzle library and the per-user record of played puzzles.

* ``load_puzzles()`` reads ``puzzles.yaml`` next to this file into ``Puzzle`` objects.
* ``PlayedStore`` keeps the ids of puzzles this user has already heard, in
  ``user_data_dir("turtle_soup") / "played.json"`` (``{"played": [id, ...]}``), so a new
  game starts with a puzzle the family has not played yet. Writes go to a temp file in
  the same folder that is then renamed over the old one, so a reader never sees half a
  file. Two sessions writing at the same moment may lose one id (last writer wins) —
  harmless: that puzzle can come up once more.
* ``pick()`` chooses the next puzzle: never one already played in this session; unplayed
  ones first; when every puzzle has been played, the record starts over.

Storage problems (unreadable folder, corrupt JSON) never stop a game: the store logs and
behaves as if nothing had been played.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from agentcade.settings import user_data_dir

__all__ = ["GAME_ID", "PUZZLES_PATH", "PlayedStore", "Puzzle", "load_puzzles", "pick"]

log = logging.getLogger(__name__)

GAME_ID = "turtle_soup"
PUZZLES_PATH = Path(__file__).with_name("puzzles.yaml")
PLAYED_FILE = "played.json"


@dataclass(frozen=True)
class Puzzle:
    """One puzzle. ``bottom`` and ``key_points`` are secret until revealed."""

    id: str
    title: str
    surface: str
    bottom: str
    key_points: tuple[str, ...]
    hints: tuple[str, ...]
    said_as: tuple[tuple[tuple[str, ...], ...], ...] = ()
    """Per key point, the ideas a child says it with, each idea its ways of saying it
    (``puzzles.yaml``'s ``said_as``: ideas apart by spaces, ways by ``|``). Empty: none declared."""


def load_puzzles(path: Path = PUZZLES_PATH) -> tuple[Puzzle, ...]:
    """Every puzzle of ``puzzles.yaml``, in file order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return tuple(
        Puzzle(
            id=str(item["id"]),
            title=str(item["title"]).strip(),
            surface=str(item["surface"]).strip(),
            bottom=str(item["bottom"]).strip(),
            key_points=tuple(str(k).strip() for k in item["key_points"]),
            hints=tuple(str(h).strip() for h in item.get("hints") or ()),
            said_as=_said_as(item),
        )
        for item in data["puzzles"]
    )


def _said_as(item: dict[str, object]) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """A puzzle's ``said_as``, one entry per key point (ValueError when they do not pair up)."""
    raw = item.get("said_as") or []
    points = item["key_points"]
    if not isinstance(raw, list) or not isinstance(points, list):
        raise ValueError(f"{item['id']}: said_as and key_points are lists")
    if raw and len(raw) != len(points):
        raise ValueError(f"{item['id']}: said_as has {len(raw)} entries for {len(points)} key points")
    return tuple(
        tuple(tuple(way for way in idea.split("|") if way) for idea in str(entry).split())
        for entry in raw
    )


class PlayedStore:
    """The ids of puzzles already played by this user; ``path=None`` keeps them in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: set[str] = set()

    @classmethod
    def default(cls) -> PlayedStore:
        """The store in the user's data folder (``$AGENTCADE_HOME/data/turtle_soup``)."""
        try:
            return cls(user_data_dir(GAME_ID) / PLAYED_FILE)
        except (OSError, ValueError) as exc:  # pragma: no cover - no home folder at all
            log.warning("turtle_soup: no data folder (%s); played puzzles are not remembered", exc)
            return cls(None)

    def load(self) -> set[str]:
        """The played ids; empty when the file is missing or unreadable."""
        if self.path is None:
            return set(self._memory)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set()
        except (OSError, ValueError) as exc:
            log.warning("turtle_soup: cannot read %s (%s); starting over", self.path, exc)
            return set()
        played = data.get("played") if isinstance(data, dict) else None
        if not isinstance(played, list):
            return set()
        return {item for item in played if isinstance(item, str)}

    def save(self, ids: Iterable[str]) -> None:
        """Replace the record with ``ids`` (temp file + rename)."""
        ids = sorted(set(ids))
        if self.path is None:
            self._memory = set(ids)
            return
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".played-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"played": ids}, f, ensure_ascii=False)
            os.replace(tmp, self.path)
            tmp = None
        except OSError as exc:
            log.warning("turtle_soup: cannot write %s (%s)", self.path, exc)
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def pick(
    puzzles: Sequence[Puzzle],
    store: PlayedStore,
    session: Iterable[str],
    rng: random.Random,
) -> Puzzle | None:
    """The next puzzle, recorded as played; None when this session has played them all.

    Never a puzzle of ``session`` (ids played in this game); an unplayed one when there
    is one; otherwise the record starts over (keeping only this session's ids).
    """
    session = set(session)
    candidates = [p for p in puzzles if p.id not in session]
    if not candidates:
        return None
    known = {p.id for p in puzzles}
    played = store.load() & known  # ids of puzzles since removed from the library drop out
    fresh = [p for p in candidates if p.id not in played]
    if not fresh:
        played, fresh = session & known, candidates
    choice = rng.choice(fresh)
    store.save(played | {choice.id})
    return choice
