"""你画我猜：小懒在屏幕上逐笔画一个动物，用户来猜。

一局 ``QUESTIONS`` 题，同一局游戏里不重复。越早猜对得分越高：没猜错也没要提示就猜对得
三分，猜错过一次或者要过一条提示得两分，再往后得一分。答案只在实例属性里，从不进
``state()``；判定用 ``is_match`` 读用户原话。

Theory of operation:

* ``_draw_next`` is the only place a question starts: it says a line first (drawing takes
  a few seconds), shows a progress bar while it picks the animal and builds the stroke
  steps, then draws stroke by stroke (each stroke is sent at once). The animal becomes
  ``self.current`` only when drawing begins, so an ``end`` that cancels the preparation
  never reveals a picture nobody saw.
* Every reveal that code must guarantee is either said with ``turn.say`` (skip: the
  answer, then the next drawing) or registered with ``turn.must_say`` (``on_end`` and
  ``end_game``).
* Results carry a short ``message`` in spoken Chinese, so the offline model (which reads
  ``message``/``hint`` aloud) plays sensibly too.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any, ClassVar

import trio

from agentcade import effects
from agentcade.judge import (
    asks_restart,
    help_request,
    is_match,
    looks_like_guess,
    normalize,
    small_talk,
)
from agentcade.skill import Skill
from agentcade.skill_agent import SkillAgent, Turn
from agentcade.tools import tool
from agentcade.vector import VectorError, encode_vector

from .config import Settings
from .drawings import ANIMALS, Animal

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
QUESTIONS = 5
"""Questions in one round."""
POINTS = (3, 2, 1)
"""Points for a right guess after 0, 1, 2+ misses (wrong guesses plus hints)."""
PROGRESS_SECONDS = 2

_DIGITS = "零一二三四五六七八九"

# Non-guesses that reach submit_answer (a model that routes every utterance there, like the
# offline one, or a real model's slip). Checked only after the answer did not match.
_SKIP_WORDS = ("跳过", "放弃", "不猜了", "猜不出", "猜不到", "告诉我答案", "公布答案")
_SKIP_EXACT = ("不知道", "我不知道", "不会", "我不会")
_HINT_WORDS = ("提示", "线索")
_QUIT_WORDS = ("不玩了", "结束游戏", "退出游戏")
_PROGRESS_WORDS = ("几分", "多少分", "得分", "第几题", "几题")
_LOOK_WORDS = ("没看清", "看不清", "再看", "再给我看")
_DRAW_WORDS = ("快画", "画呀", "画啊", "你画吧", "开始画", "快点画", "赶紧画", "画了吗", "画好了吗")
"""The player waits for a drawing: code shows the one on the screen or draws the next; the
weak model answered "快画呀" with "我画了一个小动物。" on a blank screen."""
_YES_EXACT = ("好", "好的", "好呀", "好啊", "要", "要的", "来吧", "继续", "可以", "行", "来")
"""After a right answer we ask "要不要来下一题？": these answers mean the next question."""


def spoken(n: int) -> str:
    """Chinese numerals for 0..99 as people say them: 三、十、十五、二十."""
    if n < 10:
        return _DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else _DIGITS[tens]) + "十" + (_DIGITS[ones] if ones else "")


def _count(n: int) -> str:
    """``n`` before a measure word: 两题, not 二题."""
    return "两" if n == 2 else spoken(n)


def shuffled_animals() -> list[Animal]:
    """The session's deck: every animal once, in random order (tests replace this)."""
    return random.sample(ANIMALS, len(ANIMALS))


