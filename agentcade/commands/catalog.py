"""``agentcade catalog <file> [--online]``: check the game catalog (``games/catalog.json``).

Validates the schema, unique ids, no clash with built-in games, https URLs and the
declaration rules (the same rule IDs as SKILL.md). ``--online`` also reads every game's
agent card and reports entries that differ from it. Exit code 1 on any error.
The logic lives in ``agentcade.check.catalog``; the schema is documented in ``docs/catalog.md``.
"""

from __future__ import annotations

import argparse

import trio

from agentcade.check.catalog import check_catalog, check_online, load_catalog


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade catalog``."""
    p.add_argument("file", help="the catalog file, e.g. games/catalog.json")
    p.add_argument("--online", action="store_true", help="also fetch each game's card and compare")


def run(args: argparse.Namespace) -> int:
    """Check the file; 0 when nothing fails, 1 otherwise."""
    catalog, problems = load_catalog(args.file)
    if catalog is not None:
        problems += check_catalog(catalog)
        if args.online:
            problems += trio.run(check_online, catalog)
    for problem in problems:
        print(problem.format())
    fails = sum(p.level == "fail" for p in problems)
    warns = len(problems) - fails
    games = len(catalog.games) if catalog is not None else 0
    verdict = "FAILED" if fails else "PASSED"
    print(f"{verdict}: {args.file}: {games} games, {fails} errors, {warns} warnings")
    return 1 if fails else 0
