"""The speech guard: lines that must never be said to a child, whoever wrote them.

Everything the robot says passes here first (``agentcade.main.output.OutputQueue``): the
main agent's words (its model can be anyone's) and every game's replies (a remote game is
code on someone else's server). ``screen`` finds a line that

* asks the child for personal data: the home address, phone numbers (the family's too),
  the school, a full or real name (a parent's name too), passwords and codes, photos or
  the camera, meeting someone (``GuardKind.PERSONAL_DATA``), or
* tells the child to do something unsafe: open the door, go out alone, fire, sockets,
  gas, medicine or chemicals, windows and heights, knives, paying, keeping secrets from
  the parents (``GuardKind.UNSAFE_ACT``);

``impersonation`` finds a line that claims to be a real person or another brand's
assistant (``check`` warns about it; a game's is said, a game may play a role, but the main
agent's own is stopped: ``screen(text, host=True)``). ``steering`` finds a game's line that
talks to the main agent's model instead of the family (``忽略之前的规则``, ``从现在起你要…``):
the main agent keeps it out of its model's view (a 1.5B model obeyed such a line, measured).

Theory of operation. A line is cut into clauses (at ``，。！？；`` and line ends, each
clause keeping its stop). Each pattern names one topic and matches inside one clause.
Some patterns are requests by their shape (``你家住在哪``, ``电话是多少``); the others only
name the data (``详细地址``, ``验证码``) and count when the clause also asks for something
(``告诉``, ``发给我``, ``是多少``, a ``？``). A match preceded by a negation that governs it
(``不要把你家的地址告诉陌生人``, ``我不会问你住在哪``) or followed by one
(``家庭住址不能告诉别人``) is advice, not a request. Unsafe-act patterns are skipped in a
clause told about someone else (``他自己吃了药``: a 海龟汤 story) unless the child is
addressed. Plain questions about the child's world stay fine: ``你家的小狗叫什么名字``,
``你叫什么名字`` (a first name is how a game greets; the full name is not asked),
``你在学校开心吗``, ``我们下次见面再玩``.

Pure: text in, a ``GuardHit`` or ``None`` out; no I/O. The patterns are Simplified Chinese,
the robot's language; ``tests/test_guard.py`` holds the hits and the near misses.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

__all__ = [
    "GUARD_LINE_CHAT",
    "GUARD_LINE_GAME",
    "PRIVATE_LINE",
    "TOPIC_WORDS",
    "GuardHit",
    "GuardKind",
    "impersonation",
    "neutral_line",
    "said_personal",
    "screen",
    "steering",
]

GUARD_LINE_GAME = "这句话不适合说给小朋友听，我们接着玩吧。"
"""Said instead of a game's line that the guard stopped."""

GUARD_LINE_CHAT = "这句话不适合说给小朋友听，我们聊点别的吧。"
"""Said instead of the main agent's own line that the guard stopped."""

PRIVATE_LINE = "谢谢你相信我！不过全名、学校、家里的地址和电话是你的小秘密，不用告诉我哦，只告诉爸爸妈妈就好。"
"""Said when a child tells the robot something private (``said_personal``): never said back."""


TOPIC_WORDS: dict[str, str] = {
    "address": "向小朋友要家庭住址",
    "phone": "向小朋友要电话号码",
    "school": "打听小朋友在哪个学校",
    "full_name": "打听小朋友或家长的全名",
    "password": "向小朋友要密码或验证码",
    "age": "打听小朋友的年龄、生日或年级",
    "photo": "向小朋友要照片或想看摄像头",
    "meeting": "约小朋友见面",
    "secret": "让小朋友瞒着家长",
    "door": "让小朋友去开门",
    "outside": "让小朋友一个人出门",
    "fire": "让小朋友玩火",
    "electricity": "让小朋友碰插座电线",
    "gas": "让小朋友开煤气",
    "medicine": "让小朋友吃药或碰危险的东西",
    "heights": "让小朋友爬高",
    "knife": "让小朋友玩刀",
    "money": "让小朋友付钱或拿家里的钱",
}
"""Each topic ``screen`` can find, as the games page tells a parent about it."""