def _safe_hints(animal: Animal) -> list[str]:
    """The animal's hints, minus any that would give away a character of the answer."""
    return [
        h
        for h in animal.hints
        if not any(ch in h for ch in animal.answer) and not any(a in h for a in animal.aliases)
    ]


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(HERE / "SKILL.md")
    config = Settings

    draw_interval: ClassVar[float] = 0.5
    """Seconds between strokes."""
    prepare_pause: ClassVar[float] = 0.5
    """How long the progress bar shows before the first stroke (tests set 0)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.deck: list[Animal] = shuffled_animals()
        self.current: Animal | None = None  # 答案：只在这里，不进 state()
        self.drawing: str | None = None  # the current picture, encoded for the screen
        self.solved = True  # the current question is answered or revealed
        self.won = False  # the current (or last) question was guessed right
        self.number = 0  # question number in this round
        self.score = self.right = self.skipped = 0
        self.tries = 0  # wrong guesses on this question
        self.hints = 0  # hints given on this question
        self._drawn_for: Turn | None = None  # the turn that drew the current picture

    # -- what the model sees ---------------------------------------------------------

    def unrevealed(self) -> list[str]:
        return [self.current.answer] if self.current is not None and not self.solved else []

    def state(self) -> dict[str, Any]:
        # 只放用户已经知道的：第几题、得分、猜错几次、用了几条提示。答案绝对不放。
        return {
            "第几题": self.number,
            "一共几题": QUESTIONS,
            "得分": self.score,
            "猜对几题": self.right,
            "跳过几题": self.skipped,
            "这题猜错次数": self.tries,
            "这题用了几条提示": self.hints,
            "这题已经揭晓": self.solved,
        }

    # -- hooks -----------------------------------------------------------------------

    async def on_start(self, turn: Turn) -> dict[str, Any]:
        result = await self._draw_next(turn, "好呀，我来画一个动物，你猜猜是什么。")
        rules = (
            f"一共{_count(QUESTIONS)}题。一次就猜对得{_count(POINTS[0])}分，"
            f"猜错过或者要过提示再猜对得{_count(POINTS[1])}分，再往后得{_count(POINTS[2])}分。"
        )
        message = f"画好啦，就在屏幕上。{rules}你猜这是什么动物？"
        turn.reply(message)  # 开场由代码说完，不等大模型：弱模型让第一题等过半分钟，这期间猜的都听成“还在准备”
        return {**result, "rules": rules, "message": message}

    async def on_message(self, turn: Turn) -> dict[str, Any] | None:
        # 代码能判的代码判：说中画的动物就是猜对了；说的是别的动物就是猜错了；要提示、
        # 跳过、看分数这些也不用大模型。判完的话就是完整的回复（turn.reply）。
        # 别的话（聊天、说不清的猜测）交给大模型，它拿到“这不是答案”的判定来措辞。
        animal = self.current
        if animal is None:
            return None
        open_ = not self.solved
        if open_ and is_match(turn.text, animal.answer, animal.aliases):
            turn.judged = True
            result = await self._right(turn, animal)
        elif (routed := await self._not_a_guess(turn)) is not None:
            result = routed
        elif open_ and (self._names_another_animal(turn.text) or looks_like_guess(turn.text)):
            # "小鸟" is no animal of the library but a guess all the same: judged here and heard
            # as judged (the weak model answered it with only "你猜小鸟吗？").
            turn.judged = True
            result = await self._wrong()
        else:
            if open_ and not small_talk(turn.text):  # 闲聊（你叫什么名字）不是答案，也不算判定
                turn.judged = True
                return {"outcome": "not_the_answer", "correct": False}
            return None
        turn.reply(result.get("message") or result.get("hint") or "")
        return result

    def where_we_are(self) -> str:
        if self.current is not None and not self.solved:
            return f"现在是第{spoken(self.number)}题，画在屏幕上了，你猜是什么动物？"
        return "说下一题我就接着画。"

    def answer_status(self, turn: Turn) -> str:
        # “我猜对了吗”：从状态里答，不当作猜错，也不摇头。
        if self.current is None:
            return "我还没开始画呢。"
        if not self.solved:
            return "还没有猜中哦，再看看屏幕上的画，也可以要个提示。"
        if self.number < QUESTIONS:
            turn.offer("next")
            more = "要不要来下一题？"
        else:
            more = ""
        if self.won:
            return f"对呀，你猜对了，就是{self.current.answer}！{more}"
        return f"这题已经揭晓啦，画的是{self.current.answer}。{more}"

    def _names_another_animal(self, text: str) -> bool:
        return any(
            is_match(text, other.answer, other.aliases)
            for other in ANIMALS
            if other is not self.current
        )

    async def on_round(self, turn: Turn, request: str) -> dict[str, Any]:
        # 下一题、再来一局、再说一遍（问过“要不要来下一题”后的“要”也算）：代码画、代码数
        # 第几题，不问大模型（它说过“画好了，这是第三题”，屏幕上却还是上一幅画）。
        if request == "again":
            result = await self._restart(turn)
        elif request == "next":
            result = await self._next(turn)
        else:  # 再说一遍：把这题的画重新放到屏幕上，题号从状态里来
            result = await self._show()
            if self.current is not None and not self.solved:
                result["message"] = f"这是第{spoken(self.number)}题，画在屏幕上了，你猜是什么动物？"
        turn.reply(result.get("message") or "")
        return result

    async def on_end(self, turn: Turn) -> dict[str, Any]:
        result = self._end(turn)
        turn.reply(result["message"])  # 揭晓和总结由代码照原样说，不用再问大模型
        return result

    # -- tools -----------------------------------------------------------------------

    @tool("用户要从头开始、重新来一局时调用：分数清零，重新画第一题。")
    async def start_game(self, turn: Turn) -> dict[str, Any]:
        # 开始是幂等的（issue 54）：这一轮刚画好一幅，或者这幅还没猜出来而用户自己没说“重新”，
        # 再开一次什么也不做，不揭晓也不换画（弱模型连开两次，把第一幅的答案说了出来）
        if self._drawn_for is turn or not (self.solved or asks_restart(turn.text)):
            return {"outcome": "already_started", "message": "画已经在屏幕上了，你猜是什么动物？"}
        return await self._restart(turn)

    async def _restart(self, turn: Turn) -> dict[str, Any]:
        reveal = self._reveal_line()
        self.number = self.score = self.right = self.skipped = 0
        return await self._draw_next(turn, f"{reveal}好，我们重新开始，我来画一个，你猜猜是什么。")

    @tool("用户猜屏幕上画的是什么动物时调用，判断对不对（直接读取用户原话，不用传参数）。", judges=True)
    async def submit_answer(self, turn: Turn) -> dict[str, Any]:
        animal = self.current
        if (
            animal is not None
            and not self.solved
            and is_match(turn.text, animal.answer, animal.aliases)
        ):
            return await self._right(turn, animal)
        routed = await self._not_a_guess(turn)
        if routed is not None:
            return routed
        if animal is None or self.solved:
            return {"outcome": "no_question", "message": "这题已经揭晓了，说下一题我就接着画。"}
        return await self._wrong()

    async def _wrong(self) -> dict[str, Any]:
        self.tries += 1
        await effects.react(self.robot, "sorry", "shake_head", then=self.drawing)
        if self.tries >= 3:
            message = "还不对哦。要不要听个提示，或者说跳过？"
        else:
            message = "不对哦，再看看，也可以要个提示。"
        return {"correct": False, "tries": self.tries, "message": message}

    async def _not_a_guess(self, turn: Turn) -> dict[str, Any] | None:
        """Requests that reached submit_answer instead of their own tool; None for a guess."""
        text = normalize(turn.text)
        if not text:
            return {"outcome": "not_a_guess", "message": "我没听清，你猜是什么动物？"}
        if any(w in text for w in _QUIT_WORDS):
            return self._end(turn)
        help = help_request(turn.text)
        if any(w in text for w in _HINT_WORDS):
            return self._hint()
        if help == "hint" and self.current is not None and not self.solved:
            hint = self._hint()  # "不知道"、"我不会": a hint first, the answer once they run out
            return hint if hint.get("hint") else await self._skip(turn)
        if any(w in text for w in _SKIP_WORDS) or text in _SKIP_EXACT or help == "give_up":
            return await self._skip(turn)
        if any(w in text for w in _PROGRESS_WORDS):
            return self._progress()
        if any(w in text for w in _LOOK_WORDS):
            return await self._show()
        if any(w in text for w in _DRAW_WORDS) and self.current is not None and not small_talk(text):
            if self.solved:  # 快画呀, after a right answer: the next drawing, for real
                return await self._next(turn)
            shown = await self._show()
            return {**shown, "message": f"第{spoken(self.number)}题已经画在屏幕上了，你猜是什么动物？"}
        if self.solved and self.current is not None and text in _YES_EXACT:
            return await self._next(turn)
        return None

    @tool("用户要提示时调用，返回一条提示（越往后越具体）。")
    def get_hint(self) -> dict[str, Any]:
        return self._hint()

    @tool("用户猜不出来、要跳过、放弃或者问答案时调用：说出这题的答案，再画下一题。")
    async def skip_question(self, turn: Turn) -> dict[str, Any]:
        return await self._skip(turn)

    @tool("这一题猜对以后，用户要下一题、再来一个时调用，画下一题。")
    async def next_question(self, turn: Turn) -> dict[str, Any]:
        return await self._next(turn)

    @tool("用户说没看清、要再看看那幅画时调用，把这题的画重新放到屏幕上。")
    async def show_drawing(self) -> dict[str, Any]:
        return await self._show()

    @tool("用户问第几题了、答了几题、得了几分时调用。")
    def show_progress(self) -> dict[str, Any]:
        return self._progress()

    @tool("用户说不玩了、要结束这一局时调用：说出没猜出来的答案和成绩，结束游戏。")
    def end_game(self, turn: Turn) -> dict[str, Any]:
        return self._end(turn)

    # -- the game --------------------------------------------------------------------

    def _end(self, turn: Turn) -> dict[str, Any]:
        """The game stops early: reveal an unsolved answer, sum up, end the session."""
        result: dict[str, Any] = {**self._totals(), "outcome": "round_over"}
        reveal = ""
        if self.current is not None and not self.solved:
            answer = self.current.answer
            turn.must_say(answer, fallback=f"刚才画的是{answer}。")
            reveal = f"刚才画的是{answer}。"
            result["answer"] = answer
            self.solved = True
        summary = self._summary(finished=False)
        turn.must_say(summary)
        turn.end_session()
        return {**result, "message": reveal + summary}

    async def _draw_next(self, turn: Turn, line: str) -> dict[str, Any]:
        """Say ``line``, prepare under a progress bar, then draw the next animal."""
        await turn.say(line)
        async with effects.Progress(self.robot, PROGRESS_SECONDS):
            animal, steps = self._prepare()
            if self.prepare_pause > 0:
                await trio.sleep(self.prepare_pause)
        self.current, self.drawing = animal, encode_vector(list(animal.strokes))
        self._drawn_for = turn
        self.solved = self.won = False
        self.tries = self.hints = 0
        self.number += 1
        await effects.draw(self.robot, steps, interval=self.draw_interval)
        return {
            "outcome": "new_drawing",
            "number": self.number,
            "total": QUESTIONS,
            "message": f"画好了，这是第{spoken(self.number)}题，你猜是什么动物？",
        }

    def _prepare(self) -> tuple[Animal, list[Any]]:
        """The next animal from the deck with its stroke steps; skips a broken drawing."""
        for _ in range(len(ANIMALS)):
            if not self.deck:  # every animal was drawn: start over, never twice in a row
                self.deck = [a for a in shuffled_animals() if a is not self.current]
            animal = self.deck.pop(0)
            try:
                return animal, effects.stroke_steps(animal.strokes)
            except VectorError:
                log.warning("draw_guess: the drawing of %s breaks the screen limits", animal.answer)
        raise RuntimeError("no drawable animal")

    async def _right(self, turn: Turn, animal: Animal) -> dict[str, Any]:
        points = POINTS[min(self.tries + self.hints, len(POINTS) - 1)]
        self.score += points
        self.right += 1
        self.solved = self.won = True
        turn.must_say(animal.answer, fallback=f"猜对了，就是{animal.answer}！")  # heard whatever happens
        await effects.react(self.robot, "happy", "nod", then=self.drawing)
        message = (
            f"猜对了，就是{animal.answer}！得{_count(points)}分，现在一共{_count(self.score)}分。"
        )
        result = {"correct": True, "answer": animal.answer, "points": points, "score": self.score}
        if self.number >= QUESTIONS:
            over = self._round_over(turn)
            return {**result, **over, "message": message + over["message"]}
        turn.offer("next")  # 下一句“要”“好”就是下一题
        return {**result, "message": message + "要不要来下一题？"}

    async def _next(self, turn: Turn) -> dict[str, Any]:
        if self.current is not None and not self.solved:
            return await self._skip(turn)
        if self.number >= QUESTIONS:
            return self._round_over(turn)
        return await self._draw_next(
            turn, f"好，第{spoken(self.number + 1)}题，我来画，你猜猜是什么。"
        )

    async def _skip(self, turn: Turn) -> dict[str, Any]:
        """Reveal the current answer (said at once), then draw the next one or finish."""
        if self.current is None:
            return {"outcome": "no_question", "message": "现在还没有题呢。"}
        answer = None
        if not self.solved:
            answer = self.current.answer
            self.skipped += 1
            self.solved = True
        if self.number >= QUESTIONS:
            if answer is not None:
                await turn.say(f"刚才画的是{answer}。")
            over = self._round_over(turn)
            return {**over, "answer": answer} if answer else over
        reveal = f"刚才画的是{answer}。" if answer else ""
        result = await self._draw_next(turn, f"{reveal}我再画一个，你猜猜是什么。")
        return {**result, "answer": answer} if answer else result

    async def _show(self) -> dict[str, Any]:
        if self.drawing is None:
            return {"outcome": "no_drawing", "message": "现在屏幕上还没有画呢。"}
        await effects.show(self.robot, self.drawing)
        return {"outcome": "shown", "message": "画在屏幕上了，你再仔细看看。"}

    def _progress(self) -> dict[str, Any]:
        return {
            **self._totals(),
            "message": f"现在是第{spoken(self.number)}题，一共{_count(QUESTIONS)}题。{self._score_line()}",
        }

    def _hint(self) -> dict[str, Any]:
        if self.current is None or self.solved:
            return {"outcome": "no_question", "message": "这题已经揭晓了，说下一题我就接着画。"}
        hints = _safe_hints(self.current)
        if self.hints >= len(hints):
            return {"outcome": "no_more_hints", "message": "提示都给完啦，再猜猜，或者说跳过。"}
        hint = hints[self.hints]
        self.hints += 1
        return {"hint": hint, "hints_left": len(hints) - self.hints}

    def _round_over(self, turn: Turn) -> dict[str, Any]:
        turn.end_session()
        return {**self._totals(), "outcome": "round_over", "message": self._summary(finished=True)}

    def _reveal_line(self) -> str:
        if self.current is None or self.solved:
            return ""
        self.solved = True
        return f"刚才画的是{self.current.answer}。"

    def _totals(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "total": QUESTIONS,
            "score": self.score,
            "right": self.right,
            "skipped": self.skipped,
        }

    def _score_line(self) -> str:
        if self.right == 0:
            return f"你还没猜对呢，现在是{_count(self.score)}分。"
        return f"你猜对了{_count(self.right)}题，一共得了{_count(self.score)}分。"

    def _summary(self, finished: bool) -> str:
        parts = [f"{_count(QUESTIONS)}题都画完啦！" if finished else "这一局就到这里。"]
        if self.right:
            parts.append(f"你猜对了{_count(self.right)}题，")
        if self.skipped:
            parts.append(f"跳过了{_count(self.skipped)}题，")
        if self.right:
            parts.append(f"一共得了{_count(self.score)}分。")
        else:
            parts.append("这次还没猜对，没关系，下次加油。")
        return "".join(parts)
