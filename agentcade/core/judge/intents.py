"""Lines that ask for something rather than answer: help (hint / give up), round control,
the rules, whether a guess was right; and small talk with the host."""

from __future__ import annotations

from typing import Literal

from agentcade.core.judge.numerals import parse_number
from agentcade.core.judge.text import normalize

_HINT_PHRASES = (
    "提示", "线索", "帮帮我", "给点提醒", "提醒一下", "想不出", "想不起", "不知道是什么", "接不上", "接不下去",
    "接不出", "太难了",
)  # fmt: skip
_GIVE_UP_PHRASES = (
    "猜不出", "猜不到", "猜不着", "放弃", "不猜了", "认输", "告诉我答案", "公布答案", "答案是什么",
    "说答案", "揭晓", "投降",
)  # fmt: skip
_HELP_EXACT = ("不知道", "不晓得", "不会", "不懂", "想不到", "好难", "太难了", "难")
_HELP_TRIM_HEAD = "我嗯呃额啊哎唉真还是都也"
_HELP_TRIM_TAIL = "呀啊呢了耶哦嘛诶哇啦"


def help_request(text: str) -> Literal["hint", "give_up"] | None:
    """Whether the line asks for help rather than guessing: "hint", "give_up" or None.

    "不知道", "我不会", "想不出来", "给个提示" ask for a hint; "猜不出来", "我放弃",
    "告诉我答案" give up. Neither is ever a wrong guess. A game decides what it does with
    each (a hint first, the answer once the hints are used up, …).
    """
    heard = normalize(text)
    if not heard:
        return None
    if any(p in heard for p in _GIVE_UP_PHRASES):
        return "give_up"
    if any(p in heard for p in _HINT_PHRASES):
        return "hint"
    core = heard.lstrip(_HELP_TRIM_HEAD).rstrip(_HELP_TRIM_TAIL)
    if core in _HELP_EXACT or heard in _HELP_EXACT:
        return "hint"
    return None


# --------------------------------------------------------------------------------------
# Asking for the next question, a new round, or the question again
# --------------------------------------------------------------------------------------

RoundRequest = Literal["next", "again", "repeat"]
"""What a round-control line asks for (``round_request``)."""