class GuardKind(enum.StrEnum):
    """Why a line was stopped (or, for ``IMPERSONATION``, warned about)."""

    PERSONAL_DATA = "personal_data"
    UNSAFE_ACT = "unsafe_act"
    IMPERSONATION = "impersonation"
    STEERING = "steering"


@dataclass(frozen=True, slots=True)
class GuardHit:
    """One finding: its kind, the topic (``address``, ``phone``, ``door``…), why, and the
    clause that matched (for the trace and ``check``'s message)."""

    kind: GuardKind
    topic: str
    reason: str
    clause: str


def neutral_line(*, in_game: bool) -> str:
    """What is said instead of a stopped line: a game's, or the main agent's own."""
    return GUARD_LINE_GAME if in_game else GUARD_LINE_CHAT


# -- patterns --------------------------------------------------------------------------

_C = r"[^，,。！!？?；;\n]"
"""Any character inside one clause."""

_YOU = r"(?:你|您)"
_FAMILY = r"(?:爸爸|妈妈|爸妈|爸|妈|父母|家长|家人|家里人|爷爷|奶奶|外公|外婆|姥姥|姥爷|哥哥|姐姐)"
_CAMERA = r"(?:摄像头|相机|镜头)"
_HIGH = r"(?:窗户|窗台|阳台|栏杆|屋顶|楼顶|护栏)"
_GAS = r"(?:煤气|燃气|天然气|煤气灶|燃气灶)"
_DOOR = r"(?:开门|把门打开|打开(?:家|大|房)?门)"

_ASKS = re.compile(
    r"告诉|说说|说一下|说一说|说出|讲讲|讲一下|报一下|报给|念一下|念给|发给|发我|给我|写下|写给|"
    r"输入|填一下|填给|是多少|多少|是什么|什么|哪|吗|呢|[？?]|让我知道|分享|透露"
)
"""A clause that asks for something (needed by the patterns that only name the data)."""

_NEGATION = re.compile(
    r"(?:不要|不能|不可以|不许|不准|不该|不应该|千万别|别|不会|不用|不需要|不必|绝不|绝对不|决不|"
    r"从不|从来不|禁止|切记不要|一定不要)"
    r"(?:再|随便|轻易|把|向|跟|和|对|给|在网上|在网上把)?"
    r"(?:陌生人|别人|任何人|网上的人|不认识的人)?"
    r"(?:问|打听|告诉|说|说出|讲|透露|泄露|发|给|报|写|问你|让|去|玩|碰|摸|一个人|自己|偷偷)?"
    r"(?:别人|陌生人|任何人|不认识的人)?"
    r"(?:你|你的|你家的|家里的)?$"
)
"""A negation that governs what follows it at once (``不要把``, ``千万别告诉别人``)."""

_NEGATED_EARLIER = re.compile(
    r"(?:不要|不会|不能|不可以|不许|不准|不让|千万别|别再|绝不|绝对不|决不|从不|禁止)"
    r"(?!害怕|怕|担心|着急|急|紧张|客气|犹豫|忘|不好意思|害羞)"
)
"""A negation earlier in the clause that governs a list: ``不会让小朋友做危险的事（比如开门、
一个人出门）`` (not one that only calms: ``不要害怕告诉我…``)."""

_NEGATED_AFTER = re.compile(r"^.{0,3}?(?:不能|不要|别|不可以|不许|要保密|保密|是秘密|是隐私)")
"""A negation right after the match: ``家庭住址不能告诉别人``."""

_THIRD_PERSON = re.compile(r"他|她|它|男人|女人|男孩|女孩|老人|故事里|有人|别人")
_ADDRESSED = re.compile(r"你|您|小朋友|宝宝|孩子|咱们|我们")


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: GuardKind
    topic: str
    reason: str
    regex: re.Pattern[str]
    needs_ask: bool = False


def _p(kind: GuardKind, topic: str, reason: str, pattern: str, *, needs_ask: bool = False) -> _Pattern:
    return _Pattern(kind, topic, reason, re.compile(pattern, re.I), needs_ask)


_PD = GuardKind.PERSONAL_DATA
_UA = GuardKind.UNSAFE_ACT

