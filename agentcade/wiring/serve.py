"""Serving one opened game over A2A on a port: the card, the server, the public address.

``agentcade serve`` and ``check`` (which serves a folder on a free local port) share it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial

import trio

from agentcade.a2a.card import build_card
from agentcade.a2a.server import serve_a2a
from agentcade.core.errors import AddressError
from agentcade.core.under_test import UNREVEALED_EXTENSION
from agentcade.wiring.games import LocalGame

__all__ = ["public_url", "serve_game"]


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
    test_mode: bool = False,
    task_status: trio.TaskStatus[tuple[int, str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve an opened game until cancelled; ``started((port, card_url))`` once bound.

    ``test_mode``: the card declares the test extension and the server answers it
    (``agentcade.core.under_test``): what the game keeps unrevealed, for a test runner.

    Raises:
        AddressError: the port is taken, not allowed, or the host does not resolve.
    """
    try:
        listeners = await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        raise AddressError(
            f"不能在 {host}:{port} 上服务（{exc.strerror or exc}）。端口被占用就换一个 --port，"
            "主机名不对就检查 --host"
        ) from None
    bound = listeners[0].socket.getsockname()[1]
    card_url = url or public_url(None, os.environ, host, bound)
    extensions = {UNREVEALED_EXTENSION: "test mode: what the game keeps unrevealed"} if test_mode else None
    card = build_card(local.game.skill, card_url, extensions=extensions)
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve_a2a, local.host, card, listeners, test_mode=test_mode))
        task_status.started((bound, card_url))
