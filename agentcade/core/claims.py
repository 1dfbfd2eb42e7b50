"""What a game's model may claim: no verdict and no progress the game's own code did not make.

A weak model says "猜对了！" to a wrong guess, "这是第三题" with no new question, "好，重新想
一个数" and calls nothing. Beside the speech guard (:mod:`agentcade.core.guard`: lines never
to be said to a child) and speech cleaning (:mod:`agentcade.core.speech`: what can be said
at all), this is the third policing of the model's words: a sentence that announces a
verdict (:func:`has_verdict`) or claims the game moved on (:func:`claims_progress`) stands
only when this turn's code produced it (:func:`may_judge`, :func:`may_claim`, given what the
hooks and tools returned this turn). ``SkillAgent`` drops the others before they are
spoken; the main agent uses the same words to know a game's line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["VERDICT_WORDS", "claims_progress", "has_verdict", "may_claim", "may_judge"]

VERDICT_WORDS = ("猜对", "答对", "猜中", "说对了", "猜错", "答错", "不对哦", "得分", "加分", "扣分")
_POINTS_RE = re.compile(r"得[了到]?[一二两三四五六七八九十\d]+分")
_PROGRESS_RE = re.compile(
    r"第[一二两三四五六七八九十百\d]+(?:题|道|局|轮|幅)|重新想|画好[了啦]|画完[了啦]|听好了|下一[题道个局幅]是"
    r"|画了一[个只幅张]|我画了|开始画[了啦]|新想了一个|想好了一个"
)
"""Words that claim the game moved on (这是第三题, 重新想一个数, 画好了, 听好了：<a riddle>,
我画了一个小动物 on a blank screen)."""
_RESTART_RE = re.compile(
    r"(?:开始|来|开)(?:新的)?一局|重新开始|换一个数|下一个数|新的一[局轮]|重新来|开始游戏|游戏开始"
    # issue 54, what a weak model said with nothing done: 我们来玩猜数字, 我心里想好一个数, 让我们开始,
    # 我来画画, 好的，下一张！, 我们再玩吧, 新的画来了, 比十一大一些
    r"|(?:我们|咱们)(?:就|现在)?(?:来|开始)?玩(?!什么|哪|啥|的)|想好[了啦]?一个|(?:我们|咱们)(?:现在|就)?开始"
    r"|我(?:来|再|重新|先)?画(?:画|一|个|了|好|完|张|幅)|下一(?:张|题|个|道|幅|局|轮)|再(?:来|玩)(?:一[次局个把盘轮]|吧|啦)"
    r"|新的(?:一)?(?:张|幅|题|局|轮|画)|比[^，,。！!？?]{0,8}(?:大|小)(?:一点|一些|了|点)"
)
"""Words that claim a new round began (好，我们来新的一局); an offer (要不要再来一局？) is no claim."""
_OFFER_RE = re.compile(r"要不要|想不想|好不好|行不行|可以吗|[吗？?]")


_WRONG_RE = re.compile(r"(?:答案|猜的|说的|猜得|说得|答得)(?:是)?(?:不对|错了|不正确)")
"""A verdict of wrong in other words: 你的答案不对 (the weak model, on a solved riddle, to
"我猜是太阳" and to "我放弃"; issue 54's playtest)."""


def has_verdict(text: str) -> bool:
    """Whether ``text`` announces a verdict or a score (猜对了, 不对哦, 你的答案不对, 得三分 …)."""
    return (
        any(word in text for word in VERDICT_WORDS)
        or bool(_POINTS_RE.search(text))
        or bool(_WRONG_RE.search(text))
    )


def claims_progress(text: str) -> list[str]:
    """What ``text`` claims the game did (第三题, 重新想, 画好, 听好了, 我画了, 新的一局 …), as
    stems; an offer ("要不要再来一局？") claims nothing."""
    claims = [re.sub(r"[了啦]$", "", m.group()) for m in _PROGRESS_RE.finditer(text)]
    if not _OFFER_RE.search(text):
        claims += [m.group() for m in _RESTART_RE.finditer(text)]
    return claims


def _produced(results: Sequence[Any]) -> str:
    """What this turn's hooks and tools returned, as one text to look claims up in."""
    return json.dumps(list(results), ensure_ascii=False, default=str)


def may_claim(text: str, results: Sequence[Any], *, kind: str, acted: bool) -> bool:
    """Whether ``text``'s claims of progress stand: a number (第三题) must be the one the
    hook or a tool said (in ``results``); "重新想", "画好了" need a game tool that ran this
    turn (``acted``). On ``start`` the game does begin: only numbered claims are checked."""
    produced = _produced(results)
    for claim in claims_progress(text):
        if kind == "start" and not claim.startswith("第"):
            continue
        numbered = claim.startswith("第")
        if claim not in produced and (numbered or not acted):
            return False
    return True


_RIGHT_WORDS = ("猜对", "答对", "猜中", "说对了", "加分")
_RIGHT_RESULTS = ('"correct": true', '"solved": true', '"outcome": "win"', '"outcome": "solved"')


def _says_right(text: str) -> bool:
    return any(word in text for word in _RIGHT_WORDS) or bool(_POINTS_RE.search(text))


def may_judge(text: str, results: Sequence[Any], *, kind: str, judged: bool) -> bool:
    """Whether ``text`` may announce a verdict or a score: it has none, the runtime judged
    this message itself (``judged``), or the verdict's words are in what code returned.

    A "right" (猜对了, 得三分) stands only when code found the player right, judged or not:
    code judged 好呀好呀 not the answer, and the weak model said "你猜对了，得3分。" (issue 54).
    """
    produced = _produced(results)
    if _says_right(text) and not (
        any(word in produced for word in _RIGHT_WORDS)
        or _POINTS_RE.search(produced)
        or any(mark in produced for mark in _RIGHT_RESULTS)
    ):
        return False
    if not has_verdict(text) or (judged and kind == "message"):
        return True
    return any(w in produced for w in VERDICT_WORDS if w in text) or bool(
        _POINTS_RE.search(produced)
    )