# Checked in this order: "再来一局" is a new round, not the next question.
_ROUND_PHRASES: tuple[tuple[RoundRequest, tuple[str, ...]], ...] = (
    ("repeat", (
        "再说一遍", "再说一次", "再说一下", "再念一遍", "再念一次", "再念一下", "再讲一遍", "再讲一次",
        "再读一遍", "再读一次", "重复一下", "重复一遍", "重复一次", "没听清", "没听见", "没听到",
        "刚才说的什么", "刚才说什么", "没听清楚", "听不清楚", "听不清",
    )),
    ("again", (
        "再来一局", "再玩一局", "再玩一次", "再来一轮", "再玩一轮", "再来一盘", "再玩一盘", "再开一局",
        "重新开始", "重新来", "重来", "新的一局", "开一局新的", "再来一次", "重新玩",
    )),
    ("next", (
        "下一个", "下一题", "下一道", "下一幅", "下一张", "换一题", "换一个", "换一道", "换个题",
        "换题", "再来一个", "再来一题", "再来一道", "再来一幅", "再出一个", "再出一题", "再出一道",
        "再画一个", "再讲一个", "再猜一个", "另一个", "新的一题", "再来个", "来个新的", "下一轮", "换个别的", "换一个别的",
        "换个新的", "换一个新的", "换个成语", "换一个成语",
        # how children ask for another drawing (issue 54)
        "换一张", "换张", "换一幅", "再画一张", "再画一幅", "再来一张", "画下一个", "画下一张", "再画个",
    )),
)  # fmt: skip
# What may stand around a round-control phrase: who asks, how politely, what it is about.
# Anything else left over ("下一个是小猫吗", "不要下一个") means the line is something else.
_ROUND_PADDING = tuple(sorted((
    "我", "我们", "咱们", "你", "小懒", "要", "我要", "想", "我想", "还要", "还想", "给我", "帮我",
    "请", "请你", "麻烦", "能", "能不能", "可以", "可不可以", "你能", "就", "那", "那就", "那么",
    "好", "好吧", "好的", "嗯", "行", "吧", "呀", "啊", "呢", "嘛", "了", "哦", "吗", "啦", "哈",
    "好不好", "行不行", "好吗", "可以吗", "一下", "把", "的", "再", "快", "快点", "赶紧",
    # giving up on this one: 这个好难，下一个
    "好难", "太难了", "太难", "难", "不会", "猜不出来", "猜不出",
    "谜语", "题", "题目", "问题", "谜面", "汤面", "故事", "海龟汤", "汤", "数", "数字", "画", "动物",
    "游戏", "一遍", "刚才", "那个", "这个", "这道题", "这个谜语", "成语", "词", "词语",
    # a repeat wrapped in words: 没听清楚，再说一遍
    "没听清楚", "没听清", "没听见", "没听到", "听不清楚", "听不清",
    # cheering and turn-taking around it (issue 54): 耶 再来一局, 再画一个新的, 再来一个 这次我来猜
    "耶", "哇", "哇塞", "好耶", "太好了", "新的", "一个新的", "这次我来猜", "这次我猜", "这回我来猜", "我来猜",
    "换我猜", "该我猜了", "轮到我猜了",
), key=len, reverse=True))  # fmt: skip
# A bare yes: a round request only right after the game offered one (``offered``).
_YES = frozenset((
    "要", "好", "好的", "好啊", "好呀", "好吧", "来吧", "来", "来啊", "来呀", "行", "行啊", "可以",
    "嗯", "嗯嗯", "要的", "要要", "要要要", "当然", "当然要", "当然好", "想", "想要", "还要",
    "继续", "再来", "好好", "好哒", "没问题", "ok", "okay", "yes", "要啊", "要呀", "还想",
    "好耶", "玩", "再玩", "还玩", "我要", "我还要", "我想", "对", "是",
))  # fmt: skip
_YES_TRIM = "呀啊呢了耶哦嘛诶哇啦吧"
# A yes said the way children say it (issue 54): 好呀好呀, 要要要, 嗯嗯好的, 当然要啦, 来吧来吧.
_YES_WORDS = tuple(sorted(_YES | {"耶", "哇", "嗯", "当然要", "还想玩", "想玩", "再来", *_YES_TRIM}, key=len, reverse=True))
# After an offer, asking the game to go on in the family's own words: 这次我来猜, 那你出题呀.
_GO_ON_AFTER_OFFER = (
    "这次我来猜", "这次我猜", "这回我来猜", "我来猜", "换我猜", "该我猜了", "轮到我猜了", "你出题", "出题", "你再出题",
    "再出题", "你来出题", "你出一个", "你再出一个",
)  # fmt: skip
_GO_ON_PADDING = tuple(sorted((*_GO_ON_AFTER_OFFER, *_YES_WORDS, "那", "那你", "就", "这次"), key=len, reverse=True))


def _yes_to_offer(heard: str) -> bool:
    """A yes to an offer, however a child says it (not a bare particle: 啊? is no yes)."""
    if heard.strip(_YES_TRIM) and _padded(heard, _YES_WORDS):
        return True
    return any(w in heard for w in _GO_ON_AFTER_OFFER) and _padded(heard, _GO_ON_PADDING)


_REQUEST_PADDING: dict[RoundRequest, tuple[str, ...]] = {
    request: tuple(sorted((*_ROUND_PADDING, *phrases), key=len, reverse=True)) for request, phrases in _ROUND_PHRASES
}


def _padded(rest: str, padding: tuple[str, ...]) -> bool:
    """Can ``rest`` be cut into words of ``padding`` (or is it empty)?"""
    reach = [True] + [False] * len(rest)
    for i in range(len(rest)):
        if reach[i]:
            for word in padding:
                if rest.startswith(word, i):
                    reach[i + len(word)] = True
    return reach[-1]


def round_request(text: str, *, offered: RoundRequest | None = None) -> RoundRequest | None:
    """Whether the line asks for round control: "next", "again", "repeat" or None.

    "下一个", "再来一个", "换一题", "下一题" ask for the next question of the round
    ("next"); "再来一局", "再玩一次", "重新开始" for a new round ("again"); "再说一遍",
    "再念一遍", "重复一下", "没听清" for the question again ("repeat"). The phrase must be
    the whole line but for padding (我要, 能不能, 吧, 谜语 …), so "下一个是小猫吗" (a guess)
    and "不要下一个" are None. A bare yes ("要", "好的", "来吧") is ``offered`` — what the
    game offered in its last reply ("要不要再来一个？"; ``Turn.offer``) — and None when it
    offered nothing. A weak model faked these ("好，重新想一个数。" with no new round), so
    the runtime recognises them in code and the game answers from its state (issue 25).
    """
    heard = normalize(text)
    if not heard:
        return None
    for request, phrases in _ROUND_PHRASES:
        if request == "next" and "游戏" in heard:
            continue  # 换一个游戏, 换个别的游戏: another game, not the next question
        padding = _REQUEST_PADDING[request]  # the phrase said twice is padding too: 下一个下一个
        for phrase in phrases:
            at = heard.find(phrase)
            if at >= 0 and _padded(heard[:at], padding) and _padded(heard[at + len(phrase) :], padding):
                return request
    if offered is not None and _yes_to_offer(heard):
        return offered
    return None


