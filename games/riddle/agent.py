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
NO_RIDDLE = {"outcome": "no_riddle", "message": "现在没有要猜的谜语。"}


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        # 打乱顺序，一次出一个。放在 self.deck 里，运行时就知道还没揭晓的谜底，“再说一遍”也由它重念谜面
        self.deck = Deck(random.sample(RIDDLES, len(RIDDLES)))

    def state(self) -> dict[str, Any]:
        # 只放用户已经知道的：谜面可以（揭晓以后是 None），谜底不行
        return {"谜面": self.deck.open_field("question"), "已出题": self.deck.asked, "猜对": self.deck.solved}

    async def on_start(self, turn: Turn) -> dict[str, Any]:
        result = self.next_riddle(turn)
        turn.reply(f"好呀，我们来猜谜语！听好了：{result['question']}你猜是什么？")
        return result

    async def on_round(self, turn: Turn, request: str) -> dict[str, Any]:
        # 代码认出的“下一个”“再来一局”：由代码出题、念谜面，不问大模型（它会编题）
        result = self.next_riddle(turn)
        if result["outcome"] == "new_riddle":
            turn.reply(f"第{self.deck.asked}个谜语。听好了：{result['question']}你猜是什么？")
        return result

    async def on_message(self, turn: Turn) -> dict[str, Any] | None:
        # 说中、猜错、要提示、放弃：代码判好、说完，不问大模型。别的话（聊天、提问）交给大模型。
        if self.deck.judge(turn.text) is None:
            return None
        result = await self.check_answer(turn)
        turn.reply(result["message"])
        turn.offer("next" if self.deck.revealed else None)  # 问过“要不要再来一个？”：“要”就是下一个
        return result

    async def on_end(self, turn: Turn) -> dict[str, Any]:
        answer = self.deck.reveal()
        summary = f"今天猜了{self.deck.asked}个谜语，猜对了{self.deck.solved}个。"
        turn.reply(f"谜底是{answer}。{summary}" if answer else summary)
        return {"asked": self.deck.asked, "solved": self.deck.solved, "answer": answer}

    @tool("判断用户这一轮说的答案对不对（直接读取用户原话）。", judges=True)
    async def check_answer(self, turn: Turn) -> dict[str, Any]:
        if not self.unrevealed():
            return {"outcome": "no_riddle", "message": "这个谜语已经揭晓了，要不要再来一个？"}
        verdict = self.deck.judge(turn.text)
        if verdict in ("hint", "give_up"):  # 要提示、放弃：不是猜
            return self.get_hint() if verdict == "hint" else self.reveal(turn)
        turn.judged = True
        if verdict != "right":  # 猜错了（大模型当作在猜的别的话也算猜错）
            await effects.gesture(self.robot, "shake_head")
            return {"correct": False, "message": "不对哦，再想想，也可以要个提示。"}
        answer = self.deck.solve()
        turn.must_say(answer, fallback=f"猜对了，谜底就是{answer}！")
        await effects.react(self.robot, "happy", "nod", then=star())
        return {"correct": True, "answer": answer, "message": f"猜对了，谜底就是{answer}！要不要再来一个？"}

    @tool("用户要提示时调用，返回一条提示。")
    def get_hint(self) -> dict[str, Any]:
        hint = self.deck.open_field("hint")
        return {"hint": hint, "message": f"给你一个提示：{hint}"} if hint else NO_RIDDLE

    @tool("用户放弃、猜不出来或者问答案时，公布谜底。", name="give_up")
    def reveal(self, turn: Turn) -> dict[str, Any]:
        answer = self.deck.reveal()
        if answer is None:
            return NO_RIDDLE
        turn.must_say(answer, fallback=f"谜底是{answer}。")
        return {"answer": answer, "message": f"谜底是{answer}。要不要再来一个？"}

    @tool("用户要再来一个、下一个谜语时调用，出一个新谜语。")
    def next_riddle(self, turn: Turn) -> dict[str, Any]:
        self.reveal(turn)  # 换题前先揭晓上一题（已经揭晓了就什么也不做）
        riddle = self.deck.draw()
        if riddle is None:
            turn.end_session()
            return {"outcome": "no_more", "solved": self.deck.solved}
        turn.must_say(riddle["question"])
        return {"outcome": "new_riddle", "question": riddle["question"], "number": self.deck.asked}
