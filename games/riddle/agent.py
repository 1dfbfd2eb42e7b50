"""猜谜语：远程游戏的模板。出题、宽松判定、提示、放弃，猜对时点头并在屏幕上画一颗星星。"""

from __future__ import annotations

import math
import random
from pathlib import Path

import yaml

from agentcade import effects
from agentcade.judge import help_request, is_match, normalize
from agentcade.skill import Skill
from agentcade.skill_agent import SkillAgent
from agentcade.tools import tool
from agentcade.vector import Stroke, encode_vector

from .config import Settings

HERE = Path(__file__).parent
RIDDLES = yaml.safe_load((HERE / "riddles.yaml").read_text(encoding="utf-8"))["riddles"]


def star(cx: int = 206, cy: int = 206, r: int = 150) -> str:
    """五角星：外圈和内圈的点交替连成一笔，首尾相接。"""
    points = []
    for i in range(11):
        radius = r if i % 2 == 0 else r * 0.4
        angle = math.radians(-90 + 36 * i)
        points.append((round(cx + radius * math.cos(angle)), round(cy + radius * math.sin(angle))))
    return encode_vector([Stroke(points, width=10)])


STAR = star()

_GUESS_FRAMES = ("我猜", "是不是", "应该是", "答案是", "谜底是", "会不会是", "难道是", "我觉得是")
_NOT_A_GUESS = (
    "提示", "下一", "再来", "换一", "谜面", "再说", "再念", "没听清", "什么", "为什么", "怎么",
    "谁", "谢谢", "你好", "好的", "可以", "不玩", "结束",
)  # fmt: skip
_NOT_A_GUESS_EXACT = ("好", "嗯", "对", "是", "行", "要", "不要", "不", "哦", "啊", "好啊", "好呀")


def looks_like_guess(text: str) -> bool:
    """Whether a line that is not the answer is a guess: "是水吗", "我猜是桌子", "苹果"."""
    heard = normalize(text)
    if not heard or heard in _NOT_A_GUESS_EXACT or any(w in heard for w in _NOT_A_GUESS):
        return False
    if any(frame in heard for frame in _GUESS_FRAMES):
        return True
    if heard.startswith("是") and heard.endswith(("吗", "吧", "呀")):
        return True
    return len(heard) <= 3


class GameAgent(SkillAgent):
    skill = Skill.load(HERE / "SKILL.md")
    config = Settings

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.order = random.sample(range(len(RIDDLES)), len(RIDDLES))  # 一局里不重复
        self.current: dict | None = None
        self.revealed = False
        self.asked = self.solved = 0
        self.hinted = False  # this riddle's hint was given

    def unrevealed(self) -> list[str]:
        return [self.current["answer"]] if self.current and not self.revealed else []

    def state(self) -> dict:
        # 只放用户已经知道的：谜面可以，谜底不行。
        question = self.current["question"] if self.current else None
        return {"谜面": question, "已出题": self.asked, "猜对": self.solved, "谜底已揭晓": self.revealed}

    def _next(self, turn) -> dict:
        if self.current and not self.revealed:  # 换题前先揭晓上一题
            answer, self.revealed = self.current["answer"], True
            turn.must_say(answer, fallback=f"上一个的谜底是{answer}。")
        if not self.order:
            turn.end_session()
            return {"outcome": "no_more", "solved": self.solved}
        self.current, self.revealed, self.hinted = RIDDLES[self.order.pop()], False, False
        self.asked += 1
        turn.must_say(self.current["question"])
        return {"outcome": "new_riddle", "question": self.current["question"], "number": self.asked}

    async def on_start(self, turn) -> dict:
        result = self._next(turn)
        if result["outcome"] == "new_riddle":  # 开场白和谜面由代码说，不用等大模型
            turn.reply(f"好呀，我们来猜谜语！听好了：{result['question']}你猜是什么？")
        return result

    async def on_end(self, turn) -> dict:
        result = {"asked": self.asked, "solved": self.solved,
                  "message": f"今天猜了{self.asked}个谜语，猜对了{self.solved}个。"}
        if self.current and not self.revealed:
            answer = self.current["answer"]
            turn.must_say(answer, fallback=f"这个谜语的谜底是{answer}。")
            result["answer"] = answer
        return result

    async def on_message(self, turn) -> dict | None:
        # 代码能判的代码判：说中谜底就是猜对了；“不知道”“我不会”先给提示，“猜不出来”公布
        # 谜底。这些都是完整的回复（turn.reply），不用再问大模型。别的话交给大模型。
        if self.current is None or self.revealed:
            return None
        if self._is_right(turn.text):
            turn.judged = True
            result = await self._right(turn)
            turn.reply(result["message"] + "要不要再来一个？")
            return result
        help = help_request(turn.text)
        if help == "hint":
            result = self.get_hint()
            turn.reply(f"给你一个提示：{result['hint']}")
            return result
        if help is not None:
            result = self.reveal(turn)
            turn.reply(result["message"])
            return result
        if looks_like_guess(turn.text):  # a guess that is not the answer: wrong, in code
            turn.judged = True
            result = await self._wrong()
            turn.reply(result["message"])
            return result
        return None  # 聊天、要下一个……：交给大模型

    async def _wrong(self) -> dict:
        await effects.gesture(self.robot, "shake_head")
        return {"correct": False, "message": "不对哦，再想想，也可以要个提示。"}

    def _is_right(self, text: str) -> bool:
        assert self.current is not None
        return is_match(text, self.current["answer"], self.current.get("aliases") or ())

    async def _right(self, turn) -> dict:
        assert self.current is not None
        answer = self.current["answer"]
        self.solved, self.revealed = self.solved + 1, True
        turn.must_say(answer, fallback=f"猜对了，谜底就是{answer}！")  # heard whatever happens
        await effects.react(self.robot, "happy", "nod", then=STAR)
        return {"correct": True, "answer": answer, "message": f"猜对了，谜底就是{answer}！"}

    @tool("判断用户这一轮说的答案对不对（直接读取用户原话）。")
    async def check_answer(self, turn) -> dict:
        if turn.judged:
            return {"outcome": "already_judged"}
        turn.judged = True
        if self.current is None or self.revealed:
            return {"outcome": "no_riddle", "message": "这个谜语已经揭晓了，要不要再来一个？"}
        if help_request(turn.text) is not None:  # 不知道、猜不出来：不是猜错
            return {"outcome": "not_a_guess", "message": "没关系，可以要个提示，或者让我公布谜底。"}
        if self._is_right(turn.text):
            return await self._right(turn)
        return await self._wrong()

    @tool("用户要提示时调用，返回一条提示。")
    def get_hint(self) -> dict:
        if self.current is None or self.revealed:
            return {"outcome": "no_riddle"}
        self.hinted = True
        return {"hint": self.current["hint"]}

    @tool("用户放弃、猜不出来或者问答案时，公布谜底。", name="give_up")
    def reveal(self, turn) -> dict:
        if self.current is None:
            return {"outcome": "no_riddle"}
        self.revealed = True
        answer = self.current["answer"]
        turn.must_say(answer, fallback=f"谜底是{answer}。")
        return {"answer": answer, "message": f"谜底是{answer}。要不要再来一个？"}

    @tool("用户要再来一个、下一个谜语时调用，出一个新谜语。")
    def next_riddle(self, turn) -> dict:
        return self._next(turn)