_RESTART_WORDS = ("重新", "从头", "重来", "新的一局", "再想一个", "换一个", "换个", "另外一个", "别的数")


def asks_restart(text: str) -> bool:
    """Whether the player's own words ask to start over ("重新想一个数吧", "从头来",
    "换一个": any round request, or a word of starting anew), so that a game's start tool,
    called by the model mid-round, acts only when the player asked (issue 54: a start is
    idempotent; a weak model called 猜数字's start_game on "好呀" and told the number).
    """
    heard = normalize(text)
    return round_request(text) in ("next", "again") or any(w in heard for w in _RESTART_WORDS)


# --------------------------------------------------------------------------------------
# Small talk: lines said to the host, not to the question
# --------------------------------------------------------------------------------------

# Closed lists: what a child says to 小懒 rather than to the game's question. Questions about
# the host (你叫什么 …), greetings and courtesies, asking to chat, tell or sing, and how the
# child feels. A story's own questions ("他喜欢吃海鲜吗", "那天下雨了吗") are not here:
# only "你…" questions are about the host.
_SMALL_TALK_PHRASES = (
    "你叫什么", "你是谁", "你几岁", "你多大", "你喜欢", "你会不会", "你会唱", "你会讲", "你在干什么",
    "你在做什么", "你吃饭了", "你吃了吗", "你吃过饭", "你吃饭没", "你住在哪", "你家在哪", "你好", "早上好",
    "中午好", "晚上好", "你怕", "你冷不冷", "你冷吗", "你热不热", "你饿不饿", "你饿了", "你累不累",
    "你画得", "画得真好", "画得好好", "画得好看", "真好看", "好好看", "你真厉害", "你好厉害", "你真聪明",
    "你好聪明", "你好可爱", "你真可爱",
    "下午好", "晚安", "谢谢", "聊天", "聊聊", "讲个笑话", "讲笑话", "讲个故事", "讲故事", "唱首歌",
    "唱个歌", "唱歌", "今天天气", "天气怎么样", "我饿了", "我困了", "我累了", "我好开心", "我很开心",
    "我好高兴", "我很高兴", "我今天", "我喜欢你", "你真棒", "你真好", "哈哈",
)  # fmt: skip
_SMALL_TALK_EXACT = ("嗨", "哈喽", "hello", "hi", "在吗", "你在吗", "喂")
# Taking turns, said as the whole line (issue 54: "这次我来猜" was ruled a wrong guess).
_TURN_TAKING = tuple(sorted((
    "这次我来猜", "这次我猜", "这回我来猜", "我来猜", "我来猜猜", "该我猜了", "轮到我了", "轮到我猜了", "换我猜", "我先猜",
    "让我猜", "让我猜猜", "让我来猜", "我来", "我来我来", "我要猜", "我也要猜", "那", "这次", "好", "嗯", *_HELP_TRIM_TAIL, "吧",
), key=len, reverse=True))  # fmt: skip
# A guess frame makes it a guess whatever else is said ("我猜你喜欢的是苹果").
_GUESS_FRAMES = ("我猜", "是不是", "应该是", "答案是", "谜底是", "会不会是", "难道是", "我觉得是")


def small_talk(text: str) -> bool:
    """Whether the line is small talk with the host, never an answer to judge.

    "你叫什么名字", "我们聊聊天吧", "你好呀", "今天天气真好", "谢谢": said to 小懒, not to
    the question; a game leaves them unjudged (the model chats), and a judging tool
    (``@tool(judges=True)``) is not run for them. A line with a guess frame ("我猜…",
    "是不是…") is never small talk.
    """
    heard = normalize(text)
    if "我" in heard and _padded(heard, _TURN_TAKING):  # 该我猜了: a turn, not a guess frame
        return True
    if not heard or any(frame in heard for frame in _GUESS_FRAMES):
        return False
    core = heard.rstrip(_HELP_TRIM_TAIL + "吧")
    if heard in _SMALL_TALK_EXACT or core in _SMALL_TALK_EXACT:
        return True
    return any(phrase in heard for phrase in _SMALL_TALK_PHRASES)


