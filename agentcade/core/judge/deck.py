"""A question with one answer (a riddle, a drawing to name, a word): ``judge_guess`` and ``Deck``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from agentcade.core.judge.intents import help_request, small_talk
from agentcade.core.judge.matching import is_match
from agentcade.core.judge.text import normalize

Verdict = Literal["right", "wrong", "hint", "give_up"]
"""What a line says to a question with one answer (``judge_guess``)."""

_GUESS_FRAMES = ("我猜", "是不是", "应该是", "答案是", "谜底是", "会不会是", "难道是", "我觉得是")
_NOT_A_GUESS = (
    "提示", "下一", "再来", "换一", "谜面", "再说", "再念", "没听清", "什么", "为什么", "怎么",
    "谁", "谢谢", "你好", "好的", "可以", "不玩", "结束",
)  # fmt: skip
_NOT_A_GUESS_EXACT = ("好", "嗯", "对", "是", "行", "要", "不要", "不", "哦", "啊", "好啊", "好呀")


def looks_like_guess(text: str) -> bool:
    """Whether a line is shaped like a guess: "是水吗", "我猜是桌子", "苹果" (a short noun).

    Not: questions (什么, 为什么), requests (提示, 下一个, 再念一遍), courtesies and bare
    yes/no words. A weak model never called the judging tool for such lines and made up
    verdicts, so a game judges them in code (issue 13).
    """
    heard = normalize(text)
    if not heard or heard in _NOT_A_GUESS_EXACT or any(w in heard for w in _NOT_A_GUESS):
        return False
    if small_talk(text):
        return False
    if any(frame in heard for frame in _GUESS_FRAMES):
        return True
    if heard.startswith("是") and heard.endswith(("吗", "吧", "呀")):
        return True
    return len(heard) <= 3


def judge_guess(text: str, answer: str, aliases: Sequence[str] = ()) -> Verdict | None:
    """What a line says to a question whose answer is ``answer``, decided in code.

    ``"right"``: it states the answer (``is_match``, tolerant of ASR errors);
    ``"hint"`` / ``"give_up"``: it asks for help (``help_request``; never a wrong guess);
    ``"wrong"``: it is shaped like a guess (``looks_like_guess``) but is not the answer;
    ``None``: anything else (chat, "下一个", a question about the game) — for the model.
    """
    if is_match(text, answer, aliases):
        return "right"
    help_asked = help_request(text)
    if help_asked is not None:
        return help_asked
    return "wrong" if looks_like_guess(text) else None


class Deck:
    """Questions asked one at a time, each with one answer the player guesses.

    What a riddle (or drawing, or word) game must not forget: the question in play, whether
    its answer was revealed, how many were asked and solved. ``unrevealed()`` is what the
    game's ``SkillAgent.unrevealed`` returns, so the answer never leaks before its time.

    Items are dicts with ``"answer"`` and optionally ``"aliases"`` (anything else is the
    game's: question, hint, …). They are drawn in the order given: shuffle them when making
    the deck (``Deck(random.sample(items, len(items)))``), so a test can fix the order.
    """

    def __init__(self, items: Sequence[dict[str, Any]]) -> None:
        self._left = list(items)
        self.current: dict[str, Any] | None = None
        """The question in play (None before the first ``draw`` and when none is left)."""
        self.revealed = False
        self.won = False
        """Whether the player solved the question in play (or the last one, once revealed)."""
        self.asked = 0
        self.solved = 0

    def draw(self) -> dict[str, Any] | None:
        """The next question (its answer unrevealed), or None when the deck is used up."""
        self.current = self._left.pop(0) if self._left else None
        self.revealed = self.won = False
        self.asked += self.current is not None
        return self.current

    def open_field(self, key: str) -> Any:
        """Field ``key`` of the question in play ("question", "hint" …) while its answer is
        unrevealed; None when no question is open."""
        if self.current is None or self.revealed:
            return None
        return self.current.get(key)

    def unrevealed(self) -> list[str]:
        """The answer still to be guessed, if any (``[]`` or one answer)."""
        if self.current is None or self.revealed:
            return []
        return [self.current["answer"]]

    def judge(self, text: str) -> Verdict | None:
        """``judge_guess`` against the question in play; None when nothing is to be guessed."""
        if not self.unrevealed() or self.current is None:
            return None
        return judge_guess(text, self.current["answer"], self.current.get("aliases") or ())

    def reveal(self) -> str | None:
        """Mark the answer as said; returns it, or None when it was no secret any more."""
        answer = self.unrevealed()
        self.revealed = True
        return answer[0] if answer else None

    def solve(self) -> str:
        """The player guessed the open question: counted as solved, revealed; returns its answer.

        Raises:
            ValueError: no question is open (nothing to solve).
        """
        answer = self.reveal()
        if answer is None:
            raise ValueError("Deck.solve: no question is open")
        self.solved += 1
        self.won = True
        return answer