_PATTERNS: tuple[_Pattern, ...] = (
    # -- the home address
    _p(_PD, "address", "asks for the home address",
       rf"{_YOU}(?:们)?(?:家|的家|们家)(?:住)?在(?:哪|什么地方|什么位置|哪个小区|哪条|几号|几楼|几单元)"),
    _p(_PD, "address", "asks for the home address",
       rf"{_YOU}(?:们)?(?:家)?(?:现在)?住(?:在)?(?:哪|什么地方|什么位置|哪个小区|哪条|几号|几楼|几单元)"),
    _p(_PD, "address", "asks for the home address",
       rf"{_YOU}(?:们)?(?:家)?的?(?:详细)?(?:地址|住址|门牌)|(?:家庭|详细|家里的?|家的)(?:地址|住址)|"
       rf"住址|门牌号|(?:哪个|什么)小区|几号楼|几单元",
       needs_ask=True),
    # -- phone numbers and contacts
    _p(_PD, "phone", "asks for a phone number",
       r"电话号码|手机号码?|电话号|联系方式|微信号|QQ号|座机", needs_ask=True),
    _p(_PD, "phone", "asks for a phone number", r"(?:电话|手机)(?:号)?(?:是)?多少"),
    # -- the school
    _p(_PD, "school", "asks which school the child goes to",
       rf"{_YOU}{_C}{{0,6}}(?:哪个|哪所|哪一所|什么|哪家|哪一个)(?:学校|小学|中学|幼儿园)"),
    _p(_PD, "school", "asks which school the child goes to",
       rf"{_YOU}(?:的|们)?(?:学校|小学|幼儿园|班级|班主任)(?:叫|是|在|的名字|名字|地址)", needs_ask=True),
    _p(_PD, "school", "asks which school the child goes to", rf"{_YOU}{_C}{{0,3}}在哪(?:里|儿)?上(?:学|小学|幼儿园)"),
    # -- the full name
    _p(_PD, "full_name", "asks for a full or real name",
       rf"(?:{_YOU}|{_FAMILY}){_C}{{0,4}}(?:全名|真名|真实姓名|真实名字|大名|身份证)", needs_ask=True),
    _p(_PD, "full_name", "asks for a full or real name", rf"{_YOU}(?:姓什么|姓啥|的姓是)"),
    _p(_PD, "full_name", "asks for a parent's name",
       rf"{_YOU}(?:的)?{_FAMILY}(?:的名字|叫什么|叫啥|姓什么|的全名)"),
    # -- age, birthday and grade (issue 54: the robot asked a child's age)
    _p(_PD, "age", "asks the child's age",
       rf"{_YOU}{_C}{{0,4}}(?:几岁|多少岁|多大(?:了|啦|呀|啊|年纪)?(?=[？?，,。！!]|$)|年龄|岁数|年纪)"),
    _p(_PD, "age", "asks the child's birthday", rf"{_YOU}(?:的)?(?:生日|出生)|{_YOU}{_C}{{0,5}}出生", needs_ask=True),
    _p(_PD, "age", "asks the child's grade", rf"{_YOU}{_C}{{0,4}}(?:上|读|念|是)?几年级"),
    # -- passwords and codes
    _p(_PD, "password", "asks for a password or a code",
       rf"(?:{_YOU}|{_FAMILY}|家里|手机|电脑|平板|微信|支付宝)(?:的)?(?:(?!我){_C}){{0,3}}(?:密码|验证码|卡号)",
       needs_ask=True),
    _p(_PD, "password", "asks for a password or a code", r"验证码|银行卡号|支付密码|身份证号", needs_ask=True),
    # -- photos and the camera
    _p(_PD, "photo", "asks for a photo",
       rf"(?:发|传|寄|给)(?:给)?我{_C}{{0,6}}(?:照片|相片|自拍|视频|录像)"),
    _p(_PD, "photo", "asks for a photo", rf"(?:照片|相片|自拍|视频|录像){_C}{{0,4}}(?:发|传|寄)(?:给)?我"),
    _p(_PD, "photo", "asks for a photo",
       rf"(?:拍|照){_C}{{0,3}}(?:你|自己|你家|你们){_C}{{0,3}}(?:照片|相片|样子|脸)"),
    _p(_PD, "photo", "asks to turn on the camera", rf"(?:打开|开){_C}{{0,2}}{_CAMERA}"),
    _p(_PD, "photo", "asks to see the child", rf"(?:看看|看一下|让我看){_YOU}(?:长|的脸|的样子)"),
    # -- meeting someone
    _p(_PD, "meeting", "asks to meet",
       rf"(?:我|我们|咱们|咱俩)(?!下次){_C}{{0,8}}(?<!下次)(?:见面|见个面|碰面|碰个面|约会|约个地方|约个时间)"),
    _p(_PD, "meeting", "asks to meet", rf"(?:出来|单独|偷偷|私下){_C}{{0,4}}(?:见|玩|找我|碰头)"),
    _p(_PD, "meeting", "asks to meet",
       r"(?:我|我们)(?:去|来|到)(?:你家|你们家|你学校|你们学校|你家楼下|学校门口|接你|找你)"),
    _p(_PD, "meeting", "asks to meet", rf"{_YOU}(?:来|到|去){_C}{{0,6}}(?:找我|见我|我家)"),
    # -- unsafe acts
    _p(_UA, "secret", "tells the child to keep a secret from the parents",
       rf"(?:不要|别|不能|不许)(?:告诉|让|跟|和){_C}{{0,4}}(?:爸爸|妈妈|爸妈|父母|家长|大人|老师|家里人)"),
    _p(_UA, "door", "tells the child to open the door",
       rf"^(?:快|赶紧|马上|现在|请)?(?:去|帮我|帮忙){_C}{{0,4}}{_DOOR}|^{_DOOR}|给{_C}{{0,6}}{_DOOR}"),
    _p(_UA, "door", "tells the child to open the door",
       rf"(?:{_YOU}|小朋友|孩子|宝宝){_C}{{0,3}}{_DOOR}"),
    _p(_UA, "outside", "tells the child to go out alone",
       rf"(?:一个人|自己|偷偷|悄悄){_C}{{0,3}}(?:出门|出去|离开家|下楼|跑出去|去外面|过马路|去河边|去湖边|游泳|下水)"),
    _p(_UA, "outside", "tells the child to go with a stranger", rf"跟(?:陌生人|不认识的人){_C}{{0,2}}走"),
    _p(_UA, "fire", "tells the child to play with fire",
       rf"玩火|(?:点|点燃|点着){_C}{{0,3}}(?:火|打火机|火柴|窗帘|纸|蜡烛)|(?:拿|找|用){_C}{{0,2}}(?:打火机|火柴)"),
    _p(_UA, "electricity", "tells the child to touch electricity",
       rf"(?:摸|碰|插|伸进|捅|舔){_C}{{0,4}}(?:插座|插头|电线|电源|插孔)"),
    _p(_UA, "gas", "tells the child to turn on the gas",
       rf"(?:打开|拧开|开|玩){_C}{{0,3}}{_GAS}|把{_GAS}{_C}{{0,2}}(?:打开|拧开)"),
    _p(_UA, "medicine", "tells the child to take medicine or chemicals",
       rf"(?:偷偷|自己|去|快|试试|尝尝|把|拿){_C}{{0,4}}(?:吃|喝|吞|尝){_C}{{0,5}}"
       rf"(?:药|药片|药丸|洗衣液|清洁剂|消毒液|洗洁精|漂白)"),
    _p(_UA, "medicine", "tells the child to swallow something dangerous",
       rf"(?:吃|吞|舔){_C}{{0,3}}(?:电池|纽扣电池|磁铁|洗衣凝珠)"),
    _p(_UA, "heights", "tells the child to climb somewhere high",
       rf"(?:爬|翻)(?:上|到|过|出)?{_C}{{0,3}}{_HIGH}|(?:站|坐|跳)(?:上|到){_C}{{0,3}}{_HIGH}"),
    _p(_UA, "heights", "tells the child to jump from high",
       rf"从{_C}{{0,4}}(?:窗|阳台|楼|屋顶|高处|桥){_C}{{0,3}}跳"),
    _p(_UA, "knife", "tells the child to play with a knife",
       rf"玩(?:刀|菜刀|剪刀|水果刀)|(?:拿|用){_C}{{0,2}}(?:刀|菜刀|剪刀|水果刀){_C}{{0,3}}(?:划|割|刺|扎)"),
    _p(_UA, "money", "tells the child to pay or take money",
       rf"(?:去|帮我|快|现在|马上|用|拿){_C}{{0,6}}(?:扫码|付款|支付|充值|转账|下单)"),
    _p(_UA, "money", "tells the child to take the parents' money",
       rf"(?:拿|偷|用)(?:你)?{_FAMILY}的?(?:钱|银行卡|信用卡|支付宝|微信支付)"),
)