# --------------------------------------------------------------------------------------
# Questions to the host about the game: its rules, and whether the last guess was right
# --------------------------------------------------------------------------------------

_RULES_PHRASES = (
    "怎么玩", "咋玩", "怎样玩", "怎么算分", "咋算分", "怎么计分", "怎么得分", "怎么赢", "怎么才算赢",
    "规则", "玩法", "怎么猜", "要怎么猜", "游戏是什么", "怎么回答",
)  # fmt: skip
_CONFUSED_PHRASES = ("什么意思", "啥意思", "听不懂", "没听懂", "不太懂", "不明白", "搞不懂", "看不懂")
_CONFUSED_LONGEST = 8
"""A confused line is short ("啥意思，听不懂"); a longer one says something of its own."""


def rules_question(text: str) -> bool:
    """Whether the line asks how the game is played (or says it is lost): a question to the host.

    "这个游戏怎么玩来着", "这个怎么玩呀，规则是啥", "这个游戏怎么算分来着", "啥意思，听不懂":
    never a guess, a question of the story or a miss. The game answers from its own
    declaration (``SkillAgent.rules_line``). A guess frame ("我猜…") makes it a guess.
    """
    heard = normalize(text)
    if not heard or any(frame in heard for frame in _GUESS_FRAMES):
        return False
    if any(phrase in heard for phrase in _RULES_PHRASES):
        return True
    return len(heard) <= _CONFUSED_LONGEST and any(p in heard for p in _CONFUSED_PHRASES)


_VERDICT_ASKS = (
    "猜对了吗", "猜对了没", "猜对没", "猜对了没有", "猜对没有", "猜中了吗", "猜中了没", "猜中没", "猜中了没有",
    "答对了吗", "答对了没", "答对没", "答对了没有", "说对了吗", "说对了没", "说对没", "说对了没有",
    "对了吗", "对了没", "对了没有", "对吗", "对不对", "是对的吗", "对没对", "算对吗", "算猜中了吗",
    "算猜对了吗", "算不算对", "算不算猜中", "算不算猜对", "是不是猜对了", "是不是答对了", "是不是猜中了",
    "是不是对了",
    # how far the player got (issue 54: 海龟汤's referee ruled 我赢了没有 and 还差什么呀 "这个不重要")
    "赢了没有", "赢了没", "赢了吗", "算赢了吗", "算不算赢", "还差什么", "还差多少", "还差几个", "差什么", "还差哪个",
    "还有什么没猜到", "还有什么没猜出来", "猜出来了吗", "猜出来了没", "猜出来了没有", "猜出来了吧", "说对了几个",
    "猜对了几个", "答对了几个", "猜中了几个",
)  # fmt: skip
_VERDICT_PADDING = tuple(sorted((
    "我", "我们", "这次", "那", "那我", "刚才", "刚刚", "刚才那个", "是不是", "现在", "已经", "到底", "究竟",
    "呀", "啊", "吧", "呢", "嘛", "了", "哦", "啦", "哈", "嗯", "小懒", "你说", "这样", "那样", "这个",
), key=len, reverse=True))  # fmt: skip


def asks_verdict(text: str) -> bool:
    """Whether the line asks whether the player is right: "我猜对了吗", "对不对呀", "我答对了没有".

    The whole line, but for padding: "是老虎，对不对" is a guess, and the game judges it. A
    game answers from its state (``SkillAgent.answer_status``), never by judging the line.
    """
    heard = normalize(text)
    for phrase in _VERDICT_ASKS:
        at = heard.find(phrase)
        if at >= 0 and _padded(heard[:at], _VERDICT_PADDING) and _padded(
            heard[at + len(phrase) :], _VERDICT_PADDING
        ):
            return True
    return False


# --------------------------------------------------------------------------------------
# Lines said to someone else in the room: 哥哥你猜是什么, 妹妹 是蝴蝶啦
# --------------------------------------------------------------------------------------

