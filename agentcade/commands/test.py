"""``agentcade test <game dir|url> [--scenarios F] [--repeat N] [--junit P]``: scenario tests.

Plays every scenario of ``<game dir>/scenarios.yaml`` (``agentcade.check.scenarios``)
``--repeat`` times against the model the game's settings name — the offline model when no
``LLM_*`` is set, any OpenAI-compatible model otherwise (``LLM_BASE_URL``, ``LLM_MODEL``,
``LLM_API_KEY``) — and prints a pass rate per scenario, then the made-up verdicts, internal
words spoken and leaked answers over all runs. Exit code 0 when every run of every
scenario passed, 1 otherwise (and for a game or scenario file that cannot be loaded).

A remote game (an address, in any language) plays ``--scenarios FILE`` over A2A as the
robot's host would: what needs the game's own trace (``judged``) is refused when the file is
read, and ``{answer}`` too unless the game tells what it keeps unrevealed (served with
``agentcade serve --test-mode``: its card declares the test extension, so its answers fill
``{answer}`` and its leaked answers are checked); the game's randomness is its own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import trio

from agentcade.a2a.client import A2AClient
from agentcade.check.scenarios import (
    RemoteGame,
    Run,
    Scenario,
    load_remote_scenarios,
    load_scenario_file,
    load_scenarios,
    open_remote_game,
    play_remote_scenario,
    play_scenario,
    refuse_answer_steps,
)
from agentcade.core.errors import InputError
from agentcade.game.client import is_url
from agentcade.game.loader import LoadedGame, load_game
from agentcade.llm import offline_notice

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade test``."""
    p.add_argument(
        "game",
        help="the game folder (with scenarios.yaml beside SKILL.md), or the http(s) address of "
        "a remote game (with --scenarios)",
    )
    p.add_argument(
        "--scenarios", metavar="FILE", type=Path,
        help="the scenarios file (default: scenarios.yaml in the game folder; needed for an address)",
    )
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="runs of each scenario (default: 1)")
    p.add_argument("--junit", metavar="PATH", help="write the results as JUnit XML to PATH")


def run(args: argparse.Namespace) -> int:
    """Run the scenarios; 0 when every run passed, 1 otherwise."""
    if args.repeat < 1:
        print("agentcade test: --repeat must be 1 or more", file=sys.stderr)
        return 1
    if is_url(args.game):
        return _run_remote(args)
    try:
        game = load_game(Path(args.game))
        scenarios = (
            load_scenario_file(args.scenarios) if args.scenarios else load_scenarios(game.path)
        )
    except InputError as exc:
        print(f"agentcade test: {exc}", file=sys.stderr)
        return 1
    if game.load_settings().llm.offline:
        print(offline_notice(), file=sys.stderr)
    results = trio.run(_play_all, game, scenarios, args.repeat)
    failed = _print(game.skill.name, game.id, results, args.repeat)
    if args.junit:
        Path(args.junit).write_text(_junit(game.id, results), encoding="utf-8")
    return 1 if failed else 0


def _run_remote(args: argparse.Namespace) -> int:
    """The scenarios of ``--scenarios`` against the game at the address ``args.game``."""
    if args.scenarios is None:
        print(
            "agentcade test: a remote game needs its scenarios: add --scenarios FILE "
            "(the same YAML as a game folder's scenarios.yaml)",
            file=sys.stderr,
        )
        return 1
    try:
        # The file (and 'judged') is checked before connecting; {answer} once the card says
        # whether the game tells its unrevealed answer.
        scenarios = load_remote_scenarios(args.scenarios, reports_unrevealed=True)
        game, results = trio.run(_play_all_remote, args.game, args.scenarios, scenarios, args.repeat)
    except InputError as exc:
        print(f"agentcade test: {exc}", file=sys.stderr)
        return 1
    failed = _print(game.name, game.game_id, results, args.repeat)
    if args.junit:
        Path(args.junit).write_text(_junit(game.game_id, results), encoding="utf-8")
    return 1 if failed else 0


async def _play_all_remote(
    url: str, path: Path, scenarios: list[Scenario], repeat: int
) -> tuple[RemoteGame, list[tuple[Scenario, list[Run]]]]:
    game = await open_remote_game(url, A2AClient())
    if not game.reports_unrevealed:  # not served in test mode: {answer} has nothing to stand for
        refuse_answer_steps(path, scenarios)
    results = []
    for scenario in scenarios:
        runs = [await play_remote_scenario(game, scenario, n) for n in range(repeat)]
        results.append((scenario, runs))
    return game, results


async def _play_all(
    game: LoadedGame, scenarios: list[Scenario], repeat: int
) -> list[tuple[Scenario, list[Run]]]:
    results = []
    for scenario in scenarios:
        runs = [await play_scenario(game, scenario, n) for n in range(repeat)]
        results.append((scenario, runs))
    return results


def _print(name: str, game_id: str, results: list[tuple[Scenario, list[Run]]], repeat: int) -> bool:
    print(f"{name}（{game_id}）：{len(results)} 个场景，每个跑 {repeat} 次")
    failed = False
    for scenario, runs in results:
        passed = sum(r.passed for r in runs)
        mark = "✓" if passed == len(runs) else "✗"
        failed |= passed != len(runs)
        print(f"{mark} {scenario.name}: {passed}/{len(runs)} 通过（{100 * passed / len(runs):.0f}%）")
        for n, r in enumerate(runs, 1):
            for failure in r.failures[:3]:
                print(f"    第{n}次 {failure}")
    runs = [r for _, rs in results for r in rs]
    total = sum(r.passed for r in runs)
    print(
        f"合计：{total}/{len(runs)} 通过（{100 * total / len(runs):.0f}%）；"
        f"编造的判定 {sum(r.made_up_verdicts for r in runs)}，"
        f"说出的内部词 {sum(r.internal_words for r in runs)}，"
        f"泄露的答案 {sum(r.leaked_answers for r in runs)}"
    )
    return failed


def _junit(game_id: str, results: list[tuple[Scenario, list[Run]]]) -> str:
    cases = []
    failures = 0
    for scenario, runs in results:
        bad = [(n, r) for n, r in enumerate(runs, 1) if not r.passed]
        name = quoteattr(scenario.name)
        if bad:
            failures += 1
            text = "\n".join(f"run {n}: {f}" for n, r in bad for f in r.failures)
            message = quoteattr(f"{len(bad)}/{len(runs)} runs failed")
            cases.append(
                f'  <testcase classname="{game_id}" name={name}>'
                f"<failure message={message}>{escape(text)}</failure></testcase>"
            )
        else:
            cases.append(f'  <testcase classname="{game_id}" name={name}/>')
    head = (
        f'<testsuite name={quoteattr("agentcade test " + game_id)} '
        f'tests="{len(results)}" failures="{failures}">'
    )
    return '<?xml version="1.0" encoding="utf-8"?>\n' + "\n".join([head, *cases, "</testsuite>"]) + "\n"
