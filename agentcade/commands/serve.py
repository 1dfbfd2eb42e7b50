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

import trio

from agentcade.game.loader import GameLoadError
from agentcade.llm import offline_notice
from agentcade.settings import SettingsError
from agentcade.wiring.games import open_local_game
from agentcade.wiring.serve import public_url, serve_game


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade serve``."""
    p.add_argument("game", help="game folder or built-in game id")
    add_serve_options(p)


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """The serving options, shared with a game binary (``agentcade build-game``)."""
    p.add_argument("--port", type=int, default=7860, help="TCP port (default: %(default)s; 0 = any free port)")
    p.add_argument("--host", default="0.0.0.0", help="bind address (default: %(default)s)")
    p.add_argument("--public-url", help="the address users enter (default: PUBLIC_URL or SPACE_HOST)")
    p.add_argument("--max-sessions", type=int, default=32, help="live sessions at most (default: %(default)s)")


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
