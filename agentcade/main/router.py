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

After a game (issue 40). Outside a game ``route`` is told what just happened
(``After``): the game that ended last and what its last words offered, and whether the
host's last answer listed the games. Then "再来一局", "再来一个", "下一个", "再玩一次"
restart the last game and "再说一遍" repeats its last words (``round_request``, the same
phrases a game hears); a bare "好"/"要" restarts it only when its last words offered
another round. A vague pick is resolved in code: "最后那个" and "第二个" right after the
list (the order it was said in), "随便你挑" a random game (the main agent picks), "刚才那个
画画的" / "那玩画画那个" the game whose name, aliases or description hold the words (one
game only, else the model decides). A bare "开始" names no game: the family is asked which.
A bare number ("十") with no game running offers the game that takes numbers (its
vocabulary) instead of a model's ramble.

Pure: no I/O, no trio. ``route`` is the whole decision; ``MainAgent`` acts on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from agentcade.core.ending import is_end_request
from agentcade.core.judge import RoundRequest, is_match, normalize, parse_number, round_request
from agentcade.core.skill import Declaration

__all__ = [
    "After", "Route", "RouteKind", "describe_text", "find_named", "games_text", "greeting", "route", "which_text",
]

RouteKind = Literal[
    "start", "end", "change", "list", "forward", "no_game", "model", "restart", "repeat", "random", "which",
    "number", "describe",
]
"""What the main agent does with a line.

``start`` a game (ending the running one first), ``end`` the running game, ``change``:
end it and ask which game next, ``list`` the games, ``forward`` the line to the running
game, ``no_game``: say there is no game to end, ``model``: ask the model. After a game:
``restart`` the game that ended, ``repeat`` its last words; ``random``: start a game the
main agent picks; ``which``: ask which game (``which_text``); ``number``: a bare number
with no game running (``game_id``: the game that takes numbers, if one does);
``describe``: how a named game is played, asked outside it (its ``description``).
"""


@dataclass(frozen=True)
class After:
    """What happened just before the line, outside a game (the main agent keeps it)."""

    game_id: str = ""
    """The game that ended last (until another one starts), or ""."""
    fresh: bool = False
    """It ended during the previous line: "再说一遍" and a bare "好" are about it."""
    offered: RoundRequest | None = None
    """Its last words offered another round ("要不要再来一局？")."""
    listed: bool = False
    """The host's previous answer listed the games ("最后那个" picks from that list)."""
    offered_game: str = ""
    """The host itself offered this game in its previous answer ("想玩猜数字吗？")."""


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
    r"|(?:玩|玩点|玩些|玩一点)(?:什么|啥)|有(?:什么|啥)(?:好玩|可以玩|能玩)"
)
_PLAY_SOMETHING = re.compile(
    r"^(?:我|我们|咱们)?(?:想|要|想要)?(?:来|一起)?(?:玩|完)(?:个|一个|一下|会儿|一会儿|点)?(?:游戏)?"
    r"(?:吧|呀|啊|呗)?$|^(?:我们|咱们)?来(?:玩)?(?:个|一个)?游戏(?:吧|呀|啊)?$"
)
_ASKS_GAME = re.compile(r"游戏|玩")
_RULES = re.compile(r"怎么玩|怎样玩|如何玩|规则|玩法|是什么游戏|是啥游戏|是什么意思|啥意思|怎么猜|怎么算分|是什么$|是啥$")
_QUESTION = re.compile(r"[吗么嘛呢?]$|怎么|什么|是啥|好玩|难不难|规则")


def route(text: str, games: Sequence[Declaration], current: str | None, after: After | None = None) -> Route:
    """Decide what the line ``text`` asks for; ``current`` is the running game's id;
    ``after``: what happened just before, outside a game."""
    said = normalize(text)
    if not said:
        return Route("forward" if current else "model", why="nothing to route")
    mentions = _mentions(said, games)
    if current is not None:
        decided = _in_game(said, mentions, current)
    else:
        decided = _outside(said, mentions)
        if decided.kind in ("model", "list"):
            decided = _after(said, games, after or After()) or decided
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
    if mentions and _RULES.search(said):
        return Route("describe", mentions[0].game_id, why="how a game is played")
    if mentions:
        return Route("model", why="a question about a game")
    if is_end_request(said):
        return Route("no_game", why="end phrase with no game running")
    if _LIST.search(said) or _PLAY_SOMETHING.match(said) or _CHANGE.search(said) or said.endswith("玩个游戏吧"):
        return Route("list", why="asks what games there are")
    return Route("model", why="chat")


# -- after a game, vague picks ---------------------------------------------------------

