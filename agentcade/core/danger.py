"""A child's dangerous statement: found in code, answered with care before any model.

Why. "我想把手指伸进插座里试试" reached a game (海龟汤 ruled it "这个不重要。") or the main
agent's model (a game prompt came back). A child who says they are about to touch a
socket, play with fire, eat medicine, climb a window or go with a stranger must hear a
clear, caring answer at once, whatever game runs; the game then goes on as it was.

Theory of operation. The line is cut into clauses (at ``，。！？；``). A clause counts when

* it names a danger *with the act* (``手指伸进插座``, ``玩打火机``, ``吃妈妈的药``,
  ``爬到窗台上``, ``跟陌生人走``: one pattern per topic), and
* the child speaks of themselves doing it (``我``/``我们`` before the act, or a bare
  intent such as ``想``/``要``/``试试``), or a stranger is calling the child
  (``有个不认识的叔叔叫我跟他走``), and
* nothing in the clause makes it harmless: a negation before the act (``我不会玩火``,
  ``妈妈说不能摸插座``), a guess or a question about a story (``我猜他吃了药``,
  ``他是不是被电到了``, ``是火吗``), a third person doing it (a 海龟汤 story).

Near misses stay quiet: 火车, 火锅, 火龙果, 灭火, 药 in a riddle's answer, a story's
questions. ``tests/test_danger.py`` holds the labelled lines both ways.

Pure: text in, a ``Danger`` (its topic and the answer to say) or ``None`` out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentcade.core.judge import normalize

__all__ = ["DANGER_ANSWERS", "Danger", "danger"]


@dataclass(frozen=True, slots=True)
class Danger:
    """A dangerous statement: its topic (``electricity``, ``fire`` …), the clause, and what
    the robot says (``DANGER_ANSWERS``)."""

    topic: str
    clause: str

    @property
    def answer(self) -> str:
        return DANGER_ANSWERS[self.topic]


DANGER_ANSWERS: dict[str, str] = {
    "electricity": "千万不要碰插座和电线！里面有电，会把人电伤，很危险。想试什么，先问问爸爸妈妈，好吗？",
    "fire": "这个可不能玩！火会烧伤人，还可能把房子点着，很危险。想看火的话，请爸爸妈妈陪着你，好吗？",
    "medicine": "药不是糖，千万不要自己吃！吃错了药会生病的。身体不舒服，要告诉爸爸妈妈，好吗？",
    "chemical": "这个千万不能吃也不能喝！清洁用的东西有毒，会伤身体。要是已经碰到了，马上告诉爸爸妈妈，好吗？",
    "heights": "太危险了，千万不要！从高的地方掉下来会摔伤的。离窗户和阳台边远一点，好吗？",
    "stranger": "千万不要跟不认识的人走，也不要吃他给的东西！马上告诉爸爸妈妈，好吗？",
    "door": "先别开门！不认识的人敲门，要先叫爸爸妈妈来，好吗？",
    "knife": "刀很锋利，会把手划破的，千万不要自己玩！需要用的话，请爸爸妈妈帮忙，好吗？",
    "water": "千万不要一个人去水边！水很深很危险，一定要有大人陪着，好吗？",
    "outside": "千万不要一个人出门！外面车多，也容易走丢。想出去玩，请爸爸妈妈陪你，好吗？",
    "gas": "煤气可不能碰！漏出来会着火，很危险。厨房的东西要爸爸妈妈来用，好吗？",
    "plastic_bag": "千万不要把袋子套在头上！会喘不过气来，很危险，好吗？",
}
"""What the robot says to each topic: caring, clear, one thing to do. Simplified Chinese."""

_C = r"[^，,。！!？?；;]"

# The topics: each needs the act, not just the thing (火车, 药 in a riddle answer).
_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("electricity", re.compile(
        rf"(?:手指|手|指头|钥匙|铁丝|剪刀|筷子|发夹|夹子|针|叉子|东西)(?:头)?{_C}{{0,4}}"
        rf"(?:伸|插|放|塞|捅|戳)(?:进|到|在)?{_C}{{0,3}}(?:插座|插孔|插头|电源|电门|电线)"
        r"|(?:摸|碰|舔|咬|拔|剪|扯|玩)(?:一下|一摸|一碰)?(?:插座|插孔|电线|电门|电源|电闸)"
        r"|(?:插座|插孔|电线|电门)(?:里|上)?(?:面)?[^，,。！!？?；;不别]{0,4}(?:摸|伸|插|捅|戳|碰|舔)")),
    ("fire", re.compile(
        r"玩火|放火|点火|烧(?:东西|纸|房子|头发|窗帘|衣服|被子)|(?:玩|点|拿|用|打)(?:一下)?(?:打火机|火柴|鞭炮|炮仗)"
        r"|玩蜡烛|(?:打火机|火柴)[^，,。！!？?；;]{0,4}(?:点|烧)")),
    ("gas", re.compile(r"(?:开|拧|打开|玩|点)(?:一下)?(?:煤气|燃气|天然气|煤气灶|燃气灶)")),
    ("medicine", re.compile(
        rf"(?:偷偷|自己|偷)(?:去)?(?:吃|喝|尝)(?:一下|一口|一点|几颗|好多|很多|一把)?{_C}{{0,5}}(?:药|药片|药丸|胶囊)"
        rf"|(?:吃|喝|尝)(?:好多|很多|一把|一瓶|全部|所有)(?:的)?{_C}{{0,4}}(?:药|药片|药丸|胶囊)"
        rf"|(?:吃|喝|尝)(?:一下|一口|一点|几颗)?(?:妈妈|爸爸|爷爷|奶奶|外公|外婆|姥姥|姥爷|大人|柜子里|抽屉里|药箱里)的?(?:药|药片|药丸|胶囊)"
        r"|(?:药|药片|药丸|胶囊)(?:当|像)(?:糖|糖果|零食)"
        rf"|(?:吃|尝)(?:一下|一颗|一点)?{_C}{{0,3}}(?:药|药片|药丸)(?:试试|尝尝|是什么味)")),
    ("chemical", re.compile(
        rf"(?:吃|喝|尝|舔)(?:一下|一口|一点)?{_C}{{0,3}}(?:消毒液|洗洁精|洗衣液|洗衣粉|清洁剂|漂白|酒精|杀虫剂|电池)")),
    ("heights", re.compile(
        r"(?:爬|翻|站|坐|跳|探)(?:上|到|过|出|下)?(?:去|来)?[^，,。！!？?；;]{0,3}(?:窗户|窗台|窗外|阳台|栏杆|屋顶|楼顶|护栏|柜子顶|高处|楼梯扶手)"
        r"|(?:从|在)(?:窗户|窗台|阳台|楼上|楼顶|屋顶|高处)(?:上|边)?[^，,。！!？?；;]{0,3}(?:跳|往下跳|飞|爬)"
        r"|跳楼")),
    ("stranger", re.compile(
        rf"(?:跟|和|随)(?:一个|一位|那个)?{_C}{{0,2}}(?:陌生人|不认识的(?:人|叔叔|阿姨|哥哥|姐姐))(?:走|回家|出去|上车|去)"
        rf"|(?:陌生人|不认识的(?:人|叔叔|阿姨|哥哥|姐姐)){_C}{{0,6}}(?:叫我|让我|带我|喊我|给我(?:糖|吃|好吃的|玩具)|要我|接我)"
        rf"|(?:上|坐)(?:陌生人|不认识的人)的车")),
    ("door", re.compile(r"(?:给|帮)(?:陌生人|不认识的人)开门")),
    ("knife", re.compile(
        r"(?:玩|拿)(?:一下)?(?:菜刀|刀子|水果刀|小刀|刀片)|玩(?:刀|剪刀)|(?:割|划|砍)(?:自己|我的手|手指|手)")),
    ("water", re.compile(r"(?:一个人|自己|偷偷)(?:去|跑去|跳进|下)?(?:河|湖|水库|池塘|海|游泳池)(?:边|里)?(?:玩|游|游泳|捞)?")),
    ("outside", re.compile(r"(?:一个人|自己|偷偷)(?:跑)?(?:出门|出去|跑出去|去外面|到外面|去马路|过马路)")),
    ("plastic_bag", re.compile(r"(?:袋子|塑料袋)(?:套|罩|蒙)(?:在)?(?:头|脑袋)")),
)

_SELF = re.compile(r"我|俺|咱")
_INTENT = re.compile(r"^(?:想|要|想要|准备|打算|试试|试一下|去|现在|正在|偷偷|马上)")
_NEGATED = re.compile(
    r"不要|不能|不可以|不许|不准|不会|不敢|不想|不该|不应该|千万别|别|没有|没|从来不|不再|禁止|危险"
)
_GUESS = re.compile(r"为什么|我猜|我觉得是|是不是|会不会|有没有|难道|答案是|谜底是|汤底是|故事|汤面|谜语")
_THIRD = re.compile(r"他|她|它|那个人|男人|女人|男孩|女孩|老人|主人公|因为")
_SUPERVISED = re.compile(r"(?:妈妈|爸爸|爸妈|大人|医生|老师|奶奶|爷爷|外婆|外公|姥姥|姥爷)(?:让|给|带|喂|陪|帮|说要)")
_QUESTION_END = re.compile(r"[吗嘛么呢]$")
_CLAUSES = re.compile(r"[，,。！!？?；;…\n]+")
_KNOCK_THEN_OPEN = re.compile(r"(?:有人|陌生人|不认识的人)(?:在)?敲门.{0,4}?(?:我)?(?:去|要|想|就|马上)?(?:开门|去开)")
"""Across clauses: "有人敲门，我去开门" (the whole line, punctuation dropped)."""


def danger(text: str) -> Danger | None:
    """The danger the child's line speaks of (see the module docstring), or None."""
    for raw in _CLAUSES.split(text):
        clause = normalize(raw)
        if not clause:
            continue
        for topic, pattern in _TOPICS:
            match = pattern.search(clause)
            if match is None:
                continue
            before = clause[: match.start()]
            stranger = topic in ("stranger", "door")
            if _NEGATED.search(before) or _GUESS.search(clause) or _QUESTION_END.search(clause):
                continue
            if _THIRD.search(clause if not stranger else before) or _SUPERVISED.search(before):
                continue
            if stranger or _SELF.search(before) or _INTENT.search(before) or not before:
                return Danger(topic, raw.strip())
    heard = normalize(text)
    if (knock := _KNOCK_THEN_OPEN.search(heard)) and not _NEGATED.search(heard[: knock.end()]):
        return Danger("door", text.strip())
    return None
