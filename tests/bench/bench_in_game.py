"""Benchmark: what a family says inside the four built-in games, played with a model.

Not a test. Run (with the LLM_* settings of a model, e.g. the weak local one)::

    nice -n 19 .venv/bin/python tests/bench/bench_in_game.py [game ...]

Each game is started and a short family script is said: a rules question, "我猜对了吗",
small talk, and each game's own lines (a made-up "下一个" in 猜数字, "快画呀" in 你画我猜, the
whole story in 海龟汤, on its ice-cream puzzle). Printed per line: what was heard, the calls
to the host model the line took (海龟汤's referee is a call of its own, not counted: its
lines show it in their seconds), and the seconds until the last reply. Lines that code
answers take no model call; the figures show which lines still wait for the model.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.core.protocol import GameInput, GameReply  # noqa: E402
from agentcade.core.settings import LLMSettings  # noqa: E402
from agentcade.game.host import GameHost  # noqa: E402
from agentcade.game.loader import load_game  # noqa: E402

SCRIPTS: dict[str, list[str]] = {
    "guess_number": ["这个游戏怎么玩来着", "十", "我猜对了吗", "你吃过饭了没", "这个好难，下一个", "十"],
    "riddle": ["这个怎么玩呀，规则是啥", "我猜对了吗", "你吃过饭了没", "是桌子吗"],
    "draw_guess": ["这个游戏怎么算分来着", "哇你画得真好看", "快画呀", "我猜对了吗", "是小猫吗"],
    "turtle_soup": [
        "这个游戏怎么玩来着", "冰箱里面好冷哦，你怕冷吗", "是不是有人偷东西", "他的牙齿怕冰吗",
        "我猜对了吗", "答案是他牙齿怕冰，故意等冰淇淋化了当奶昔用吸管喝", "他是不是很开心",
    ],
}  # fmt: skip


async def play(game_id: str, llm: LLMSettings) -> None:
    game = load_game(ROOT / "games" / game_id, builtin=True)
    if game_id == "draw_guess":
        game.agent_cls.draw_interval = 0.0  # type: ignore[attr-defined]
    agents: list[Any] = []

    def new() -> Any:
        agent = game.new_agent(game.agent_cls.config(llm=llm))
        agents.append(agent)
        return agent

    host = GameHost(new)
    said: list[str] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        said.append(reply.text)

    print(f"== {game.agent_cls.skill.name}")
    await host.handle("bench", GameInput(kind="start", text="开始"), emit)
    print(f"  (start) {''.join(said)}")
    if game_id == "turtle_soup":
        module = sys.modules[game.agent_cls.__module__]
        agents[-1].puzzle = next(p for p in module.PUZZLES if p.id == "melted_ice_cream")
        print(f"  (the ice-cream puzzle) {agents[-1].puzzle.surface}")
    for line in SCRIPTS[game_id]:
        said.clear()
        start = time.perf_counter()
        await host.handle("bench", GameInput(kind="message", text=line), emit)
        took = time.perf_counter() - start
        calls = agents[-1]._calls_this_turn
        print(f"  {line} -> {''.join(said)}  [{calls} host-model call(s), {took:.1f} s]")
    said.clear()
    await host.handle("bench", GameInput(kind="end"), emit)
    print(f"  (end) {''.join(said)}")
    await host.aclose()


def main() -> None:
    llm = LLMSettings.from_values(dict(os.environ))
    games = sys.argv[1:] or list(SCRIPTS)
    with tempfile.TemporaryDirectory() as home:
        os.environ["AGENTCADE_HOME"] = home
        for game_id in games:
            trio.run(play, game_id, llm)


if __name__ == "__main__":
    main()
