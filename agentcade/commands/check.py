"""``agentcade check <dir|url>``: the compliance check (the guide's "合规检查").

Prints one line per rule (✓ pass, ✗ fail, ! warning, - not exercised) with a fix for each
problem, then a summary; exit code 1 when anything fails. ``--report`` writes JSON,
``--junit`` JUnit XML for CI. When everything passes, prints the game's catalog entry.
The logic lives in ``agentcade.check``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import trio

from agentcade.check import (
    DEFAULT_SAY,
    DEFAULT_TIMEOUT,
    CheckResult,
    catalog_entry,
    format_text,
    run_check,
    to_junit,
)
from agentcade.check.report import checked_an_address
from agentcade.llm import offline_notice


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade check``."""
    p.add_argument("game", help="game folder, built-in game id, or http(s) URL of a remote game")
    p.add_argument("--say", default=DEFAULT_SAY, help="what to say after the start (default: %(default)s)")
    p.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help="longest wait in seconds for each request's final reply (default: %(default)s)",
    )
    p.add_argument("--report", metavar="PATH", help="write the findings as JSON to PATH")
    p.add_argument("--junit", metavar="PATH", help="write the findings as JUnit XML to PATH")


def run(args: argparse.Namespace) -> int:
    """Run the check; 0 when nothing fails, 1 otherwise."""
    result = trio.run(lambda: run_check(args.game, say=args.say, timeout=args.timeout))
    return report(result, args)


def report(result: CheckResult, args: argparse.Namespace) -> int:
    """Print the result, write the report files, return the exit code."""
    if result.offline:
        print(offline_notice(), file=sys.stderr)
    for line in format_text(result):
        print(line)
    if args.report:
        Path(args.report).write_text(
            json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    if args.junit:
        Path(args.junit).write_text(to_junit(result), encoding="utf-8")
    if result.passed:
        entry = catalog_entry(result)
        if entry is not None:
            where = "" if checked_an_address(result) else "；url 换成用户填写的地址"
            print(f"\n游戏目录条目（加进 games/catalog.json 并提 PR{where}）：")
            print(json.dumps(entry, ensure_ascii=False, indent=2))
    return 0 if result.passed else 1

