"""A game whose tools each exercise one runtime rule (tests only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import trio
from pydantic import Field

from agentcade.core.skill import Skill
from agentcade.core.tools import tool
from agentcade.game.skill_agent import SkillAgent

from .config import Settings

SECRET = "紫葡萄"


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings
    closed_count = 0

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.counter = 0
        self.secret = SECRET  # never in state()
        self.calls: list[str] = []

    def state(self) -> dict:
        return {"counter": self.counter}

    async def on_start(self, turn) -> dict:
        turn.must_say("开局口令")
        return {"question": "开局口令"}

    async def on_end(self, turn) -> dict:
        return {"score": self.counter}

    async def close(self) -> None:
        type(self).closed_count += 1
        await super().close()

    @tool("数一个数。")
    def count(self, n: Annotated[int, Field(ge=1, le=5, description="1到5")]) -> dict:
        self.calls.append(f"count:{n}")
        self.counter += n
        return {"n": n, "counter": self.counter}

    @tool("要求原样说口令。")
    def remember(self, turn) -> dict:
        turn.must_say("芝麻开门", fallback="口令是芝麻开门。")
        return {"ok": True}

    @tool("很慢的工具（直接读取用户原话）。")
    async def slow(self, turn) -> dict:
        self.calls.append("slow:start")
        await turn.say("稍等")
        await trio.sleep(1000)
        self.calls.append("slow:end")
        return {"done": True}

    @tool("会出错的工具。")
    def boom(self) -> dict:
        raise RuntimeError("kaput")

    @tool("结束这一局。")
    def finish(self, turn) -> dict:
        turn.end_session()
        return {"finished": True}

    @tool("亮绿灯。")
    async def light(self) -> dict:
        await self.robot.lights.set_color("#00FF00", brightness=0.5)
        return {"lit": True}

    @tool("偷看：判定一次。")
    def peek(self, turn) -> dict:
        if turn.judged:
            return {"outcome": "already_judged"}
        turn.judged = True
        return {"outcome": "judged"}

    @tool("结算：结果就是完整的回复。")
    def settle(self, turn) -> dict:
        turn.reply("结算好了。")
        return {"settled": True}
