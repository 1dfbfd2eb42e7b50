"""Opening the game registry: built-in games, installed remote games and ``--game`` ones.

Three sources, in this order (a later one replaces an earlier one with the same id):
the built-in games under ``games/`` (in-process), the URLs listed in
``<user config dir>/games.json`` (``{"remote": ["https://..."]}``, over A2A), then
``--game <dir|url>``. ``GameRegistry`` itself (``agentcade.main.registry``) only holds and
finds them.

Remote games are opened concurrently, each card fetch bounded by :data:`CARD_TIMEOUT`, and
start-up waits for them :data:`START_WAIT` seconds at most: a slow server joins the
registry when its card arrives (listed in ``registry.failed`` as still connecting until
then), one that does not answer in time is listed as unavailable. Two hanging servers used
to cost 421 s of nothing at start-up.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path

import trio

from agentcade.core.settings import user_config_dir
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.game.client import GameClient
from agentcade.game.loader import builtin_games_dir
from agentcade.main.registry import GameRegistry
from agentcade.wiring.games import GAME_TIMEOUT, is_url, open_game
from agentcade.wiring.remote import Confirmed

__all__ = [
    "CARD_TIMEOUT",
    "START_WAIT",
    "Confirmed",
    "confirmed_remote_games",
    "forget_remote_game",
    "installed_remote_games",
    "open_registry",
    "remember_remote_game",
]

log = logging.getLogger(__name__)

START_WAIT = 3.0
"""Seconds start-up waits for remote games' cards; slower ones join later."""
CARD_TIMEOUT = 20.0
"""Seconds a remote game's card may take before the game is listed as unavailable."""
CONNECTING = "还在连接，名片到了就能玩"


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


def confirmed_remote_games(config_dir: Path | None = None) -> dict[str, Confirmed]:
    """What the family confirmed for each installed remote game (``games.json``'s
    ``"confirmed"``: url -> version and capabilities). A game installed before confirmations
    were kept has none: its first card is taken as confirmed."""
    path = (config_dir or user_config_dir()) / "games.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    records = data.get("confirmed") if isinstance(data, dict) else None
    out: dict[str, Confirmed] = {}
    for url, record in (records if isinstance(records, dict) else {}).items():
        if not isinstance(record, dict):
            continue
        version, caps = record.get("version"), record.get("capabilities")
        if isinstance(version, str) and isinstance(caps, list) and all(isinstance(c, str) for c in caps):
            out[url] = Confirmed(version=version, capabilities=tuple(caps))
    return out


