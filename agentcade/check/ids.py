"""The game id rules ``check`` shares with ``catalog`` (one home: ``agentcade.check.catalog.id_problems``).

A game whose id is a built-in game's (``CATALOG-ID-BUILTIN``) or another catalog game's
(``CATALOG-ID-DUPLICATE``) would replace that game on the robot, and ``catalog`` rejects
its entry; ``check`` fails it too, so it never prints an entry ``catalog`` then refuses.
"""

from __future__ import annotations

from pathlib import Path

from agentcade.check.catalog import Catalog, builtin_ids, id_problems, load_catalog
from agentcade.check.rules import CheckResult

__all__ = ["ID_RULES", "check_id"]

ID_RULES = ("CATALOG-ID-BUILTIN", "CATALOG-ID-DUPLICATE")


def _catalog() -> Catalog | None:
    """The catalog shipped with the built-in games (what the settings page offers)."""
    from agentcade.game.loader import builtin_games_dir

    catalog, _problems = load_catalog(builtin_games_dir() / "catalog.json")
    return catalog  # a missing or broken file is catalog's to report, not the game's


def check_id(
    result: CheckResult,
    game_id: str,
    *,
    url: str | None = None,
    author: str | None = None,
    folder: Path | None = None,
) -> None:
    """``CATALOG-ID-*`` for ``game_id``; ``folder`` is the checked game folder, which may be
    the built-in game itself (``agentcade check games/riddle``)."""
    from agentcade.game.loader import builtin_games_dir

    builtins = builtin_ids()
    if folder is not None and folder.resolve() == (builtin_games_dir() / game_id).resolve():
        builtins.discard(game_id)
    for p in id_problems(game_id, where=game_id, builtins=builtins, catalog=_catalog(),
                         url=url, author=author):
        result.problem(p.rule, p.message, p.fix)
    for rule in ID_RULES:
        result.ok(rule)
