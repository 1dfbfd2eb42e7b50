"""猜谜语：远程游戏的模板。出题、宽松判定、提示、放弃，猜对时点头并在屏幕上画一颗星星。"""

import random
from pathlib import Path
from typing import Any

import yaml

from agentcade import effects
from agentcade.judge import Deck
from agentcade.skill import Skill
from agentcade.skill_agent import SkillAgent, Turn
from agentcade.tools import tool
from agentcade.vector import star

from .config import Settings

RIDDLES = yaml.safe_load(Path(__file__).with_name("riddles.yaml").read_text(encoding="utf-8"))["riddles"]


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.riddles = Deck(random.sample(RIDDLES, len(RIDDLES)))  # 一次一个，一局里不重复

    def unrevealed(self) -> list[str]:
        return self.riddles.unrevealed()

    def state(self) -> dict[str, Any]:  # 只放用户已经知道的：谜面可以，谜底不行。
        return {"谜面": (d := self.riddles).current and d.current["question"], "已出题": d.asked, "猜对": d.solved, "谜底已揭晓": d.revealed}

    async def on_start(self, turn: Turn) -> dict[str, Any]:
        return await self.on_round(turn, "next")  # 开场白和谜面由代码说，不用等大模型

    async def on_round(self, turn: Turn, request: str) -> dict[str, Any]:
        # 代码认出的“下一个”“再来一局”“再说一遍”：谜面从状态里来，不问大模型，它会编题。
        current = self.riddles.current if request == "repeat" and self.unrevealed() else None
        result = {"outcome": "repeat", "question": current["question"]} if current else self.next_riddle(turn)
        if "question" in result:
            head = "好呀，我们来猜谜语！" if turn.kind == "start" else "再说一遍，" if current else f"第{self.riddles.asked}个谜语。"
            turn.reply(f"{head}听好了：{result['question']}你猜是什么？")
        return result

    async def on_message(self, turn: Turn) -> dict[str, Any] | None:
        # 代码能判的（说中、猜错、“不知道”要提示、“猜不出来”）都是完整的回复，不再问大模型。
        verdict = self.riddles.judge(turn.text)
        if verdict is None:
            return None  # 聊天、问问题……：交给大模型
        result = await self._answer(turn, verdict)
        turn.reply(result["message"])
        turn.offer("next" if self.riddles.revealed else None)  # 揭晓了就问过“要不要再来一个？”
        return result

    async def on_end(self, turn: Turn) -> dict[str, Any]:  # 没揭晓的谜底和总结由代码照原样说
        answer, d = self.reveal(turn).get("answer"), self.riddles
        turn.reply((f"谜底是{answer}。" if answer else "") + (summary := f"今天猜了{d.asked}个谜语，猜对了{d.solved}个。"))
        return {"asked": d.asked, "solved": d.solved, "answer": answer, "message": summary}

    async def _answer(self, turn: Turn, verdict: str) -> dict[str, Any]:
        if verdict in ("hint", "give_up"):
            return self.get_hint() if verdict == "hint" else self.reveal(turn)
        turn.judged = True
        if verdict == "wrong":
            await effects.gesture(self.robot, "shake_head")
            return {"correct": False, "message": "不对哦，再想想，也可以要个提示。"}
        answer = self.riddles.solve() or ""  # a verdict of "right" comes with a riddle
        turn.must_say(answer, fallback=f"猜对了，谜底就是{answer}！")  # 无论如何都会说出来
        await effects.react(self.robot, "happy", "nod", then=star())
        return {"correct": True, "answer": answer, "message": f"猜对了，谜底就是{answer}！要不要再来一个？"}

    @tool("判断用户这一轮说的答案对不对（直接读取用户原话）。", judges=True)
    async def check_answer(self, turn: Turn) -> dict[str, Any]:
        no_riddle = {"outcome": "no_riddle", "message": "这个谜语已经揭晓了，要不要再来一个？"}
        return await self._answer(turn, self.riddles.judge(turn.text) or "wrong") if self.unrevealed() else no_riddle

    @tool("用户要提示时调用，返回一条提示。")
    def get_hint(self) -> dict[str, Any]:
        if hint := self.unrevealed() and self.riddles.current and self.riddles.current["hint"]:
            return {"hint": hint, "message": f"给你一个提示：{hint}"}
        return {"outcome": "no_riddle", "message": "现在没有要猜的谜语。"}

    @tool("用户放弃、猜不出来或者问答案时，公布谜底。", name="give_up")
    def reveal(self, turn: Turn) -> dict[str, Any]:
        if (answer := self.riddles.reveal()) is None:
            return {"outcome": "no_riddle", "message": "现在没有要猜的谜语。"}
        turn.must_say(answer, fallback=f"谜底是{answer}。")
        return {"answer": answer, "message": f"谜底是{answer}。要不要再来一个？"}

    @tool("用户要再来一个、下一个谜语时调用，出一个新谜语。")
    def next_riddle(self, turn: Turn) -> dict[str, Any]:
        self.reveal(turn)  # 换题前先揭晓上一题（已经揭晓了就什么也不做）
        if (riddle := self.riddles.draw()) is None:
            turn.end_session()
            return {"outcome": "no_more", "solved": self.riddles.solved}
        turn.must_say(riddle["question"])
        return {"outcome": "new_riddle", "question": riddle["question"], "number": self.riddles.asked}