def _update_games_json(config_dir: Path | None, change: Callable[[dict[str, object]], None]) -> None:
    """Rewrite ``games.json`` after ``change(data)``, keeping its other keys; atomically."""
    path = (config_dir or user_config_dir()) / "games.json"
    data: dict[str, object] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}  # unreadable: rewritten from what we know (reading it gave no games)
        if isinstance(loaded, dict):
            data = loaded
    listed = data.get("remote")
    data["remote"] = [u for u in listed if isinstance(u, str)] if isinstance(listed, list) else []
    confirmed = data.get("confirmed")
    data["confirmed"] = confirmed if isinstance(confirmed, dict) else {}
    change(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def remember_remote_game(
    url: str, config_dir: Path | None = None, *, confirmed: Confirmed | None = None
) -> None:
    """Add ``url`` to ``games.json`` (the next start opens it too; no duplicates) and, when
    given, what the family confirmed for it (installing, or confirming it again)."""

    def change(data: dict[str, object]) -> None:
        urls = data["remote"]
        assert isinstance(urls, list)
        if url not in urls:
            urls.append(url)
        records = data["confirmed"]
        assert isinstance(records, dict)
        if confirmed is not None:
            records[url] = {"version": confirmed.version, "capabilities": list(confirmed.capabilities)}

    _update_games_json(config_dir, change)


def forget_remote_game(url: str, config_dir: Path | None = None) -> None:
    """Remove ``url`` (and what was confirmed for it) from ``games.json``."""

    def change(data: dict[str, object]) -> None:
        urls = data["remote"]
        assert isinstance(urls, list)
        data["remote"] = [u for u in urls if u != url]
        records = data["confirmed"]
        assert isinstance(records, dict)
        records.pop(url, None)

    _update_games_json(config_dir, change)


@asynccontextmanager
async def open_registry(
    *,
    extra: Sequence[str] = (),
    remote: Sequence[str] | None = None,
    builtin_dir: Path | None = None,
    builtins: bool = True,
    trace: Trace = NULL_TRACE,
    game_timeout: float = GAME_TIMEOUT,
    confirmed: Callable[[str], Confirmed | None] | None = None,
) -> AsyncIterator[GameRegistry]:
    """Open every built-in game, the installed remote games and ``extra`` (``--game``).

    ``game_timeout``: how long a remote game may stay without any reply (``open_game``).
    ``builtins=False``: no built-in game (``agentcade e2e --game``: only the game under test).
    ``confirmed(url)``: what the family confirmed for an installed game, read each time a
    game is opened (default: ``games.json``); a remote game gets only the capabilities
    confirmed for it (``RemoteGameClient``), a ``--game`` one all it declares.

    A game that fails to open is left out and named in ``registry.problems`` (and kept
    in ``registry.failed`` for a retry) so one broken game never keeps the robot from
    playing the others. While the block runs, ``registry.open`` adds games.
    """
    registry = GameRegistry()
    root = builtin_dir or builtin_games_dir()
    targets = [str(p) for p in sorted(root.iterdir()) if p.is_dir() and (p / "SKILL.md").is_file()] if builtins else []
    urls = list(installed_remote_games() if remote is None else remote)
    urls += [t for t in extra if is_url(t)]
    targets += [t for t in extra if not is_url(t)]
    developing = {t for t in extra if is_url(t)}
    lookup = confirmed or (lambda url: confirmed_remote_games().get(url))

    def opener(target: str) -> AbstractAsyncContextManager[GameClient]:
        record = None if target in developing else lookup(target)
        return open_game(target, trace=trace, game_timeout=game_timeout, confirmed=record)

    async with AsyncExitStack() as stack:
        for target in targets:
            try:
                client = await stack.enter_async_context(open_game(target, trace=trace, game_timeout=game_timeout))
            except Exception as exc:  # noqa: BLE001 - one broken game must not stop the others
                _unavailable(registry, target, str(exc))
                continue
            registry.add(client)
        async with trio.open_nursery() as nursery:
            registry.start(nursery, opener)
            joined = {url: trio.Event() for url in dict.fromkeys(urls)}
            for url, done in joined.items():
                nursery.start_soon(_join, registry, url, done, trace)
            with trio.move_on_after(START_WAIT):
                for done in joined.values():
                    await done.wait()
            for url, done in joined.items():
                if not done.is_set():
                    registry.failed[url] = CONNECTING
            try:
                yield registry
            finally:
                nursery.cancel_scope.cancel()


async def _join(registry: GameRegistry, url: str, done: trio.Event, trace: Trace) -> None:
    """Open one remote game, within ``CARD_TIMEOUT``; a failure lists it as unavailable."""
    try:
        with trio.move_on_after(CARD_TIMEOUT) as waited:
            try:
                await registry.open(url)
            except Exception as exc:  # noqa: BLE001 - one broken game must not stop the others
                _unavailable(registry, url, str(exc))
        if waited.cancelled_caught:
            trace.record("game_unavailable", url=url, after=CARD_TIMEOUT)
            _unavailable(registry, url, f"{CARD_TIMEOUT:g} 秒内没有拿到它的名片")
    finally:
        done.set()


def _unavailable(registry: GameRegistry, target: str, why: str) -> None:
    registry.problems.append(f"{target}: {why}")
    registry.failed[target] = why
    log.warning("game %s not available: %s", target, why)
