"""Benchmark: 海龟汤's rulings on the labelled set, played through the game with a model.

Not a test. Run (with an OpenAI-compatible model in the LLM_* settings, e.g. the weak local
one)::

    nice -n 19 .venv/bin/python tests/bench/bench_referee.py [--puzzles a,b] [--chat]

Every line of tests/data/turtle_soup_rulings.tsv is said, in a fresh session of the game on
its puzzle, and the spoken ruling (是 / 不是 / 不重要 / 很接近 / 猜中 / 不对) is compared with
the labels. Printed: code alone (what code decides without the model: full stories solved,
chat never ruled, a model's 是 to a false lead turned into 不重要), then with the model:
right rulings per puzzle and per kind of line (goal >= 90 %, every full story accepted),
seconds per line, and every wrong ruling. Chat lines go to the host model (slow on a small
model): only with ``--chat``. One request at a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.core.protocol import GameInput, GameReply  # noqa: E402
from agentcade.core.settings import LLMSettings  # noqa: E402
from agentcade.game.host import GameHost  # noqa: E402
from agentcade.game.loader import load_game  # noqa: E402
from agentcade.judge import small_talk  # noqa: E402
from tests.turtle_rulings import Ruling, load  # noqa: E402

GAME_DIR = ROOT / "games" / "turtle_soup"
SPOKEN = (  # the game's own ruling sentences, first match wins
    ("猜中啦", "solved"),
    ("很接近了", "close"),
    ("不对哦", "no"),
    ("不是。", "no"),
    ("这个不重要", "irrelevant"),
    ("是。", "yes"),
    ("换个说法", "unclear"),
)


def ruling_of(said: str) -> str:
    for words, ruling in SPOKEN:
        if said.startswith(words) or said == words:
            return ruling
    return "chat"


def code_alone(cases: list[Ruling]) -> None:
    game = load_game(GAME_DIR, builtin=True)
    referee = sys.modules[game.agent_cls.__module__.rsplit(".", 1)[0] + ".referee"]
    puzzles = {p.id: p for p in sys.modules[game.agent_cls.__module__].PUZZLES}
    solved = [c for c in cases if "solved" in c.right]
    in_code = sum(referee.states_the_truth(puzzles[c.puzzle], c.line) for c in solved)
    false_solved = sum(
        referee.states_the_truth(puzzles[c.puzzle], c.line)
        for c in cases if "solved" not in c.right and c.kind != "chat"
    )  # fmt: skip
    chat = [c for c in cases if c.kind == "chat"]
    leads = [c for c in cases if c.kind == "question" and "yes" not in c.right]
    yes = [c for c in cases if c.kind == "question" and "yes" in c.right]
    blocked = sum(not referee.supports_yes(puzzles[c.puzzle], c.line) for c in leads)
    kept = sum(referee.supports_yes(puzzles[c.puzzle], c.line) for c in yes)
    print("code alone:")
    print(f"  full stories solved in code, no model: {in_code}/{len(solved)}"
          f" (other lines solved in code: {false_solved})")  # fmt: skip
    print(
        f"  chat lines never ruled (small talk): {sum(small_talk(c.line) for c in chat)}/{len(chat)}"
    )
    print(f"  a model's 是 to a false lead turned into 不重要: {blocked}/{len(leads)}")
    print(f"  a model's 是 to a true question kept: {kept}/{len(yes)}")


async def play(game: Any, llm: LLMSettings, case: Ruling) -> tuple[str, float]:
    """Say ``case.line`` to a fresh session on its puzzle; (the ruling heard, seconds)."""
    agents: list[Any] = []

    def new() -> Any:
        agent = game.new_agent(game.agent_cls.config(llm=llm))
        agents.append(agent)
        return agent

    host = GameHost(new)
    said: list[str] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        said.append(reply.text)

    await host.handle("bench", GameInput(kind="start", text="玩海龟汤"), emit)
    module = sys.modules[game.agent_cls.__module__]
    agents[-1].puzzle = next(p for p in module.PUZZLES if p.id == case.puzzle)
    said.clear()
    start = time.perf_counter()
    await host.handle("bench", GameInput(kind="message", text=case.line), emit)
    seconds = time.perf_counter() - start
    heard = list(said)
    await host.handle("bench", GameInput(kind="end"), emit)
    await host.aclose()
    text = next((s for s in reversed(heard) if s.strip()), "")  # the final reply (after 让我想一想)
    return ruling_of(text), seconds


async def with_model(cases: list[Ruling], chat: bool) -> None:
    llm = LLMSettings.from_values(dict(os.environ))
    if llm.offline:
        print("with the model: no LLM_* settings, skipped")
        return
    game = load_game(GAME_DIR, builtin=True)
    right: dict[str, list[bool]] = defaultdict(list)
    by_kind: dict[str, list[bool]] = defaultdict(list)
    seconds: dict[str, list[float]] = defaultdict(list)
    wrong: list[str] = []
    for case in cases:
        if case.kind == "chat" and not chat:
            continue
        heard, took = await play(game, llm, case)
        ok = heard in case.right
        print(f"  {'ok ' if ok else 'BAD'} {case.puzzle}: {case.line} -> {heard} ({took:.1f} s)", flush=True)
        kind = "full story" if "solved" in case.right else case.kind
        right[case.puzzle].append(ok)
        by_kind[kind].append(ok)
        seconds[kind].append(took)
        if not ok:
            wrong.append(
                f"  {case.puzzle}: {case.line!r} -> {heard} (right: {','.join(sorted(case.right))})"
            )
    total = [ok for oks in right.values() for ok in oks]
    print(
        f"with the model ({llm.model}): {sum(total)}/{len(total)} right ({sum(total) / len(total):.0%}; goal >= 90%)"
    )
    for puzzle, oks in right.items():
        print(f"  {puzzle:20s} {sum(oks)}/{len(oks)}")
    for kind, oks in by_kind.items():
        secs = seconds[kind]
        print(f"  {kind:12s} {sum(oks)}/{len(oks)} right, median {statistics.median(secs):.1f} s,"
              f" max {max(secs):.1f} s per line")  # fmt: skip
    print("wrong rulings:" if wrong else "wrong rulings: none")
    print("\n".join(wrong))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--puzzles", default="", help="comma-separated puzzle ids (default: all)")
    parser.add_argument("--chat", action="store_true", help="also play the chat lines (host model)")
    parser.add_argument("--lines", default="", help="comma-separated lines to play (default: all)")
    args = parser.parse_args()
    cases = load()
    if args.puzzles:
        wanted = set(args.puzzles.split(","))
        cases = [c for c in cases if c.puzzle in wanted]
    if args.lines:
        wanted_lines = set(args.lines.split(","))
        cases = [c for c in cases if c.line in wanted_lines]
    code_alone(load())
    with tempfile.TemporaryDirectory() as home:
        os.environ["AGENTCADE_HOME"] = home  # the played-puzzle record of these sessions
        trio.run(with_model, cases, args.chat)


if __name__ == "__main__":
    main()