_VOCATIVES = tuple(sorted((
    "哥哥", "姐姐", "弟弟", "妹妹", "妈妈", "爸爸", "爷爷", "奶奶", "姥姥", "姥爷", "外公", "外婆", "叔叔",
    "阿姨", "舅舅", "姑姑", "小姨", "宝贝", "老公", "老婆", "老妈", "老爸",
), key=len, reverse=True))  # fmt: skip
# Without a pause, what shows a vocative speaks to that person: 哥哥你猜, 妈妈我饿了, 姐姐快点.
# Anything else is a sentence about them (爸爸很伤心吗, 爷爷修过灯吗: 海龟汤's questions).
_ADDRESSED_BY = ("你", "您", "我", "快", "看", "别", "让", "好厉害", "真棒", "加油", "等等", "等一下")
# How a guess opens when it is said to someone else: 妹妹 是蝴蝶啦, 哥哥 我觉得是蝴蝶.
_GUESS_OPENINGS = tuple(sorted((
    "我猜", "我觉得", "我觉得是", "我猜是", "是不是", "是", "应该是", "肯定是", "一定是", "答案是", "就是", "我知道了是",
    "我知道是", "会不会是",
), key=len, reverse=True))  # fmt: skip
_ASKS_WHO = ("什么", "啥", "哪", "谁", "怎么", "几")


def aside(text: str) -> str | None:
    """A line said to another person in the room (a vocative first: 哥哥/妹妹/妈妈/爸爸…,
    standing apart, followed by 你/我/快…, or by a guess told with no pause (妹妹是蝴蝶啦,
    ``_told_guess``); "爸爸很伤心吗" and "妹妹是谁" are about them, not to them).

    None when the line is not said to someone else (the whole line is for the game);
    otherwise the guess it holds, for the game to judge ("妹妹 是蝴蝶啦" → "是蝴蝶啦"), or
    "" when it holds none ("哥哥你猜是什么", "妈妈我饿了"): no verdict, nothing echoed.
    What holds a guess is decided in code: a guess opening (是, 我猜, 我觉得是 …) or a bare
    number after the vocative, with no question word (什么, 哪, 谁 …) left in it.
    """
    heard = normalize(text)
    who = next((v for v in _VOCATIVES if heard.startswith(v)), "")
    rest = heard[len(who) :]
    if not who or not rest or rest.startswith(("的", "们")):
        return None
    if not (_after_pause(text, who) or rest.startswith(_ADDRESSED_BY)):
        return rest if _told_guess(rest) else None
    if any(w in rest for w in _ASKS_WHO) or rest.startswith(("你", "您")):
        return ""
    if rest.startswith(_GUESS_OPENINGS) or parse_number(rest) is not None:
        return rest
    return ""


# A guess told straight after the vocative, no pause: 妹妹是蝴蝶啦, 哥哥就是老虎嘛, 妈妈答案是蝴蝶.
_TOLD_OPENINGS = tuple(sorted((
    "是", "就是", "应该是", "肯定是", "一定是", "答案是", "谜底是", "准是",
), key=len, reverse=True))  # fmt: skip
_TRAILING = "啦呀吧嘛哦啊了"
_GUESS_LENGTH = 4
"""A guess is a word: 蝴蝶, 小狗, 长颈鹿, 十五. "是要去学校演出" says what the person does."""


def _told_guess(rest: str) -> bool:
    """Whether what follows a vocative with no pause is a guess told to that person, not a
    sentence about them (issue 54: the recogniser writes 妹妹是蝴蝶啦 with no comma).

    A guess opening (是, 就是, 答案是 …), then one short word or a number, said, not
    asked: 妹妹是谁, 爸爸是在切洋葱吗, 爷爷是不是修过灯 and 姐姐是要去学校演出 stay the
    game's whole line (a 海龟汤 question about 爸爸 keeps its subject).
    """
    opening = next((o for o in _TOLD_OPENINGS if rest.startswith(o)), "")
    guess = rest[len(opening) :].rstrip(_TRAILING)
    if not opening or not guess or any(w in rest for w in _ASKS_WHO):
        return False
    if guess.endswith(("吗", "么", "呢")) or guess.startswith(("不是", "在", "要", "因为", "为了")):
        return False
    return parse_number(guess) is not None or len(guess) <= _GUESS_LENGTH


def _after_pause(text: str, who: str) -> bool:
    """The vocative stands apart (妹妹 是蝴蝶啦, 妹妹，是蝴蝶): what follows is said to her."""
    at = text.find(who)
    follows = text[at + len(who) : at + len(who) + 1] if at >= 0 else ""
    return follows != "" and not normalize(follows)