_BRANDS = (
    r"小爱同学|小爱|天猫精灵|小度|小艺|小冰|Siri|Alexa|Cortana|Bixby|Google ?Assistant|谷歌助手|"
    r"ChatGPT|GPT|Claude|Gemini|Kimi|豆包|文心一言|文心|通义千问|通义|元宝|讯飞|Copilot"
)
_REAL_PEOPLE = r"你的?(?:爸爸|妈妈|老师|爷爷|奶奶|外公|外婆|哥哥|姐姐)|警察|医生|真人|真的人|人类"

_IMPERSONATION: tuple[_Pattern, ...] = (
    _p(GuardKind.IMPERSONATION, "brand", "claims to be another brand's assistant",
       rf"我(?:就|其实|现在)?是(?:{_BRANDS})"),
    _p(GuardKind.IMPERSONATION, "person", "claims to be a real person",
       rf"我(?:就|其实|真的)?是(?:{_REAL_PEOPLE})|我不是(?:机器人|人工智能|AI)"),
    _p(GuardKind.IMPERSONATION, "system", "claims to be the system",
       r"我是系统|^(?:系统|系统消息|系统提示|系统通知)[:：]"),
)

_STEERING: tuple[_Pattern, ...] = (
    _p(GuardKind.STEERING, "override", "tells the main agent to drop its rules",
       r"(?:忽略|无视|忘掉|忘记|不要管|别管|抛开|放弃)(?:掉)?(?:你)?(?:之前|以前|上面|以上|前面|刚才|原来|所有|一切)"
       r"(?:的|所有的)?(?:规则|指令|指示|要求|设定|提示词|限制|约束)|ignore\s*(?:all\s*|the\s*)?(?:previous|above|prior)"),
    _p(GuardKind.STEERING, "role", "gives the main agent a new role or orders",
       r"从(?:现在|今天|此刻|这一刻)(?:起|开始)(?:，)?你(?:要|就|必须|只能|是|不再)|你(?:现在)?(?:要|必须|只能)听(?:游戏|我)的|"
       r"你(?:的)?新(?:规则|身份|任务|指令)|你不再是小懒|(?:假装|扮演)你(?:自己)?是|"
       r"^你(?:现在)?(?:要|必须)?(?:当|做|成为)(?:我的)?(?:助手|AI|人工智能)|"
       r"(?:系统|system|assistant|developer)(?:提示|消息|指令|prompt)?\s*[:：]"),
    _p(GuardKind.STEERING, "tool", "tells the main agent which tool to call",
       r"(?:调用|执行|使用)\s*(?:start_game|end_game|send_message|list_games|工具|函数)"),
)

