"""Routing in code: what a line clearly asks of the main agent, decided without a model.

Why. A model that decides whether "我猜10" is for the game costs a model call on every
line of every game (half a second or more before the game even sees the guess), and a
weak model gets it wrong: it answers guesses itself, pretending to be the game, and
ignores "结束游戏". What a line asks of the main agent is nearly always plain from its
words: a game's name after 玩/来/换成, an end phrase, "有什么游戏". So code decides, and
the model is asked only about what code cannot tell (chit-chat and unclear lines outside
a game). While a game runs, every line that is not a clear switch, end or list request
goes to the game: the game's own prompt answers chit-chat briefly and returns to play.

Safety first during a game: a guess or an answer must never end or switch it. So a
switch needs a play cue right before another game's name ("玩海龟汤", "换成猜数字") or
a line that is nothing but that name; misheard names (pinyin-tolerant, through
``agentcade.core.judge.is_match``) count only for names of three or more characters, and the
current game's own name never switches (海龟汤's questions may well mention 海龟汤).

Pure: no I/O, no trio. ``route`` is the whole decision; ``MainAgent`` acts on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from agentcade.core.ending import is_end_request
from agentcade.core.judge import is_match, normalize
from agentcade.core.skill import Declaration

__all__ = ["Route", "RouteKind", "find_named", "games_text", "greeting", "route"]

RouteKind = Literal["start", "end", "change", "list", "forward", "no_game", "model"]
"""What the main agent does with a line.

``start`` a game (ending the running one first), ``end`` the running game, ``change``:
end it and ask which game next, ``list`` the games, ``forward`` the line to the running
game, ``no_game``: say there is no game to end, ``model``: ask the model.
"""


@dataclass(frozen=True)
class Route:
    """The decision for one line, with the reason (for the trace)."""

    kind: RouteKind
    game_id: str = ""
    why: str = ""
    named: str = ""
    """The first game the line names at all (the loose rule of ``find_named``), worked out
    with the route: the main agent hands it down instead of matching the line again (a
    model's ``start_game`` for a line that names no game is refused; a failed model
    starts the game named)."""
    asks_game: bool = False
    """The line asks for a game without naming one ("来个动脑筋的游戏吧"): the model may pick
    one. A line that neither names nor asks for a game ("讲个笑话吧") never starts one."""


@dataclass(frozen=True)
class _Mention:
    game_id: str
    start: int
    end: int
    exact: bool


# A cue right before a game's name asks to play it. 完/晚/万/湾 are how ASR hears 玩.
_PLAY_CUE = re.compile(
    r"(?:[玩完晚万湾](?:一下|一个|一局|一把|一盘|个|局|把|盘)?|来(?:一个|一局|一把|一盘|个|玩|局|把|盘)?"
    r"|换成|换到|改成|改玩|换玩|换|开始|开|打开|启动|要|想|切换到|切换成|切到)$"
)
# ... unless it describes rather than asks ("他们在玩海龟汤吗").
_DESCRIBING = re.compile(r"(?:在|正在|是|会不会|有没有)[玩完晚万湾]$")
_NEGATION = re.compile(r"(?:不|别|没|不要|不想|不能|不用|甭)(?:再)?[玩完晚万湾]?(?:一下|了)?$")
_NOT_PLAYING = re.compile(r"(?:不|别|不要|不想|甭)(?:再)?[玩完](?:一下|了)?$")
# What may surround a name when the line is nothing but the name.
_PADDING = re.compile(
    r"^(?:我|我们|咱们)?(?:想|要|想要)?(?:来|玩|玩个|来个|来一个|来一局|就)?$"
)
_PADDING_AFTER = re.compile(r"^(?:游戏)?(?:吧|呀|啊|呗|好了|了|哦|嘛|好不好|行不行|可以吗|好吗)*$")

_CHANGE = re.compile(
    r"(?:换|改)(?:一个|一下|个|成|到)?(?:别的|其他|其它|另外一个|另一个|新的)?游戏"
    r"|(?:玩|来)(?:一个|个|点|一点|些)?(?:别的|其他|其它|另外一个|另一个)"
)
_LIST = re.compile(
    r"(?:什么|哪些|哪几个|哪几种|几个|几种|啥|多少)(?:好玩的|别的|其他的?|其它的?)?游戏|游戏(?:都)?(?:有|是)(?:哪些|什么|啥)"
    r"|你(?:还|都)?(?:会|能)(?:玩)?(?:些)?(?:什么|啥)|(?:可以|能)玩(?:些)?(?:什么|啥)|有什么好玩的"
)
_PLAY_SOMETHING = re.compile(
    r"^(?:我|我们|咱们)?(?:想|要|想要)?(?:来|一起)?(?:玩|完)(?:个|一个|一下|会儿|一会儿|点)?(?:游戏)?"
    r"(?:吧|呀|啊|呗)?$|^(?:我们|咱们)?来(?:玩)?(?:个|一个)?游戏(?:吧|呀|啊)?$"
)
_ASKS_GAME = re.compile(r"游戏|玩")
_QUESTION = re.compile(r"[吗么嘛呢?]$|怎么|什么|是啥|好玩|难不难|规则")


def route(text: str, games: Sequence[Declaration], current: str | None) -> Route:
    """Decide what the line ``text`` asks for; ``current`` is the running game's id."""
    said = normalize(text)
    if not said:
        return Route("forward" if current else "model", why="nothing to route")
    mentions = _mentions(said, games)
    decided = _in_game(said, mentions, current) if current is not None else _outside(said, mentions)
    return replace(
        decided,
        named=mentions[0].game_id if mentions else "",
        asks_game=bool(_ASKS_GAME.search(said)),
    )


