"""``--no-pages`` / ``--pages-port`` / ``--catalog-url``: the local pages for every command that plays.

``play`` and ``run`` both call ``pages_from_args`` around their pipeline. The pages are
on unless ``--no-pages``; the port is ``--pages-port``, else ``$AGENTCADE_PAGES_PORT``,
else 8790 (``0``: any free port). A port that is taken costs the pages, never the game:
one line on stderr says so and what to do.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

from agentcade.commands._ports import port_number
from agentcade.core.trace import Trace
from agentcade.main.agent import MainAgent
from agentcade.main.registry import GameRegistry
from agentcade.web import DEFAULT_PORT, Pages, PagesError, serve_pages
from agentcade.wiring.pipeline import follow_model_settings


def add_pages_options(p: argparse.ArgumentParser) -> None:
    """Add the pages' options."""
    env = os.environ.get("AGENTCADE_PAGES_PORT", "")
    default = port_number(env) if env.strip().isdigit() else DEFAULT_PORT
    p.add_argument("--no-pages", action="store_true",
                   help="do not serve the settings / games / live pages")
    p.add_argument("--pages-port", type=port_number, default=default, metavar="PORT",
                   help=f"port of the pages on 127.0.0.1 (default {DEFAULT_PORT}, "
                        "or $AGENTCADE_PAGES_PORT; 0: any free port)")
    p.add_argument("--catalog-url", metavar="URL",
                   help="also offer the games of the catalog at URL on the games page")


@asynccontextmanager
async def pages_from_args(
    args: argparse.Namespace,
    agent: MainAgent,
    registry: GameRegistry,
    trace: Trace,
    *,
    on_saved: Callable[[frozenset[str]], Awaitable[None]] | None = None,
    voice_required: bool | Callable[[], bool] = False,
) -> AsyncIterator[Pages | None]:
    """The running pages, or None (turned off, or the port is taken: one line says so).

    Says where they are, and points to the settings page when a game could not open.
    ``on_saved`` is also told which keys the settings page saved (after the main agent's
    model followed them); ``voice_required`` (``run``) sends ``/`` to the voice settings
    while no speech recognition is set.
    """
    follow = follow_model_settings(agent, registry, trace)

    async def saved(keys: frozenset[str]) -> None:
        await follow(keys)
        if on_saved is not None:
            await on_saved(keys)

    async with AsyncExitStack() as stack:
        pages: Pages | None = None
        if not args.no_pages:
            try:
                pages = await stack.enter_async_context(serve_pages(
                    registry=registry, trace=trace, port=args.pages_port,
                    catalog_url=args.catalog_url, on_saved=saved,
                    voice_required=voice_required,
                ))
            except PagesError as exc:
                print(f"agentcade: {exc}", file=sys.stderr, flush=True)
        if pages is not None:
            print(f"—— 设置、安装游戏和实时面板：{pages.url}", flush=True)
            if registry.failed:
                print(f"—— 有游戏还缺设置或打不开，打开 {pages.settings_url} 看看，填好就能玩，不用重启。",
                      flush=True)
        yield pages
