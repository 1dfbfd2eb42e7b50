"""Which remote games the speech guard stopped, for the games page (a trace sink).

The output queue records ``guard`` for every line it did not say
(``agentcade.main.output``); a remote game's are counted here per game id, so a parent
sees on the games page that a game asked a child for personal data or told them to do
something unsafe. In memory, for the running program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcade.core.guard import TOPIC_WORDS

__all__ = ["GuardMark", "GuardMarks"]


@dataclass(frozen=True, slots=True)
class GuardMark:
    """How often a game was stopped, and what it tried the last time (Chinese)."""

    count: int
    what: str


class GuardMarks:
    """A trace sink keeping a :class:`GuardMark` per remote game the guard stopped."""

    def __init__(self) -> None:
        self._marks: dict[str, GuardMark] = {}

    def __call__(self, record: dict[str, Any]) -> None:
        game = record.get("game")
        if record.get("type") != "guard" or not record.get("remote") or not isinstance(game, str):
            return
        topic = record.get("topic")
        what = TOPIC_WORDS.get(topic, "说了不适合小朋友的话") if isinstance(topic, str) else "说了不适合小朋友的话"
        old = self._marks.get(game)
        self._marks[game] = GuardMark((old.count if old else 0) + 1, what)

    def get(self, game_id: str) -> GuardMark | None:
        """The mark of ``game_id``, if the guard ever stopped it."""
        return self._marks.get(game_id)
