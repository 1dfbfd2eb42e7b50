"""The game registry: every game the main agent can start, behind one ``GameClient`` each.

Three sources, in this order (a later one replaces an earlier one with the same id):

1. the built-in games under ``games/`` — each runs in this process through its own
   ``GameHost`` (no sockets);
2. installed remote games — the URLs listed in ``<user config dir>/games.json``
   (``{"remote": ["https://..."]}``), reached over A2A;
3. ``--game <dir|url>`` — a game in development.

Games come and go while the program runs (the settings page installs and uninstalls
remote games, and retries a built-in game once its missing settings are filled in):
``open`` starts a game in a task of the registry's own nursery — so its host lives in a
nursery owned by one task, as trio requires — and ``close`` ends that task. ``failed``
keeps the games that could not be opened, by target, so they can be retried.

``find`` recognises a game by id, name or alias, also when speech recognition got a
character or two wrong (pinyin-tolerant matching from ``agentcade.judge``).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import trio

from agentcade.game.client import GameClient, GameInfo
from agentcade.game.loader import builtin_games_dir
from agentcade.game.open import is_url, open_game
from agentcade.judge import is_match, normalize
from agentcade.settings import user_config_dir
from agentcade.trace import NULL_TRACE, Trace

__all__ = [
    "GameRegistry",
    "forget_remote_game",
    "installed_remote_games",
    "open_registry",
    "remember_remote_game",
]

log = logging.getLogger(__name__)


def installed_remote_games(config_dir: Path | None = None) -> list[str]:
    """URLs of the remote games the user installed (``games.json`` in the config dir)."""
    path = (config_dir or user_config_dir()) / "games.json"
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable (%s); no remote games loaded", path, exc)
        return []
    urls = data.get("remote", []) if isinstance(data, dict) else []
    return [u for u in urls if isinstance(u, str) and is_url(u)]


def _write_games_json(config_dir: Path | None, change: Callable[[list[str]], list[str]]) -> None:
    """Rewrite ``games.json`` with ``change(urls)``, keeping its other keys; atomically."""
    path = (config_dir or user_config_dir()) / "games.json"
    data: dict[str, object] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}  # unreadable: rewritten from what we know (reading it gave no games)
        if isinstance(loaded, dict):
            data = loaded
    urls = [u for u in data.get("remote", []) or [] if isinstance(u, str)]  # type: ignore[union-attr]
    data["remote"] = change(urls)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def remember_remote_game(url: str, config_dir: Path | None = None) -> None:
    """Add ``url`` to ``games.json`` (the next start opens it too); no duplicates."""
    _write_games_json(config_dir, lambda urls: urls if url in urls else [*urls, url])


def forget_remote_game(url: str, config_dir: Path | None = None) -> None:
    """Remove ``url`` from ``games.json``."""
    _write_games_json(config_dir, lambda urls: [u for u in urls if u != url])


class GameRegistry:
    """Games by id, in the order they should be offered."""

    def __init__(self) -> None:
        self._clients: dict[str, GameClient] = {}
        self.problems: list[str] = []
        """Games that could not be opened, one readable line each."""
        self.failed: dict[str, str] = {}
        """Targets (folder or URL) that could not be opened -> why; ``retry`` tries again."""
        self._nursery: trio.Nursery | None = None
        self._trace: Trace = NULL_TRACE
        self._scopes: dict[str, trio.CancelScope] = {}

    def add(self, client: GameClient) -> None:
        """Register (or replace) a game."""
        self._clients[client.info.id] = client

    async def open(self, target: str) -> GameInfo:
        """Open a game while the program runs and offer it at once (replacing its id).

        Raises:
            RuntimeError: the registry is not running (not from ``open_registry``).
            Exception: whatever opening the game raised (``GameRemoteError``,
                ``GameLoadError``, ``SettingsError``); nothing is changed then.
        """
        if self._nursery is None:
            raise RuntimeError("the registry is not running")
        client: GameClient = await self._nursery.start(self._keep, target)
        self.failed.pop(target, None)
        return client.info

    async def _keep(self, target: str, *, task_status: trio.TaskStatus[GameClient]) -> None:
        with trio.CancelScope() as scope:
            async with open_game(target, trace=self._trace) as client:
                game_id = client.info.id
                old = self._scopes.pop(game_id, None)
                self._scopes[game_id] = scope
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

    async def retry(self) -> list[str]:
        """Try the games that failed to open again; returns the targets still failing."""
        for target in list(self.failed):
            try:
                await self.open(target)
            except Exception as exc:  # noqa: BLE001 - one broken game must not stop the others
                self.failed[target] = str(exc)
        return list(self.failed)

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


@asynccontextmanager
async def open_registry(
    *,
    extra: Sequence[str] = (),
    remote: Sequence[str] | None = None,
    builtin_dir: Path | None = None,
    trace: Trace = NULL_TRACE,
) -> AsyncIterator[GameRegistry]:
    """Open every built-in game, the installed remote games and ``extra`` (``--game``).

    A game that fails to open is left out and named in ``registry.problems`` so one
    broken game never keeps the robot from playing the others.
    """
    registry = GameRegistry()
    registry._trace = trace
    root = builtin_dir or builtin_games_dir()
    targets = [str(p) for p in sorted(root.iterdir()) if p.is_dir() and (p / "SKILL.md").is_file()]
    targets += list(installed_remote_games() if remote is None else remote)
    targets += list(extra)
    async with AsyncExitStack() as stack:
        for target in targets:
            try:
                client = await stack.enter_async_context(open_game(target, trace=trace))
            except Exception as exc:  # noqa: BLE001 - one broken game must not stop the others
                registry.problems.append(f"{target}: {exc}")
                registry.failed[target] = str(exc)
                log.warning("game %s not available: %s", target, exc)
                continue
            registry.add(client)
        async with trio.open_nursery() as nursery:
            registry._nursery = nursery
            try:
                yield registry
            finally:
                registry._nursery = None
                nursery.cancel_scope.cancel()
