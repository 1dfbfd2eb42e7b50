"""海龟汤：小懒讲汤面，用户问是非题猜汤底。

The host model only presents: every judgement comes from ``referee`` — a separate model
call that sees the puzzle and the user's raw words, or the rough offline stand-in when no
model is configured. The 汤底 and key points never enter ``state()`` or a tool result
before they are revealed (solved, given up, or the game ends).

The referee's model is the game's own ``settings.llm`` (same endpoint, key and model) with
temperature 0, so the same question gets the same answer; it is a second ``ChatModel``
owned by the agent and closed in ``close()``. Played puzzles are remembered per user by
``library.PlayedStore`` so a new game starts with one the family has not heard.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

import trio

from agentcade import effects
from agentcade.judge import help_request, small_talk
from agentcade.llm import ChatModel, ModelError, make_model
from agentcade.skill import Skill
from agentcade.skill_agent import SkillAgent, Turn
from agentcade.tools import tool

from .config import Settings
from .library import PlayedStore, Puzzle, load_puzzles, pick
from .referee import (
    VERDICT_SCHEMA,
    Kind,
    Verdict,
    judge_messages,
    offline_verdict,
    parse_verdict,
    says_anything,
    states_the_truth,
    supports_yes,
)

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
PUZZLES = load_puzzles()

ANSWERS = {"yes": "是。", "no": "不是。", "irrelevant": "这个不重要。", "close": "很接近了！"}
OPENING = "我讲一个奇怪的小故事，你用能回答是或不是的问题来猜背后的真相。"
_NEXT_WORDS = ("下一个", "再来一个", "换一个", "下一道", "换一道", "再来一道", "新的")
_REPEAT_WORDS = ("再说一遍", "再讲一遍", "再念一遍", "重复一遍", "再说一次", "再讲一次", "没听清", "汤面是什么")
"""Lines that ask to hear the 汤面 again inside a longer line ("没听清楚，再说一遍汤面",
"汤面是什么"), which ``judge.round_request`` leaves alone; answered by ``on_round`` from the
game's state, never by a model (a weak judge ruled "再说一遍汤面" with "是。")."""
_SOLUTION_WORDS = ("我知道了", "我觉得", "我猜", "真相是", "汤底是", "原来", "答案是", "应该是")


def _is_solution(text: str) -> bool:
    """The player states what happened rather than asking (the judge sees which it is)."""
    asks = text.rstrip("。.！!？? ").endswith(("吗", "吧", "呢")) or "?" in text or "？" in text
    return any(word in text for word in _SOLUTION_WORDS) and not asks


ASK_AGAIN = "我没太听明白，你能换个说法，用是或不是能回答的方式再问一次吗？"
JUDGE_TEMPERATURE = 0.0  # the same question must get the same answer