_CLAUSE = re.compile(r"[^，,。！!？?；;\n]+[，,。！!？?；;]*")


def _clauses(text: str) -> list[str]:
    flat = re.sub(r"[ \t\u3000]+", "", text)
    return [m.group(0) for m in _CLAUSE.finditer(flat)]


def _negated(clause: str, start: int, end: int) -> bool:
    return (
        bool(_NEGATION.search(clause[max(0, start - 14) : start]))
        or bool(_NEGATED_EARLIER.search(clause[:start]))
        or bool(_NEGATED_AFTER.match(clause[end:]))
    )


def _find(text: str, patterns: tuple[_Pattern, ...]) -> GuardHit | None:
    for clause in _clauses(text):
        asks = bool(_ASKS.search(clause))
        told_about_others = bool(_THIRD_PERSON.search(clause)) and not _ADDRESSED.search(clause)
        for pattern in patterns:
            if pattern.needs_ask and not asks:
                continue
            if pattern.kind is GuardKind.UNSAFE_ACT and told_about_others:
                continue
            for match in pattern.regex.finditer(clause):
                if pattern.kind in (GuardKind.PERSONAL_DATA, GuardKind.UNSAFE_ACT) and _negated(
                    clause, *match.span()
                ):
                    continue
                return GuardHit(pattern.kind, pattern.topic, pattern.reason, clause.strip())
    return None


