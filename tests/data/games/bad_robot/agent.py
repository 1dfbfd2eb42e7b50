"""A game that breaks the robot rules on purpose (check's tests): exactly
DIRECTIVE-UNDECLARED (lights without the ``light`` capability) and DIRECTIVE-INVALID
(``pan_deg=999``), both from the tool ``cheer``; everything else is compliant."""

from __future__ import annotations

from pathlib import Path

from agentcade.core.skill import Skill
from agentcade.core.tools import tool
from agentcade.game.skill_agent import SkillAgent

from .config import Settings


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings

    async def on_start(self, turn) -> dict:
        await self.robot.motion.play_action("nod")  # declared and valid
        return {"say": "我们开始吧，随便说一句话。"}

    async def on_end(self, turn) -> dict:
        return {"say": "再见。"}

    @tool("用户说了话就调用（直接读取用户原话）：亮灯、转头。")
    async def cheer(self, turn) -> dict:
        await self.robot.lights.set_color("#00FF00")  # undeclared: skipped
        await self.robot.motion.move_to(pan_deg=999, tilt_deg=115, duration_ms=400)  # invalid
        return {"say": "好的。"}
