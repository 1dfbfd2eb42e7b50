"""A game whose tools misbehave the way a careless author's might (tests only, issue 12)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from agentcade.core.skill import Skill
from agentcade.core.tools import tool
from agentcade.game.skill_agent import SkillAgent

from .config import Settings


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.counter = 0

    def state(self) -> dict:
        return {"counter": self.counter}

    @tool("数一个数。")
    def count(self) -> dict:
        self.counter += 1
        return {"counter": self.counter}

    @tool("退出。")
    def leave(self) -> dict:
        sys.exit(3)

    @tool("被打断。")
    async def interrupt(self) -> dict:
        raise KeyboardInterrupt

    @tool("睡一觉（阻塞 20 秒）。")
    def nap(self) -> dict:
        time.sleep(20)
        return {"slept": True}
