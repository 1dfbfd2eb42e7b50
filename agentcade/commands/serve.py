"""``agentcade serve <dir> --port 7860``: serve one game over A2A (trio + h11).

The card's public URL comes from ``--public-url``, else ``PUBLIC_URL``, else
``https://$SPACE_HOST`` (Hugging Face Spaces), else the local address. Settings come
from the game folder's ``.env``, then the environment.

Ctrl-C / SIGTERM: every turn in flight gets its final reply ("游戏要暂停一下了…",
session ``ended``) while the connections are still open, then every session closes
(each game's ``close()`` runs) and the program exits 0.

Errors an operator must see go to stderr, one line each and without secrets: the
model's failures (``model_error``), a game's own errors (``hook_error``, ``game_error``),
tools that blocked (the warnings of every command are one line: ``commands._logging``). A port that is taken or a host that does not resolve is one line
and exit code 1.

``--test-mode`` (or ``AGENTCADE_TEST_MODE=1``), for test runners only: the card declares
the test extension and the server answers its method with what the game keeps unrevealed
(``agentcade.core.under_test``), so ``agentcade e2e --game URL`` can say ``{answer}``.
Never serve a family's game so: anyone who reaches it can ask the answer.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import trio

from agentcade.commands._logging import one_line
from agentcade.commands._ports import port_number
from agentcade.commands._signals import stop_on_signals
from agentcade.core.settings import SettingsError
from agentcade.core.trace import Trace
from agentcade.core.under_test import is_test_mode
from agentcade.game.host import CLOSE_GRACE
from agentcade.game.loader import GameLoadError
from agentcade.llm import offline_notice
from agentcade.wiring.games import open_local_game
from agentcade.wiring.serve import public_url, serve_game

MAX_SESSIONS_LIMIT = 10_000


def session_count(text: str) -> int:
    """An argparse type: live sessions at most, 1..10000."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= count <= MAX_SESSIONS_LIMIT:
        raise argparse.ArgumentTypeError(f"must be 1..{MAX_SESSIONS_LIMIT}, not {count}")
    return count


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade serve``."""
    p.add_argument("game", help="game folder or built-in game id")
    add_serve_options(p)
    p.add_argument("--test-mode", action="store_true",
                   help="for test runners only: answer what the game keeps unrevealed "
                        "(also AGENTCADE_TEST_MODE=1); never for a family's game")


def add_serve_options(p: argparse.ArgumentParser) -> None:
    """The serving options, shared with a game binary (``agentcade build-game``)."""
    p.add_argument("--port", type=port_number, default=7860,
                   help="TCP port, 0..65535 (default: %(default)s; 0 = any free port)")
    p.add_argument("--host", default="0.0.0.0", help="bind address (default: %(default)s)")
    p.add_argument("--public-url", help="the address users enter (default: PUBLIC_URL or SPACE_HOST)")
    p.add_argument("--max-sessions", type=session_count, default=32,
                   help=f"live sessions at most, 1..{MAX_SESSIONS_LIMIT} (default: %(default)s)")


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
    trace = Trace(log_errors)
    test_mode = bool(getattr(args, "test_mode", False)) or is_test_mode(os.environ)
    if test_mode:
        print("agentcade serve: 测试模式：任何能连上的人都能问到答案，只给测试用。", file=sys.stderr, flush=True)
    async with open_local_game(args.game, max_sessions=args.max_sessions, trace=trace) as local:
        if local.settings.llm.offline:
            print(offline_notice(), file=sys.stderr)
        serving = trio.CancelScope()
        async with stop_on_signals(serving), trio.open_nursery() as nursery:
            port, card_url = await nursery.start(
                lambda task_status: serve_game(
                    local, port=args.port, host=args.host, url=url, test_mode=test_mode,
                    task_status=task_status,
                )
            )
            print(
                f"{local.game.skill.name}（{local.game.id}）在 http://{args.host}:{port}/ 上服务；"
                f"名片地址 {card_url}",
                flush=True,
            )
            with serving:
                await trio.sleep_forever()
            # A signal: the final replies go out while the server still runs.
            print(f"正在退出：结束 {local.host.session_count} 局。", flush=True)
            await local.host.shut_down(CLOSE_GRACE)
            nursery.cancel_scope.cancel()


_LOGGED = {"model_error", "hook_error", "game_error", "settings_error"}


def log_errors(rec: dict[str, Any]) -> None:
    """A trace sink: the records an operator must see, one line each on stderr.

    The trace has already masked secrets; the model's key never reaches a record.
    """
    if rec["type"] not in _LOGGED:
        return
    what = rec.get("error") or rec.get("reason") or ""
    where = rec.get("game") or rec.get("context_id") or ""
    print(f"agentcade serve: {rec['type']} {where}: {one_line(str(what))}".rstrip(), file=sys.stderr, flush=True)
