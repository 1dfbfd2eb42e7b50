"""How much CPU one long line costs the main agent's router (issue 12 item 17).

Prints the time ``route`` takes for lines of growing length, outside and during a game,
with the built-in games registered. The router compares pinyin in windows of the line
(``is_match`` per window, the slow step), so the cost grows with the length; the main agent
cuts a line to ``MAX_INPUT`` characters and routes a long one in a worker thread.

    .venv/bin/python tests/bench/bench_input.py
"""

from __future__ import annotations

import time

import trio

from agentcade.core.speech import MAX_INPUT
from agentcade.main.router import route
from agentcade.wiring.registry import open_registry

LENGTHS = (50, 100, MAX_INPUT, 1000)


async def main() -> None:
    async with open_registry(remote=[]) as registry:
        games = registry.games
        print(f"{'chars':>6} {'outside ms':>11} {'in game ms':>11} {'ms/char':>8}")
        for n in LENGTHS:
            text = ("我猜是一个苹果吧，" * (n // 9 + 1))[:n]
            t0 = time.perf_counter()
            route(text, games, None)
            t1 = time.perf_counter()
            route(text, games, games[0].id)
            t2 = time.perf_counter()
            print(f"{n:>6} {1000 * (t1 - t0):>11.0f} {1000 * (t2 - t1):>11.0f} "
                  f"{1000 * (t1 - t0) / n:>8.2f}")
        print(f"lines are cut to MAX_INPUT = {MAX_INPUT} characters before routing")


if __name__ == "__main__":
    trio.run(main)
