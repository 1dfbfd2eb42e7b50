"""``agentcade serve <dir> --port 7860``: serve one game over A2A (trio + h11).

The card's public URL comes from ``--public-url``, else ``PUBLIC_URL``, else
``https://$SPACE_HOST`` (Hugging Face Spaces), else the local address. Settings come
from the game folder's ``.env``, then the environment. Ctrl-C / SIGTERM end every
session cleanly (each game's ``close()`` runs).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Mapping

import trio

from agentcade.a2a.card import build_card
from agentcade.a2a.server import serve_a2a
from agentcade.game.loader import GameLoadError
from agentcade.game.open import LocalGame, open_local_game
from agentcade.llm import offline_notice
from agentcade.settings import SettingsError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade serve``."""
    p.add_argument("game", help="game folder or built-in game id")
    p.add_argument("--port", type=int, default=7860, help="TCP port (default: %(default)s; 0 = any free port)")
    p.add_argument("--host", default="0.0.0.0", help="bind address (default: %(default)s)")
    p.add_argument("--public-url", help="the address users enter (default: PUBLIC_URL or SPACE_HOST)")
    p.add_argument("--max-sessions", type=int, default=32, help="live sessions at most (default: %(default)s)")


def public_url(explicit: str | None, environ: Mapping[str, str], host: str, port: int) -> str:
    """Where users reach the game, for the card: flag, PUBLIC_URL, SPACE_HOST, local."""
    if explicit:
        return explicit.rstrip("/") + "/"
    if environ.get("PUBLIC_URL"):
        return environ["PUBLIC_URL"].rstrip("/") + "/"
    if environ.get("SPACE_HOST"):
        return f"https://{environ['SPACE_HOST'].strip('/')}/"
    shown = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    return f"http://{shown}:{port}/"


async def serve_game(
    local: LocalGame,
    *,
    port: int,
    host: str,
    url: str | None,
    task_status: trio.TaskStatus[tuple[int, str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve an opened game until cancelled; ``started((port, card_url))`` once bound."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    bound = listeners[0].socket.getsockname()[1]
    card_url = url or public_url(None, os.environ, host, bound)
    card = build_card(local.game.skill, card_url)
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_a2a, local.host, card, listeners)
        task_status.started((bound, card_url))


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM (both end every session, then exit 0)."""
    try:
        trio.run(_serve, args)
    except (GameLoadError, SettingsError) as exc:
        print(f"agentcade serve: {exc}", file=sys.stderr)
        return 1
    return 0


async def _serve(args: argparse.Namespace) -> None:
    explicit = args.public_url or os.environ.get("PUBLIC_URL") or None
    url = public_url(explicit, os.environ, args.host, args.port) if explicit or os.environ.get("SPACE_HOST") else None
    async with open_local_game(args.game, max_sessions=args.max_sessions) as local:
        if local.settings.llm.offline:
            print(offline_notice(), file=sys.stderr)
        try:
            async with trio.open_nursery() as nursery:
                port, card_url = await nursery.start(
                    lambda task_status: serve_game(
                        local, port=args.port, host=args.host, url=url, task_status=task_status
                    )
                )
                print(
                    f"{local.game.skill.name}（{local.game.id}）在 http://{args.host}:{port}/ 上服务；"
                    f"名片地址 {card_url}",
                    flush=True,
                )
                with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()
                        break
        finally:
            # Runs on SIGTERM and on Ctrl-C alike; the host closes the sessions as the
            # surrounding block ends.
            print(f"正在退出：结束 {local.host.session_count} 局。", flush=True)
