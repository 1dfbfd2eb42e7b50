"""What a family says to end the game: one list of end words, one rule (pure).

The router (``agentcade.main.router``) ends the current game on it, and the offline main
model (``agentcade.main.chat.OfflineMainModel``) calls ``end_game`` on it, so the two
can never disagree about what "不玩了" means. A line ends the game when it holds an end
phrase, is nothing but a short end word ("停", "结束了"), or holds a phrase that sounds
like "结束游戏" (speech recognition: "接术游戏").
"""

from __future__ import annotations

from agentcade.core.judge import is_match

__all__ = ["DECLINES", "END_LINES", "END_PHRASES", "END_TOLERANT", "declines_offer", "is_end_request"]

END_PHRASES = (
    "结束游戏", "游戏结束", "退出游戏", "停止游戏", "关闭游戏", "关掉游戏", "不玩了", "不想玩了",
    "别玩了", "不要玩了", "玩够了", "不玩啦", "不想玩啦", "不完了", "不想完了", "不玩儿了",
    "结束这局", "结束这一局", "结束本局", "结束吧", "退出吧", "到此为止", "就玩到这", "先玩到这",
    "不玩这个了", "不想玩这个了", "这个不好玩", "我要退出", "停止吧", "别玩啦",
    # a family that says goodnight to the game (issue 54): 今天就到这, 拜拜小懒
    "今天就到这", "今天先到这", "今天就玩到这", "就到这里吧", "先到这里吧", "拜拜小懒", "小懒拜拜", "再见小懒",
    "小懒再见",
)  # fmt: skip
"""Anywhere in the line, they end the game."""

END_LINES = (
    "结束", "退出", "停止", "停", "不玩", "不玩儿", "结束了", "退出了", "停下", "算了不玩了", "拜拜", "拜拜啦",
    "再见", "再见啦", "拜拜了", "就到这里", "就到这", "到这里吧",
)  # fmt: skip
"""As the whole line, they end the game (inside a longer one they may mean something else)."""

END_TOLERANT = ("结束游戏", "退出游戏", "停止游戏")
"""Heard with recognition errors too (``is_match`` over every window of the line)."""


def is_end_request(said: str) -> bool:
    """Whether the line asks to end the game; ``said`` is its normal form (``normalize``)."""
    if said in END_LINES or any(p in said for p in END_PHRASES):
        return True
    return any(_window_match(said, p) for p in END_TOLERANT)


DECLINES = tuple(sorted((
    "不要", "不用", "不了", "不想要", "不想", "算了", "下次吧", "下次再玩", "下次", "够了", "不来了", "不玩", "没意思",
), key=len, reverse=True))  # fmt: skip
"""A no to the game's offer of another round ("要不要再来一个？" — "不要了")."""
_DECLINE_PADDING = tuple(sorted((
    *DECLINES, "我", "我们", "了", "吧", "啦", "呀", "啊", "哦", "嗯", "呢", "再", "谢谢", "谢谢你", "谢谢小懒", "小懒",
    "今天", "先", "就",
), key=len, reverse=True))  # fmt: skip


def declines_offer(said: str) -> bool:
    """Whether the line, right after the game offered another round, says no: then the game
    ends (issue 54: 海龟汤 asked "要不要再来一个？" five times over 不要了 and 拜拜).
    Only the whole line, but for padding: "不要这个 换一个" and "不要太难的" ask for something."""
    if not any(d in said for d in DECLINES):
        return False
    reach = [True] + [False] * len(said)
    for i in range(len(said)):
        if reach[i]:
            for word in _DECLINE_PADDING:
                if said.startswith(word, i):
                    reach[i + len(word)] = True
    return reach[-1]


def _window_match(said: str, phrase: str) -> bool:
    n = len(phrase)
    return any(is_match(said[i : i + n], phrase) for i in range(len(said) - n + 1))
