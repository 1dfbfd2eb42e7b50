"""Open a game named on the command line: a folder, a built-in id, or an A2A URL.

One home for what ``chat``, ``check``, ``serve`` and ``play --game`` all need: load the
folder, resolve its settings, make a ``GameHost`` that lives in the caller's nursery, and
wrap it in a ``GameClient``; or, for a URL, an A2A client.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from agentcade.core.host_settings import Budgets
from agentcade.core.settings import AgentSettings, SettingsError, game_settings_files
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.game.client import GameClient, GameInfo, InProcessGameClient, is_url
from agentcade.game.host import GameHost
from agentcade.game.loader import LoadedGame, is_builtin_folder, load_game, resolve_game
from agentcade.llm import make_model

if TYPE_CHECKING:
    from agentcade.wiring.remote import Confirmed

__all__ = ["LocalGame", "is_url", "open_game", "open_local_game"]


@dataclass
class LocalGame:
    """A loaded game folder with its settings and host."""

    game: LoadedGame
    settings: AgentSettings
    host: GameHost
    client: InProcessGameClient


@asynccontextmanager
async def open_local_game(
    target: str,
    *,
    trace: Trace = NULL_TRACE,
    max_sessions: int = 32,
    builtin: bool | None = None,
) -> AsyncIterator[LocalGame]:
    """Load a game folder (or built-in id) and run its host until the block ends."""
    path = resolve_game(target)
    game = load_game(path, builtin=is_builtin_folder(path) if builtin is None else builtin)
    fresh = _FreshSettings(game, trace)
    settings = fresh.last
    host = GameHost(lambda: game.new_agent(fresh()), max_sessions=max_sessions, trace=trace)
    info = GameInfo.of(game.skill, str(game.path))
    # Held for the game's whole life: sessions' models share its HTTP client (one TLS
    # context, one connection pool) instead of building and dropping one per session.
    keeper = make_model(settings.llm)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            try:
                yield LocalGame(game, settings, host, InProcessGameClient(host, info))
            finally:
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await keeper.aclose()


class _FreshSettings:
    """The settings as they are now: read again only when where they come from changed.

    The settings page writes the ``.env`` files while the program runs; a new session picks
    the new values up without a restart. Reading them (PyYAML over ``settings.yaml``, the
    ``.env`` files, validation) for every session was 40% of a session's start under load,
    so a session now costs one ``stat`` of each file of ``game_settings_files`` (size,
    ``mtime_ns`` and inode: the page replaces a file, which changes the inode even within
    one tick of the file system's clock) and a look at the environment; the files are read
    again when either differs. Should the settings have become unusable meanwhile, the game
    keeps its last good ones and the trace says so (once per change).

    Raises:
        SettingsError: the settings as first read are unusable (``open_local_game`` tells it).
    """

    def __init__(self, game: LoadedGame, trace: Trace, environ: Mapping[str, str] = os.environ) -> None:
        self.game = game
        self.trace = trace
        self.environ = environ
        self.seen_environ = dict(environ)
        self.files = game_settings_files(game.path, self.seen_environ)
        self.seen_files = self._stamps()
        self.last = self._read()

    def __call__(self) -> AgentSettings:
        """The settings for a new session: its own copy (a game may change its object)."""
        environ = dict(self.environ)
        changed = environ != self.seen_environ
        if changed:
            self.seen_environ = environ
            self.files = game_settings_files(self.game.path, environ)
        stamps = self._stamps()
        if changed or stamps != self.seen_files:
            self.seen_files = stamps
            try:
                self.last = self._read()
            except SettingsError as exc:
                self.trace.record("settings_error", game=self.game.id, error=str(exc))
        return self.last.model_copy(deep=True)

    def _stamps(self) -> tuple[tuple[int, int, int] | None, ...]:
        return tuple(_stamp(path) for path in self.files)

    def _read(self) -> AgentSettings:
        settings = self.game.load_settings(self.seen_environ)
        if settings.llm.api_key is not None:
            self.trace.add_secret(settings.llm.api_key.get_secret_value())
        return settings


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a file's change without reading it; None when it is not there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


GAME_TIMEOUT = Budgets().game
"""The guide's 210 s; ``open_pipeline`` passes the ``AGENTCADE_GAME_TIMEOUT`` setting."""


@asynccontextmanager
async def open_game(
    target: str,
    *,
    trace: Trace = NULL_TRACE,
    game_timeout: float = GAME_TIMEOUT,
    confirmed: Confirmed | None = None,
) -> AsyncIterator[GameClient]:
    """A ``GameClient`` for a folder, a built-in id or a URL.

    ``game_timeout`` (``AGENTCADE_GAME_TIMEOUT``) is how long a remote game may stay
    without any reply before its request is given up; ``confirmed``: what the family
    confirmed for an installed remote game (it gets only those capabilities).
    """
    if is_url(target):
        from agentcade.a2a.client import A2AClient
        from agentcade.wiring.remote import open_remote_game

        client = A2AClient(reply_timeout=game_timeout)
        async with open_remote_game(target, trace=trace, client=client, confirmed=confirmed) as remote:
            yield remote
        return
    async with open_local_game(target, trace=trace) as local:
        yield local.client