def _in_game(said: str, mentions: list[_Mention], current: str) -> Route:
    for m in mentions:
        if m.game_id == current:
            continue
        before, after = said[: m.start], said[m.end :]
        if _negated(before):
            continue
        if _cued(before) or (_whole(before, after) and (m.exact or m.end - m.start >= 3)):
            return Route("start", m.game_id, why="another game named with a play cue")
    if is_end_request(said) or any(m.game_id == current and _NOT_PLAYING.search(said[: m.start]) for m in mentions):
        return Route("end", current, why="end phrase")
    if _CHANGE.search(said):
        return Route("change", current, why="asks for another game")
    if "游戏" in said and _LIST.search(said):
        return Route("list", why="asks what games there are")
    return Route("forward", current, why="a line for the game")


def _outside(said: str, mentions: list[_Mention]) -> Route:
    for m in mentions:
        before, after = said[: m.start], said[m.end :]
        if _negated(before):
            return Route("model", why="a game named with a negation")
        if _cued(before) or _whole(before, after):
            return Route("start", m.game_id, why="a game named with a play cue")
    if mentions and not _QUESTION.search(said):
        return Route("start", mentions[0].game_id, why="a game named")
    if mentions:
        return Route("model", why="a question about a game")
    if is_end_request(said):
        return Route("no_game", why="end phrase with no game running")
    if _LIST.search(said) or _PLAY_SOMETHING.match(said) or _CHANGE.search(said) or said.endswith("玩个游戏吧"):
        return Route("list", why="asks what games there are")
    return Route("model", why="chat")


def _cued(before: str) -> bool:
    return bool(_PLAY_CUE.search(before)) and not _DESCRIBING.search(before) and not _negated(before)


def _negated(before: str) -> bool:
    tail = before[-4:]
    return bool(_NEGATION.search(tail))


def _whole(before: str, after: str) -> bool:
    return bool(_PADDING.match(before)) and bool(_PADDING_AFTER.match(after))


def _mentions(said: str, games: Sequence[Declaration]) -> list[_Mention]:
    """Every game name heard in the line, longest first where they overlap, in line order."""
    found: list[_Mention] = []
    for info in games:
        for name in dict.fromkeys((info.name, *info.aliases, info.id)):
            key = _key(name)
            if not key:
                continue
            start = said.find(key)
            while start >= 0:
                found.append(_Mention(info.id, start, start + len(key), True))
                start = said.find(key, start + 1)
            if len(key) >= 3 and not key.isascii():
                for i in range(len(said) - len(key) + 1):
                    window = said[i : i + len(key)]
                    if window != key and is_match(window, name):
                        found.append(_Mention(info.id, i, i + len(key), False))
    found.sort(key=lambda m: (-(m.end - m.start), not m.exact, m.start))
    kept: list[_Mention] = []
    for m in found:
        if all(m.end <= k.start or m.start >= k.end for k in kept):
            kept.append(m)
    return sorted(kept, key=lambda m: m.start)


@lru_cache(maxsize=512)
def _key(name: str) -> str:
    """A game name's normal form, worked out once per name rather than once per line."""
    return normalize(name)


def find_named(text: str, games: Sequence[Declaration]) -> str | None:
    """The id of the first game the line names at all (the loose rule, when no model answers)."""
    mentions = _mentions(normalize(text), games)
    return mentions[0].game_id if mentions else None


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[。！？!?；;])", text)
    return (match.group(1) if match else text).rstrip("。！？!?；;")


def games_text(games: Sequence[Declaration]) -> str:
    """The spoken answer to "有什么游戏": each game's name and how it is played (``description``)."""
    if not games:
        return "现在还没有可以玩的游戏。"
    parts = [f"{g.name}：{_first_sentence(g.description or g.summary)}。" for g in games]
    return f"我会玩{len(games)}个游戏。" + "".join(parts) + "想玩哪个？"


def greeting(games: Sequence[Declaration]) -> str:
    """The boot greeting: each game's name followed by its ``summary`` (the guide's rule)."""
    if not games:
        return "你好，我是小懒，可以陪你聊天。"
    listed = "；".join(f"{g.name}，{g.summary}" for g in games)
    return f"你好，我是小懒。我会玩这些游戏：{listed}。想玩哪个，就说“玩”加上游戏名。"