_ANOTHER = re.compile(r"换|另")
_START_ONLY = re.compile(r"^(?:那|那就|好|好的|快|快点)?(?:我们|咱们)?(?:开始|开始游戏|开始玩|快开始)(?:吧|啊|呀|呗|了|嘛|喽)*$")
_BARE_YES = re.compile(
    r"^(?:嗯|好|好的|好啊|好呀|行|可以|要|要的|来吧|来|玩|想|想玩|当然|ok|yes)(?:吧|啊|呀|呗|嘛|哦|啦|的)*$"
)
_NUMBER_ONLY = re.compile(r"^(?:我猜|猜|是)?[零一二两三四五六七八九十百\d]{1,4}(?:吧|吗|啊|呀|呢)?$")
_POSITION = re.compile(
    r"^(?:那|那就|就|嗯|我|我们)*(?:想|要)?(?:玩|选|来)?(?:(?P<last>最后|最后面|最后一)|第(?P<nth>[一二三四五六七八九\d])|"
    r"(?P<first>最前面|最开始|开头))(?:个|一个|那个|的那个|那一个)(?:游戏)?(?:吧|呀|啊|呗|好了|了)*$"
)
_RANDOM_WORDS = (
    "随便", "随意", "都行", "都可以", "都好", "无所谓", "你挑", "你选", "你定", "你来挑", "你来选", "你来定",
    "你决定", "你说了算", "帮我挑", "帮我选", "哪个都行", "哪个都可以",
)  # fmt: skip
_REFERENCE = re.compile(
    r"^(?:那|那就|就|嗯|我|我们|还|还是|再)*(?:想|要|想要)?(?:再)?(?:玩|来|选|来玩)?(?:一下|个|一个)?"
    r"(?P<back>刚才|刚刚|上次|之前|前面|上一个)?(?:玩的|说的)?(?P<that>那个|那一个|那)?(?P<core>.{0,6}?)"
    r"(?P<tail>的那个|那个|的)?(?:游戏)?(?:吧|呀|啊|呗|好了|了)*$"
)
_ASKS_WHAT = re.compile(r"什么|啥|哪些|哪几")
_REFERENCE_CUE = re.compile(r"玩|来|选|刚才|刚刚|上次|之前|上一个")


def _after(said: str, games: Sequence[Declaration], after: After) -> Route | None:
    """A line outside a game read against what just happened (see the module docstring)."""
    ids = [g.id for g in games]
    recent = after.game_id if after.game_id in ids else ""
    if after.offered_game in ids and _BARE_YES.match(said):
        return Route("start", after.offered_game, why="yes to the host's offer")
    if recent:
        request = round_request(said, offered=after.offered if after.fresh else None)
        if request == "repeat":
            if after.fresh:
                return Route("repeat", recent, why="repeat the last game's last words")
        elif request is not None and not (request == "next" and _ANOTHER.search(said)):
            return Route("restart", recent, why=f"{request} after the game ended")
        elif request is not None:
            return Route("which", why="another one after the game ended")
    elif round_request(said) in ("next", "again"):
        return Route("which", why="another round with no game played")
    if _START_ONLY.match(said):
        return Route("which", why="start with no game named")
    if after.listed and _BARE_YES.match(said):
        return Route("which", why="yes to the list")
    picked = _pick(said, games, after, recent)
    if picked is not None:
        return picked
    if _NUMBER_ONLY.match(said) and parse_number(said) is not None:
        takes = [g.id for g in games if any(parse_number(v) is not None for v in g.vocabulary)]
        return Route("number", takes[0] if len(takes) == 1 else "", why="a bare number with no game")
    return None


def _pick(said: str, games: Sequence[Declaration], after: After, recent: str) -> Route | None:
    """A vague pick: by position in the list, at random, or by what the game is about."""
    if after.listed and (position := _POSITION.match(said)) and games:
        if position["last"]:
            return Route("start", games[-1].id, why="the last game listed")
        if position["first"]:
            return Route("start", games[0].id, why="the first game listed")
        index = parse_number(position["nth"])
        if index is not None and 1 <= index <= len(games):
            return Route("start", games[index - 1].id, why="a game by its place in the list")
    if len(said) <= 12 and any(w in said for w in _RANDOM_WORDS) and (after.listed or _ASKS_GAME.search(said)):
        return Route("random", why="the family leaves the pick to the host")
    reference = _REFERENCE.match(said)
    if _ASKS_WHAT.search(said):  # 有什么好玩的: a question about what there is, not a pick
        return None
    if reference is None or not (reference["that"] or reference["tail"] or reference["back"]):
        return None
    if not (after.listed or _REFERENCE_CUE.search(said)):
        return None
    core = reference["core"]
    if not core:
        if reference["back"] and recent:
            return Route("start", recent, why="the game played before")
        return None
    found = _by_meaning(core, games)
    return Route("start", found, why="a game by what it is about") if found else None


def _by_meaning(core: str, games: Sequence[Declaration]) -> str:
    """The one game whose name or aliases hold ``core`` (or are held by it), else whose
    description holds most of its two-character pieces; "" when none or a tie."""
    best: dict[str, int] = {}
    for g in games:
        names = [k for k in (_key(n) for n in (g.name, *g.aliases)) if k]
        if any(core in k or k in core for k in names):
            best[g.id] = 100
            continue
        about = normalize(g.description or g.summary)
        pieces = {core[i : i + 2] for i in range(len(core) - 1)} if len(core) > 1 else set()
        best[g.id] = sum(p in about for p in pieces)
    top = max(best.values(), default=0)
    winners = [gid for gid, score in best.items() if score == top]
    return winners[0] if top > 0 and len(winners) == 1 else ""


def describe_text(game: Declaration) -> str:
    """How a game is played, from its own ``description``, and how to start it."""
    about = (game.description or game.summary).strip()
    if about and about[-1] not in "。！？!?":
        about += "。"
    return f"{game.name}是这样玩的：{about}想玩的话，说“玩{game.name}”就行。"


def which_text(games: Sequence[Declaration]) -> str:
    """The short question when the family wants a game but named none."""
    if not games:
        return "现在还没有可以玩的游戏。"
    names = "、".join(g.name for g in games)
    return f"好呀，想玩哪个游戏？我会玩{names}，说游戏名就行。"


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