def spoken(n: int) -> str:
    """Chinese numerals for counts: 0..99 as said (两个, 十二), larger ones as digits."""
    if not 0 <= n < 100:
        return str(n)
    digits = "零一二三四五六七八九"
    if n == 2:
        return "两"
    if n < 10:
        return digits[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else digits[tens]) + "十" + (digits[ones] if ones else "")


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(HERE / "SKILL.md")
    config = Settings

    SOOTHE_AFTER = 3.0
    """Seconds of judging after which the robot says “让我想一想” first."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.store = PlayedStore.default()
        # Drawn from the shared generator: a seed a test pins (scenarios, test mode) pins the puzzles.
        self.rng = random.Random(random.getrandbits(64))
        self.judge_model: ChatModel | None = None
        """The referee's own model (never the host model); made on first use, closed in close()."""
        self.puzzle: Puzzle | None = None
        self.session_ids: list[str] = []
        self.revealed = False
        self.won = False  # this puzzle was solved by the player
        self.last_outcome: str | None = None  # the last ruling on this puzzle (close, answered …)
        self.questions = self.hints_used = 0  # this puzzle
        self.total_questions = self.solved = 0  # this game

    # -- state and hooks ----------------------------------------------------------

    def unrevealed(self) -> list[str]:
        return [self.puzzle.bottom] if self.puzzle is not None and not self.revealed else []

    def state(self) -> dict[str, Any]:
        # Only what the user already knows: the surface, never the bottom or key points.
        return {
            "汤面": self.puzzle.surface if self.puzzle else None,
            "第几道题": len(self.session_ids),
            "这道题问了几个问题": self.questions,
            "这道题用了几次提示": self.hints_used,
            "汤底已揭晓": self.revealed,
            "这一局解开了几道": self.solved,
        }

    async def on_start(self, turn: Turn) -> dict[str, Any]:
        result = self._next(turn)
        if result["outcome"] == "new_puzzle":  # 开场白和汤面由代码说，不用等大模型
            turn.reply(f"好呀，我们来喝海龟汤！{OPENING}汤面是：{result['surface']}")
        return result

    async def on_round(self, turn: Turn, request: str) -> dict[str, Any]:
        # 下一个、再来一局（问过“要不要再来一个”后的“要”也算）：新的汤由代码出；再说一遍：
        # 汤面从状态里来。都不问大模型（它编过汤，也把汤面念过十遍）。
        if request == "repeat" and self.puzzle is not None:
            turn.reply(f"好的，再说一遍汤面：{self.puzzle.surface}")
            return {"outcome": "repeated", "surface": self.puzzle.surface}
        old = self.puzzle.bottom if self.puzzle is not None and not self.revealed else None
        result = self._next(turn)
        if result["outcome"] == "new_puzzle":
            told = f"上一道汤的汤底是：{old}" if old else ""
            turn.reply(f"{told}好，我们换一道新的汤。汤面是：{result['surface']}")
        else:
            turn.reply(result["message"])
        return result

    async def on_message(self, turn: Turn) -> dict[str, Any] | None:
        # 代码能判的代码判：要提示、放弃由代码处理；别的话先交给裁判（单独的一次模型调用），
        # 判出是、不是、不重要、很接近或者猜中，就是完整的回复（turn.reply），不用再问主持的
        # 大模型。裁判听不懂的话（聊天、要换题）才交给主持的大模型。
        if self.puzzle is None:
            return None
        if self.revealed:
            if small_talk(turn.text):
                return None  # 闲聊：交给大模型
            # 汤底揭晓以后不再判：问要不要再来一个（“要”就是下一道），不问裁判也不问大模型。
            turn.offer("next")
            turn.reply("这道汤的汤底已经揭晓啦，要不要再来一个？")
            return {"outcome": "revealed"}
        help = help_request(turn.text)
        if help == "hint":
            result = self.get_hint()
            turn.reply(result.get("hint") or result["message"])
            return result
        if help == "give_up":
            result = self.give_up(turn)
            turn.reply(f"好吧，我来揭晓。汤底是：{self.puzzle.bottom}要不要再来一个？")
            return result
        if any(word in turn.text for word in _REPEAT_WORDS):  # 再说一遍汤面、汤面是什么……
            return await self.on_round(turn, "repeat")
        if any(word in turn.text for word in _NEXT_WORDS):
            return None  # 换题：交给大模型调用 next_puzzle
        if small_talk(turn.text):
            return None  # 跟主持人闲聊：交给大模型，不问裁判，也不算判定
        kind: Kind = "solution" if _is_solution(turn.text) else "question"
        result = await self._judge_turn(turn, kind)
        if result["outcome"] not in ("unclear", "already_judged"):
            turn.reply(result["message"])
        return result

    def where_we_are(self) -> str:
        if self.puzzle is not None and not self.revealed:
            return f"汤面是：{self.puzzle.surface}你问吧。"
        return "想听新的汤，就说再来一个。"

    def answer_status(self, turn: Turn) -> str:
        # “我猜对了吗”：从状态里答，不交给裁判（弱模型对它判过“是。”）。
        if self.puzzle is None:
            return "现在还没有汤呢。"
        if self.revealed:
            turn.offer("next")
            if self.won:
                return "对呀，你猜中了！要不要再来一个？"
            return "这道汤的汤底已经揭晓啦，要不要再来一个？"
        if self.last_outcome == "close":
            return "还没有完全猜中哦，不过刚才已经很接近了。把整个经过连起来说说看？"
        return "还没有猜中哦，接着问问看，也可以要个提示。"

    async def on_end(self, turn: Turn) -> dict[str, Any]:
        result: dict[str, Any] = {
            "questions": self.total_questions,
            "puzzles": len(self.session_ids),
            "solved": self.solved,
            "message": self._summary(),
        }
        reveal = ""
        if self.puzzle is not None and not self.revealed:
            self.revealed = True
            bottom = self.puzzle.bottom
            turn.must_say(bottom, fallback=f"这道汤的汤底是：{bottom}")
            reveal = f"这道汤的汤底是：{bottom}"
            result["bottom"] = bottom
        turn.reply(reveal + result["message"])  # 揭晓和总结照原样说出来，不用再问大模型
        return result

    async def close(self) -> None:
        model, self.judge_model = self.judge_model, None
        try:
            if model is not None:
                await model.aclose()
        finally:
            await super().close()

    # -- tools --------------------------------------------------------------------

    @tool(
        "用户问了一个能用是或不是回答的问题时调用，判定答案是、不是、不重要还是很接近了（直接读取用户原话）。"
    )
    async def ask_question(self, turn: Turn) -> dict[str, Any]:
        return await self._judge_turn(turn, "question")

    @tool("用户说出他猜的完整真相或推理时调用，判定猜没猜中（直接读取用户原话）。")
    async def propose_solution(self, turn: Turn) -> dict[str, Any]:
        return await self._judge_turn(turn, "solution")

    @tool("用户要提示时调用，返回一条新提示；提示不会说出汤底。")
    def get_hint(self) -> dict[str, Any]:
        if self.puzzle is None or self.revealed:
            return {"outcome": "revealed", "message": "这道汤已经揭晓啦，要不要再来一个？"}
        if self.hints_used >= len(self.puzzle.hints):
            return {
                "outcome": "no_more_hints",
                "message": "提示都用完啦。换个方向问问看，或者说放弃，我来公布汤底。",
            }
        hint = self.puzzle.hints[self.hints_used]
        self.hints_used += 1
        return {
            "outcome": "hint",
            "hint": hint,
            "hints_left": len(self.puzzle.hints) - self.hints_used,
        }

    @tool("用户猜不出来、要放弃或者要听答案时调用，公布汤底。")
    def give_up(self, turn: Turn) -> dict[str, Any]:
        if self.puzzle is None:
            return {"outcome": "no_puzzle"}
        bottom = self.puzzle.bottom
        if self.revealed:
            return {"outcome": "already_revealed", "bottom": bottom}
        self.revealed = True
        turn.must_say(bottom, fallback=f"汤底是：{bottom}")
        turn.offer("next")  # 揭晓后问“要不要再来一个？”：下一句“要”就是下一道
        return {"outcome": "revealed", "bottom": bottom}

    @tool("用户说再来一个、换一个、下一个时调用，出一道新的海龟汤。")
    def next_puzzle(self, turn: Turn) -> dict[str, Any]:
        return self._next(turn)

    # -- helpers ------------------------------------------------------------------

    def _next(self, turn: Turn) -> dict[str, Any]:
        if self.puzzle is not None and not self.revealed:  # moving on: the old one is told first
            self.revealed = True
            bottom = self.puzzle.bottom
            turn.must_say(bottom, fallback=f"上一道汤的汤底是：{bottom}")
        puzzle = pick(PUZZLES, self.store, self.session_ids, self.rng)
        if puzzle is None:
            return {"outcome": "no_more", "message": "题库里的海龟汤都喝完啦，下次再来吧。"}
        self.puzzle, self.revealed, self.won, self.last_outcome = puzzle, False, False, None
        self.questions = self.hints_used = 0
        self.session_ids.append(puzzle.id)
        turn.must_say(puzzle.surface, fallback=f"汤面是：{puzzle.surface}")
        return {"outcome": "new_puzzle", "number": len(self.session_ids), "title": puzzle.title,
                "surface": puzzle.surface}  # fmt: skip

    def _summary(self) -> str:
        if not self.session_ids:
            return "下次再来喝海龟汤吧。"
        return (
            f"这一局你一共问了{spoken(self.total_questions)}个问题，"
            f"喝了{spoken(len(self.session_ids))}道汤，"
            + (f"解开了{spoken(self.solved)}道。" if self.solved else "这次没有解开，下次加油。")
        )

    async def _judge_turn(self, turn: Turn, kind: Kind) -> dict[str, Any]:
        if turn.judged:
            return {"outcome": "already_judged", "message": "这句话已经判过了，按刚才的结果说。"}
        if small_talk(turn.text):  # 你叫什么名字、我们聊聊天吧：跟主持人说的，不问裁判，不算判定
            return {"outcome": "small_talk"}
        turn.judged = True
        puzzle = self.puzzle
        if puzzle is None or self.revealed:
            turn.offer("next")
            return {"outcome": "revealed", "message": "这道汤已经揭晓啦，要不要再来一个？"}
        text = turn.text.strip()
        if states_the_truth(puzzle, text):  # the 汤底 in the player's words: solved in code
            verdict: Verdict | None = Verdict("yes", True)
            self.trace.record("referee", decided="code", verdict="solved")
        else:
            verdict = await self._verdict(turn, puzzle, kind, text) if text else None
        if verdict is None or verdict.verdict == "unclear":
            return {"outcome": "unclear", "message": ASK_AGAIN}
        if kind == "question":  # the summary counts questions, not solutions or chat
            self.questions += 1
            self.total_questions += 1
        if verdict.solved:
            self.revealed, self.won, self.solved = True, True, self.solved + 1
            self.last_outcome = "solved"
            turn.must_say(puzzle.bottom, fallback=f"汤底是：{puzzle.bottom}")
            await effects.react(self.robot, "happy", "nod")
            return {"outcome": "solved", "solved": True, "bottom": puzzle.bottom,
                    "message": "猜中啦，太厉害了！"}  # fmt: skip
        if verdict.verdict in ("yes", "close") and not supports_yes(puzzle, text):
            # Nothing in the story backs it (偷东西, 做实验): never 是 or 很接近.
            self.trace.record("referee", decided="code", verdict="unsupported", model=verdict.verdict)
            verdict = Verdict("no" if kind == "solution" else "irrelevant", False)
        if kind == "solution":
            if verdict.verdict in ("close", "yes"):
                self.last_outcome = "close"
                return {
                    "outcome": "close",
                    "solved": False,
                    "message": "很接近了，还差一点，再问问看！",
                }
            self.last_outcome = "wrong"
            await effects.gesture(self.robot, "shake_head")
            return {
                "outcome": "wrong",
                "solved": False,
                "message": "不对哦，再想想，也可以接着提问。",
            }
        self.last_outcome = verdict.verdict
        if verdict.verdict == "yes":
            await effects.gesture(self.robot, "nod")
        elif verdict.verdict == "no":
            await effects.gesture(self.robot, "shake_head")
        return {"outcome": "answered", "verdict": verdict.verdict, "solved": False,
                "message": ANSWERS[verdict.verdict]}  # fmt: skip

    async def _verdict(self, turn: Turn, puzzle: Puzzle, kind: Kind, text: str) -> Verdict | None:
        """The referee's judgement; None when the model failed or answered garbage."""
        if self.settings.llm.offline or not says_anything(text):
            return offline_verdict(puzzle, kind, text)  # no model, or nothing to judge
        if self.judge_model is None:
            llm = self.settings.llm.model_copy(update={"temperature": JUDGE_TEMPERATURE})
            self.judge_model = make_model(llm, response_format=VERDICT_SCHEMA)
        messages = judge_messages(puzzle, kind, text)
        answer: str | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._soothe, turn)
            try:
                reply = await self.judge_model.complete(messages, [])
                answer = reply.text
            except ModelError as exc:
                log.warning("turtle_soup: the judge failed: %s", exc)
            nursery.cancel_scope.cancel()
        if answer is None:
            return None
        verdict = parse_verdict(answer)
        if verdict is None:
            log.warning("turtle_soup: unusable judge answer: %.200r", answer)
        elif verdict.solved and not states_the_truth(puzzle, text):
            # Solved is code's to say (checked before the judge): the weak judge called
            # "眼泪是洋葱熏出来的吗" and "她面前有一个小宝宝吗" the whole truth.
            log.info("turtle_soup: the judge called %.80r a solution; it misses key points", text)
            verdict = Verdict("close" if kind == "solution" else verdict.verdict, False)
        return verdict

    async def _soothe(self, turn: Turn) -> None:
        await trio.sleep(self.SOOTHE_AFTER)
        if not turn.spoken:
            await turn.say("让我想一想。")
