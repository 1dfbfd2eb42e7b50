"""The game registry: every game the main agent can start, behind one ``GameClient`` each.

Three sources, in this order (a later one replaces an earlier one with the same id):

1. the built-in games under ``games/`` — each runs in this process through its own
   ``GameHost`` (no sockets);
2. installed remote games — the URLs listed in ``<user config dir>/games.json``
   (``{"remote": ["https://..."]}``), reached over A2A;
3. ``--game <dir|url>`` — a game in development.

``find`` recognises a game by id, name or alias, also when speech recognition got a
character or two wrong (pinyin-tolerant matching from ``agentcade.core.judge``).

Games come and go while the program runs (the settings page installs and uninstalls
remote games, and retries a game once its missing settings are filled in): ``open``
starts a game in a task of the registry's own nursery — so its host lives in a nursery
owned by one task, as trio requires — and ``close`` ends that task. ``failed`` keeps the
games that could not be opened, by target, so they can be retried. How a target is
opened is the wiring layer's (``agentcade.wiring.registry`` hands ``start`` its opener).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import trio

from agentcade.core.judge import is_match, normalize
from agentcade.game.client import GameClient, GameInfo

Opener = Callable[[str], AbstractAsyncContextManager[GameClient]]

__all__ = ["GameRegistry"]


class GameRegistry:
    """Games by id, in the order they should be offered."""

    def __init__(self) -> None:
        self._clients: dict[str, GameClient] = {}
        self.problems: list[str] = []
        """Games that could not be opened, one readable line each."""
        self.failed: dict[str, str] = {}
        """Targets (folder or URL) that could not be opened -> why; ``retry`` tries again."""
        self._nursery: trio.Nursery | None = None
        self._opener: Opener | None = None
        self._scopes: dict[str, trio.CancelScope] = {}

    def add(self, client: GameClient) -> None:
        """Register (or replace) a game."""
        self._clients[client.info.id] = client

    def start(self, nursery: trio.Nursery, opener: Opener) -> None:
        """Let ``open`` work: games opened later live in ``nursery``, opened by ``opener``."""
        self._nursery = nursery
        self._opener = opener

    async def open(self, target: str) -> GameInfo:
        """Open a game while the program runs and offer it at once (replacing its id).

        Raises:
            RuntimeError: the registry was not started (``start``).
            Exception: whatever opening the game raised (``GameRemoteError``,
                ``GameLoadError``, ``SettingsError``); nothing is changed then.
        """
        if self._nursery is None:
            raise RuntimeError("the registry is not running")
        client: GameClient = await self._nursery.start(self._keep, target)
        return client.info

    async def _keep(self, target: str, *, task_status: trio.TaskStatus[GameClient]) -> None:
        assert self._opener is not None
        with trio.CancelScope() as scope:
            async with self._opener(target) as client:
                game_id = client.info.id
                old = self._scopes.pop(game_id, None)
                self._scopes[game_id] = scope
                # In the same step as the game is offered: nobody sees it playable and
                # "still connecting" at once (open() resumes only after start() returns).
                self.failed.pop(target, None)
                self.add(client)
                if old is not None:
                    old.cancel()
                task_status.started(client)
                try:
                    await trio.sleep_forever()
                finally:
                    if self._clients.get(game_id) is client:
                        del self._clients[game_id]
                    if self._scopes.get(game_id) is scope:
                        del self._scopes[game_id]

    def close(self, game_id: str) -> bool:
        """Stop offering a game (its host or connection closes in the background)."""
        scope = self._scopes.pop(game_id, None)
        found = self._clients.pop(game_id, None) is not None
        if scope is not None:
            scope.cancel()
        return found

    @property
    def games(self) -> list[GameInfo]:
        """Every game's info."""
        return [c.info for c in self._clients.values()]

    def get(self, game_id: str) -> GameClient | None:
        """The game with exactly this id."""
        return self._clients.get(game_id)

    def find(self, words: str) -> GameClient | None:
        """The game the words name: an id, a name or an alias, tolerating ASR errors.

        The words may be a whole utterance ("我想玩猜谜语"): a name found inside it
        counts; otherwise the whole utterance must state a name or alias (pinyin match).
        """
        if not words.strip():
            return None
        if (exact := self._clients.get(words.strip())) is not None:
            return exact
        said = normalize(words)
        best: tuple[int, GameClient] | None = None
        for client in self._clients.values():
            for name in (client.info.name, *client.info.aliases):
                key = normalize(name)
                if key and key in said and (best is None or len(key) > best[0]):
                    best = (len(key), client)
        if best is not None:
            return best[1]
        for client in self._clients.values():
            if is_match(words, client.info.name, client.info.aliases):
                return client
        for client in self._clients.values():
            if _contains_heard(said, client.info):
                return client
        return None


def _contains_heard(said: str, info: GameInfo) -> bool:
    """A name misheard inside a longer request ("我想完猜迷语"): try every window."""
    for name in (info.name, *info.aliases):
        n = len(normalize(name))
        if n < 2:
            continue
        for i in range(max(0, len(said) - n) + 1):
            if is_match(said[i : i + n], name):
                return True
    return False