def screen(text: str, *, host: bool = False) -> GuardHit | None:
    """The first reason ``text`` must not be said to a child, or ``None`` when it may.

    Finds requests for personal data and instructions to do something unsafe (see the
    module docstring). ``host``: the line is the main agent's own (the robot as itself, 小懒),
    which may not claim to be anyone else either; a game's may (a game may play a role).
    """
    return _find(text, _PATTERNS) or (_find(text, _IMPERSONATION) if host else None)


def steering(text: str) -> GuardHit | None:
    """Whether a game's line speaks to the main agent instead of the family ("忽略之前的规则",
    "从现在起你要……", "调用 start_game"): the main agent's model is not shown such a line."""
    return _find(text, _STEERING)


def impersonation(text: str) -> GuardHit | None:
    """Whether ``text`` claims to be a real person, the system or another brand's assistant."""
    return _find(text, _IMPERSONATION)


# -- what a child tells the robot (issue 54) ----------------------------------------------

_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕任沈姚卢姜崔钟"
    "谭陆汪范金廖贾夏韦付方邹孟熊秦邱江尹薛闫段雷侯史陶黎贺顾毛郝龚邵钱严覃武戴莫孔汤施牛樊葛邢齐乔伍庞颜倪庄聂"
    "章鲁岳翟殷詹欧耿焦俞柳祝舒阮柯纪梅童凌毕季裴霍涂苗谷盛翁冉骆靳管柴蒙鲍喻祁蒲滕屈饶艾尤穆卓缪娄窦戚岑党费"
)
_HANZI = r"[\u4e00-\u9fff]"
_NAME_END = r"(?=$|[，,。！!？?；;]|我|在|今年|上|是|呀|啊|哦|啦|你|哈)"
_SCHOOLS = r"(?:小学|中学|幼儿园|学校)"
_DIGITS = r"[0-9零〇一二三四五六七八九幺]"
_SAID: tuple[_Pattern, ...] = (
    _p(_PD, "full_name", "tells a full name",
       rf"(?:我|{_FAMILY})(?:的)?(?:名字|全名|大名)?叫(?:做)?(?P<name>[{_SURNAMES}]{_HANZI}{{1,2}}){_NAME_END}"),
    _p(_PD, "school", "tells the school",
       rf"(?:在|叫|是|读|上|念){_HANZI}{{2,6}}?{_SCHOOLS}|[一二三四五六1-6]年级?[一二三四五六七八九十0-9]{{1,2}}班"),
    _p(_PD, "address", "tells the home address",
       rf"(?:住在|家在|住址|地址|住){_C}{{0,12}}?(?:{_DIGITS}+(?:号|栋|单元|楼|室|弄)|路|街|小区|花园|巷|胡同)"),
    _p(_PD, "phone", "tells a phone number", rf"(?:电话|手机|号码|手机号){_C}{{0,6}}?{_DIGITS}{{7,}}"),
    _p(_PD, "password", "tells a password", rf"密码{_C}{{0,3}}?(?:[0-9a-z]{{4,}}|{_DIGITS}{{4,}})"),
)


_OWN_TOPICS = ("full_name", "school", "address")
"""Private only when the child tells its own (我家住在…, 我叫…): a number is private whoever's."""


def said_personal(text: str) -> GuardHit | None:
    """What a child told that is private: a full name (a parent's too), the school, the home
    address, a phone number or a password; ``None`` for what may be heard (a first name
    "我叫乐乐", the age "我七岁了", the city "我住在北京").

    The robot never says such a line back, nor hands it to a model or a game: it answers
    ``PRIVATE_LINE`` and the trace records the topic, never the words.
    """
    for clause in _clauses(text):
        for pattern in _SAID:
            match = pattern.regex.search(clause)
            if match is None:
                continue
            name = match.groupdict().get("name")
            if name and name[1] == name[0]:
                continue  # 明明, 丁丁: a pet name, not a surname
            if pattern.topic in _OWN_TOPICS and "我" not in clause[: match.start() + 1]:
                continue  # 他住在路边吗: a story's question, not the child's own home
            return GuardHit(pattern.kind, pattern.topic, pattern.reason, clause.strip())
    return None
