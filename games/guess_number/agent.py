"""猜数字：想一个 1 到 20 的数，五次机会；提示缩小范围但不直接说出答案。"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from agentcade import effects
from agentcade.judge import asks_restart, help_request, parse_number
from agentcade.skill import Skill
from agentcade.skill_agent import SkillAgent, Turn
from agentcade.tools import tool

from .config import Settings

LOW, HIGH, TRIES = 1, 20, 5
_DIGITS = "零一二三四五六七八九"


def spoken(n: int) -> str:
    """Chinese numerals for 0..99, as people say them: 十、十五、二十."""
    if n < 10:
        return _DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _DIGITS[tens]) + "十" + (_DIGITS[ones] if ones else "")


_NOT_A_GUESS = ("次", "局", "机会", "提示", "分", "第", "几")
"""A number next to these is about the game ("五次机会用完了吗", "第二局"), not a guess."""


def guessed_number(text: str) -> int | None:
    """The number the player guessed in ``text``, or None when the line is not a guess."""
    number = parse_number(text)
    if number is None or any(word in text for word in _NOT_A_GUESS):
        return None
    return number


def times(n: int) -> str:
    """A count before a measure word: 两局, not 二局."""
    return "两" if n == 2 else spoken(n)


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.rounds = self.wins = 0
        self._opened_in: Turn | None = None  # the turn that opened the round in play
        self._new_round()

    def _new_round(self) -> None:
        self.target = random.randint(LOW, HIGH)  # 答案：只在这里，不进 state()
        self.low, self.high = LOW, HIGH  # 用户已经知道的范围
        self.guesses: list[int] = []
        self.possible = set(range(LOW, HIGH + 1))  # 用户按听到的一切还不能排除的数
        self.finished = False
        self.rounds += 1

    def unrevealed(self) -> list[str]:
        # 数字本身常出现在别的话里（“一到二十”），所以只认说出答案的说法。
        if self.finished:
            return []
        answer = spoken(self.target)
        return [f"数是{answer}", f"就是{answer}", f"答案是{answer}"]

    def state(self) -> dict[str, Any]:
        return {
            "已知范围": f"{self.low}到{self.high}",
            "猜过的数": self.guesses,
            "剩余机会": TRIES - len(self.guesses),
            "这一局结束了": self.finished,
            "第几局": self.rounds,
            "猜中的局数": self.wins,
        }

    def _opening(self) -> dict[str, Any]:
        return {
            "outcome": "new_round",
            "message": f"我想好了一个{spoken(LOW)}到{spoken(HIGH)}之间的数，你有{times(TRIES)}次机会，猜猜看吧。",
        }

    def _open(self, turn: Turn) -> dict[str, Any]:
        self._opened_in = turn
        opening = self._opening()
        turn.must_say(opening["message"])  # 规则（范围、机会）一定要说给用户听
        self._say_next(turn)
        return opening

    async def on_start(self, turn: Turn) -> dict[str, Any]:
        opening = self._open(turn)
        turn.reply(opening["message"])  # 开场白就是完整的回复，不用等大模型
        return opening

    async def on_round(self, turn: Turn, request: str) -> dict[str, Any]:
        # 再来一局、再来一个（问过“要不要再来一局”后的“要”也算）：新的一局由代码开，
        # 不问大模型（它会说“好，重新想一个数”却不开新局）。再说一遍：从状态里说规则和范围。
        if request == "repeat":
            if self.finished:
                turn.offer("again")
                turn.reply("这一局已经结束了，要不要再来一局？")
                return {"outcome": "round_over"}
            left = TRIES - len(self.guesses)
            turn.reply(f"我想的数在{spoken(self.low)}到{spoken(self.high)}之间，你还有{times(left)}次机会。")
            return {"outcome": "repeated", "range": [self.low, self.high], "tries_left": left}
        old = None if self.finished else spoken(self.target)
        result = self._restart(turn)
        turn.reply((f"刚才我想的是{old}。" if old else "好，再来一局！") + result["message"])
        return result

    async def on_end(self, turn: Turn) -> dict[str, Any]:
        result: dict[str, Any] = {"rounds": self.rounds, "wins": self.wins,
                  "message": f"你一共玩了{times(self.rounds)}局，猜中了{times(self.wins)}局。"}
        reveal = ""
        if not self.finished:
            answer = spoken(self.target)
            turn.must_say(answer, fallback=f"我想的数是{answer}。")
            reveal = f"我想的数是{answer}。"
            result["answer"] = self.target
            self.finished = True
        turn.reply(reveal + result["message"])  # 揭晓和总结由代码照原样说，不用再问大模型
        return result

    async def on_message(self, turn: Turn) -> dict[str, Any] | None:
        # 代码能判的代码判：说了一个数就是猜数，“不知道”“猜不出来”是要提示；判完的话就是
        # 完整的回复（turn.reply），不用再问大模型。别的话（再来一局、聊天）交给大模型。
        help = help_request(turn.text)
        if help is not None:
            if help == "give_up" and not self.finished:
                result = self._reveal(turn)
            else:
                result = self.get_hint()
            turn.reply(result.get("hint") or result["message"])
            return result
        number = guessed_number(turn.text)
        if number is None:
            return None
        turn.judged = True
        result = await self._guess(turn, number)
        turn.reply(result["message"])
        return result

    def where_we_are(self) -> str:
        if self.finished:
            return "这一局已经结束了，说再来一局就重新开始。"
        left = TRIES - len(self.guesses)
        return f"现在数在{spoken(self.low)}到{spoken(self.high)}之间，你还有{times(left)}次机会，猜吧。"

    def answer_status(self, turn: Turn) -> str:
        # “我猜对了吗”：从状态里答，不当作猜数，也不摇头。
        if self.finished:
            turn.offer("again")
            answer = spoken(self.target)
            if self.guesses and self.guesses[-1] == self.target:
                return f"对呀，你猜中了，就是{answer}！要不要再来一局？"
            return f"这一局已经结束了，我想的数是{answer}。要不要再来一局？"
        if not self.guesses:
            return f"你还没猜呢，说一个{spoken(LOW)}到{spoken(HIGH)}之间的数吧。"
        return "还没有猜中哦。" + self.where_we_are()

    @tool("用户猜了一个数时调用；用户说的中文数字也要换成阿拉伯数字填进来。")
    async def submit_guess(
        self, turn: Turn, number: Annotated[int, Field(description="用户猜的数")]
    ) -> dict[str, Any]:
        if turn.judged:  # one utterance, one guess: the model may not guess on the user's behalf
            return {"outcome": "already_judged"}
        if guessed_number(turn.text) != number:  # only a number the player guessed counts
            return {"outcome": "not_said", "message": "你猜的是几？说一个数吧。"}
        turn.judged = True
        return await self._guess(turn, number)

    def _reveal(self, turn: Turn) -> dict[str, Any]:
        """The player gives up this round: say the number, offer a new round."""
        self.finished = True
        answer = spoken(self.target)
        turn.must_say(answer, fallback=f"我想的数是{answer}。")
        turn.offer("again")  # 下一句“要”“好”就是再来一局
        return {"outcome": "given_up", "answer": self.target,
                "message": f"好吧，我想的数是{answer}。要不要再来一局？"}

    async def _guess(self, turn: Turn, number: int) -> dict[str, Any]:
        if self.finished:
            turn.offer("again")
            return {"outcome": "round_over", "message": "这一局已经结束了，要不要再来一局？"}
        if not LOW <= number <= HIGH:
            return {"outcome": "out_of_range", "message": f"要猜{spoken(LOW)}到{spoken(HIGH)}之间的数哦。"}
        if number in self.guesses:
            return {"outcome": "repeated", "message": f"{spoken(number)}已经猜过啦，换一个吧。"}
        message = self._verdict(number)
        self.guesses.append(number)
        left = TRIES - len(self.guesses)
        if number == self.target:
            self.finished, self.wins = True, self.wins + 1
            turn.must_say(spoken(number), fallback=f"猜中了！就是{spoken(number)}。")
            await effects.react(self.robot, "happy", "nod")
            return {"outcome": "win", "answer": number, "tries": len(self.guesses),
                    "message": message}
        if number < self.target:
            self.low = max(self.low, number + 1)
        else:
            self.high = min(self.high, number - 1)
        # 用户听到了“大/小”和“一些/不少”：和答案说法一样的数才还可能是答案。
        self._narrow(lambda n: (n > number, n < number, abs(n - number) <= 3))
        if left == 0:
            self.finished = True
            answer = spoken(self.target)
            turn.must_say(answer, fallback=f"我想的数是{answer}。")
            await effects.react(self.robot, "sorry", "shake_head")
            return {"outcome": "lose", "answer": self.target, "message": message}
        await effects.gesture(self.robot, "shake_head")
        self._say_next(turn)
        return {"outcome": "higher" if self.target > number else "lower", "tries_left": left,
                "message": message}

    def _verdict(self, number: int) -> str:
        """What a new guess of ``number`` (in range, not guessed yet) is told."""
        tries = len(self.guesses) + 1
        if number == self.target:
            return f"猜中了！就是{spoken(number)}，你用了{times(tries)}次。"
        if tries == TRIES:
            return f"五次机会用完了，我想的数是{spoken(self.target)}。"
        direction = "大" if self.target > number else "小"
        amount = "一些" if abs(self.target - number) <= 3 else "不少"
        return f"比{spoken(number)}还{direction}{amount}，你还有{times(TRIES - tries)}次机会。"

    def _say_next(self, turn: Turn) -> None:
        """The verdict of every number still in range the player has not guessed: the robot's
        voice prepares them while the player thinks, so the verdict comes at once."""
        middle = (self.low + self.high) / 2  # 先猜中间的人多：中间的先合成
        numbers = sorted(range(self.low, self.high + 1), key=lambda n: abs(n - middle))
        turn.may_say_next([self._verdict(n) for n in numbers if n not in self.guesses])

    @tool("用户要提示时调用。提示只缩小范围，不会说出答案。")
    def get_hint(self) -> dict[str, Any]:
        if self.finished:
            return {"outcome": "round_over", "message": "这一局已经结束了。"}
        for key, say in self._hints():
            sizes = Counter(key(n) for n in self.possible)
            # 选哪条提示只看用户已经知道的（还可能的数），不看答案：不管答案是哪个，
            # 听完都至少还剩两个数；提示里说到的数也从来不是答案本身。
            if len(sizes) > 1 and min(sizes.values()) >= 2:
                self._narrow(key)
                return {"hint": say(key(self.target))}
        return {"hint": "你已经很接近了，想想我前面说的，再猜猜看。"}

    def _hints(self) -> Iterator[tuple[Callable[[int], Hashable], Callable[[Any], str]]]:
        """Questions a hint can answer, best first: (key, what to say for the target's key)."""
        yield (lambda n: n % 2), lambda odd: f"它是一个{'单' if odd else '双'}数。"
        ordered = sorted(self.possible)
        for i in sorted(range(len(ordered) - 1), key=lambda i: abs(2 * i + 2 - len(ordered))):
            x = ordered[i]  # 把还可能的数从 x 后面分成两半

            def above(n: int, x: int = x) -> bool:
                return n > x

            def say(bigger: bool, x: int = x) -> str:
                return f"它比{spoken(x)}大。" if bigger else f"它比{spoken(x + 1)}小。"

            yield above, say

    def _narrow(self, key: Callable[[int], Hashable]) -> None:
        self.possible = {n for n in self.possible if key(n) == key(self.target)}

    @tool("用户要再来一局时调用，重新想一个数。")
    def start_game(self, turn: Turn) -> dict[str, Any]:
        # 开始是幂等的（issue 54）：这一局还没猜完，用户自己也没说“重新”“换一个”，大模型调用
        # 开始就什么也不做，不揭晓、不换数（弱模型在“好呀”上调用它，把数说了出来）；
        # 同一轮里再调一次也一样（不能把刚想好的数又揭晓掉）。
        if self._opened_in is turn or not (self.finished or asks_restart(turn.text)):
            left = TRIES - len(self.guesses)
            return {"outcome": "already_started",
                    "message": f"这一局还在猜呢，我想的数在{spoken(self.low)}到{spoken(self.high)}之间，"
                               f"你还有{times(left)}次机会。"}
        return self._restart(turn)

    def _restart(self, turn: Turn) -> dict[str, Any]:
        """A new round, by code's round words or a start the player asked for."""
        if not self.finished:  # a new round mid-game: say the old number first
            answer = spoken(self.target)
            turn.must_say(answer, fallback=f"刚才我想的是{answer}。")  # 不是“数是…”：新的一局可能又是它
        self._new_round()
        return self._open(turn)

    @tool("用户不想玩了或者要答案时调用：公布答案并结束这一局游戏。")
    def end_game(self, turn: Turn) -> dict[str, Any]:
        answer = spoken(self.target)
        if not self.finished:
            turn.must_say(answer, fallback=f"我想的数是{answer}。")
        self.finished = True
        turn.end_session()
        return {"answer": self.target, "rounds": self.rounds, "wins": self.wins,
                "message": f"我想的数是{answer}。你一共玩了{times(self.rounds)}局，猜中了{times(self.wins)}局。"}
