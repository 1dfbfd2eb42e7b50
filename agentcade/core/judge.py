"""Tolerant answer judging: did the player (heard through speech recognition) say the answer?

One home for every game: ``is_match(utterance, answer, aliases)``, ``parse_number(text)``
and ``normalize(text)``. Pure: no I/O, no trio, no per-answer special cases.

Theory of operation
-------------------

1. **Normalise.** Traditional characters become simplified (a built-in table of common
   characters, ``_T2S``), full-width forms become half-width (NFKC), Latin letters are
   lowercased. ``normalize`` also drops punctuation and spaces; the matcher keeps them only
   as word separators.

2. **Tokenise.** Every Chinese character is one token; every run of Latin letters is one
   word token; in text mode a run of Arabic digits is spelled out as Chinese numerals
   (``3`` → ``三``) so ``3只小猪`` can meet ``三只小猪``. When the answer itself is a
   number (``15``, ``十五``, ``两``) the utterance is tokenised in number mode instead:
   each number expression becomes one number token carrying its value.

3. **Compare syllables, not characters.** Each character has pinyin readings
   (pypinyin). The *answer* uses its in-context reading (``长颈鹿`` → chang jing lu); an
   *utterance* character uses all its readings, because recognition picked the
   character, not the reading. Readings are folded by ``fuzzy_syllable``, which merges
   the usual confusions of regional speech and recognisers: initials zh/z, ch/c, sh/s,
   n/l, r/l, f/h; finals in/ing, en/eng, an/ang. Two characters agree when
   their folded toneless readings meet (``劲`` jin ≈ ``颈`` jing; ``常`` = ``长``).
   Each agreement that needed a fold, and each differing tone (the neutral tone never
   differs), is one *imperfection*; a word may carry 1 imperfection up to two syllables
   and n-1 from three (``长劲鹿``: fold + tone = 2 of 2; ``食指`` for ``狮子``: 2 of 1,
   rejected; ``松树`` for ``松鼠``: 1 of 1). A one-syllable answer is a weaker signal,
   so there the tone must agree as well (``蛇`` she2 ≈ ``舌`` she2, but ``狗`` gou3 ≠
   ``够`` gou4). Particle and function
   characters (``吗 吧 是 不 还`` …) only ever match themselves, so ``是吗`` is never a
   homophone of ``马``; the softer ones (fillers and list words ``额 哇 和`` …) may stand
   for a same-sound character inside a word of two or more syllables (``起额`` for
   ``企鹅``, ``和马`` for ``河马``), never as a one-syllable answer (``哇`` is not ``蛙``);
   numeral characters match by value only (``两`` = ``二``, but
   ``四只小猪`` is not ``三只小猪``).

4. **Find answer spans.** A span of utterance tokens states the answer when a weighted
   edit distance to the answer's tokens fits the answer's budget: agreeing characters
   cost 0, a *near-miss* character (same folded initial or same folded final) costs 1,
   any other substitution costs 2, an insertion or deletion costs 1. The budget is 0 for
   one- and two-syllable answers (``老虎`` vs ``老鼠``, ``海豚`` vs ``海豹`` differ by one
   syllable: rejected), 1 for three to five syllables and 2 from six; insertions and
   deletions are allowed only from four syllables (so answer ``大熊猫`` is not ``熊猫``). A span
   with any cost must also pass a rapidfuzz ratio on the folded pinyin strings, with a
   threshold that falls with length. English words compare as lowercase strings with a
   Levenshtein budget by length (0 up to 5 letters, 1 up to 7, 2 beyond; same first
   letter) and a plural ``s``/``es``.

5. **Everything else must be padding.** The utterance is accepted when it can be cut,
   left to right, into answer spans (at least one; repetition ``老虎老虎`` is fine) and
   padding phrases from a small closed list: hedges and frames (``我猜是``, ``应该是``,
   ``答案是``, ``是不是``, ``对不对``, ``会不会是``), fillers (``嗯``, ``呃``) and sentence
   particles (``吧 呀 啊 呢 嘛``). How a child names a thing is also allowed, but only
   right next to an answer span: before it a measure word (``一只 一把 一朵 这个``), a size
   or colour (``小 大 胖胖的 红色的 白``) or any ``AA的`` (``圆圆的``), after it ``宝宝`` or
   ``儿`` — so ``一只小兔子宝宝`` and ``大熊猫`` state ``兔子`` and ``熊猫``, while ``小的``
   alone states nothing and ``小龙虾`` keeps ``龙`` over for ``虾``. The cut is one pass
   over the tokens with a constant number of states, so a long line costs linear time.
   Anything else left over means reject; this is what rejects:

   * negations: ``不``, ``没``, ``别``, ``不对`` are never padding (``不是老虎``,
     ``老虎不对``, ``没有老虎``), while the question frames ``是不是`` / ``对不对`` are;
   * hedged lists: ``老虎还是狮子``, ``老虎或者狮子``, ``老虎、狮子、豹子`` leave the other
     names over;
   * longer different words: answer ``马`` inside ``斑马``, ``猫`` inside ``熊猫`` or
     ``猫头鹰`` leave ``斑`` / ``熊`` / ``头鹰`` over;
   * empty and garbage utterances contain no answer span.

6. **Numbers.** ``parse_number`` reads Arabic (also full-width) and Chinese numerals
   (``十五``, ``两``, ``一百零三``, ``三万五``, ordinals ``第三个``), ignores numerals inside
   common words (``一下``, ``一定``, ``万一`` …) and returns ``None`` for no number or for
   several different ones. A numeric answer matches when the utterance's number tokens
   all carry its value and the rest is padding (measure words such as ``个`` / ``只``
   included), so ``三`` meets ``3`` and ``15`` meets ``十五``.

Aliases are further answer forms; any form (or a mix of forms) may fill the answer spans.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pypinyin import Style, lazy_pinyin, pinyin
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

__all__ = [
    "Deck",
    "RoundRequest",
    "Verdict",
    "fuzzy_syllable",
    "help_request",
    "is_match",
    "judge_guess",
    "looks_like_guess",
    "normalize",
    "parse_number",
    "round_request",
    "spell_number",
]

# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------

# Traditional → simplified for common characters, as "TS" pairs. Not exhaustive; it covers
# everyday words, animals, riddle answers and the spoken frames the matcher cares about.
_T2S_PAIRS = """
萬万 與与 專专 業业 東东 絲丝 兩两 嚴严 喪丧 個个 豐丰 臨临 為为 麗丽 舉举 麼么 義义 烏乌
樂乐 喬乔 習习 鄉乡 書书 買买 亂乱 爭争 於于 虧亏 雲云 亞亚 產产 親亲 億亿 僅仅 從从 倉仓
儀仪 們们 價价 眾众 優优 會会 傘伞 偉伟 傳传 傷伤 倫伦 體体 餘余 來来 係系 倆俩 債债 償偿
兒儿 兇凶 黨党 蘭兰 關关 興兴 養养 獸兽 內内 冊册 寫写 軍军 農农 衝冲 決决 況况 凍冻 淨净
涼凉 減减 幾几 鳳凤 憑凭 擊击 劃划 劉刘 則则 剛刚 創创 刪删 別别 劍剑 劇剧 勸劝 辦办 務务
動动 勵励 勁劲 勞劳 勢势 區区 醫医 華华 協协 單单 賣卖 衛卫 卻却 廠厂 廳厅 曆历 歷历 厲厉
壓压 厭厌 縣县 參参 雙双 發发 髮发 變变 葉叶 號号 嘆叹 後后 嗎吗 啟启 吳吴 員员 聽听 嗚呜
響响 啞哑 問问 喚唤 嘗尝 噴喷 嚇吓 團团 園园 圍围 圖图 國国 圓圆 聖圣 場场 壞坏 塊块 堅坚
塵尘 執执 報报 壺壶 處处 備备 復复 頭头 誇夸 奪夺 奮奋 婦妇 媽妈 孫孙 學学 寧宁 寶宝 實实
寵宠 審审 宮宫 寬宽 賓宾 對对 導导 壽寿 將将 爾尔 層层 屬属 歲岁 島岛 嶺岭 幣币 帥帅 師师
帳帐 帶带 幫帮 乾干 幹干 並并 廣广 慶庆 庫库 應应 廟庙 開开 張张 彎弯 強强 歸归 當当 錄录
徹彻 憶忆 懷怀 態态 憐怜 總总 戀恋 惡恶 惱恼 悅悦 驚惊 慘惨 慣惯 憤愤 懶懒 戲戏 戰战 戶户
撲扑 擴扩 掃扫 揚扬 擾扰 搶抢 護护 擔担 擁拥 攔拦 撥拨 擇择 掛挂 擋挡 擠挤 揮挥 損损 撿捡
換换 據据 擺摆 攜携 搖摇 敵敌 數数 鬥斗 斷断 無无 舊旧 時时 晝昼 顯显 曬晒 曉晓 暫暂 術术
樸朴 機机 殺杀 雜杂 權权 條条 楊杨 極极 構构 槍枪 櫃柜 標标 欄栏 樹树 樣样 橋桥 檢检 夢梦
棲栖 樓楼 歡欢 歐欧 殘残 殼壳 毀毁 氣气 漢汉 湯汤 溝沟 沒没 澤泽 淚泪 潔洁 灑洒 測测 濟济
濃浓 濤涛 漲涨 漁渔 淺浅 溫温 滿满 灣湾 濕湿 滅灭 燈灯 靈灵 爐炉 點点 煉炼 爛烂 煩烦 燒烧
熱热 愛爱 爺爷 牆墙 牽牵 狀状 猶犹 獨独 獄狱 獅狮 獲获 獵猎 貓猫 豬猪 貍狸 獼猕 獺獭 現现
瑪玛 環环 畫画 暢畅 療疗 瘋疯 癢痒 盤盘 監监 蓋盖 盡尽 睜睁 礦矿 碼码 磚砖 確确 禮礼 禍祸
離离 種种 積积 稱称 穩稳 窮穷 窩窝 豎竖 競竞 筆笔 筍笋 節节 範范 築筑 簡简 簽签 籃篮 籠笼
類类 糧粮 緊紧 紅红 級级 紀纪 約约 純纯 紙纸 納纳 線线 練练 組组 細细 織织 終终 經经 結结
絕绝 給给 統统 綁绑 綠绿 維维 綿绵 續续 繩绳 網网 羅罗 罰罚 聯联 聰聪 聲声 職职 聞闻 腸肠
膚肤 腦脑 腳脚 臉脸 膠胶 藝艺 蘋苹 蘇苏 蓮莲 藥药 蘿萝 蟲虫 蝦虾 螞蚂 蟻蚁 蝸蜗 蠶蚕 蠟蜡
蠅蝇 蝟猬 螢萤 蠍蝎 蟬蝉 蝨虱 補补 裝装 褲裤 襪袜 見见 規规 覺觉 視视 觀观 觸触 計计 訂订
認认 討讨 讓让 訓训 議议 記记 講讲 許许 論论 設设 訪访 證证 評评 識识 詞词 試试 詩诗 話话
該该 詳详 語语 誤误 說说 請请 讀读 課课 誰谁 調调 談谈 謝谢 謎谜 貝贝 負负 財财 責责 貨货
質质 貴贵 費费 資资 賊贼 賞赏 賽赛 贏赢 趕赶 躍跃 軟软 輕轻 較较 輛辆 輪轮 輸输 轉转 邊边
達达 過过 運运 還还 這这 進进 遠远 連连 遲迟 適适 選选 鄰邻 醜丑 釣钓 針针 鐵铁 鈴铃 銀银
錢钱 錯错 鍋锅 鏡镜 鐘钟 長长 門门 閃闪 閉闭 閒闲 間间 鬧闹 陣阵 陽阳 陰阴 陸陆 隊队 階阶
隨随 險险 隱隐 隻只 雞鸡 難难 雖虽 電电 霧雾 靜静 頁页 頂顶 項项 順顺 須须 預预 頓顿 領领
頸颈 題题 顏颜 額额 願愿 顧顾 風风 颱台 臺台 飛飞 飯饭 飲饮 飽饱 餃饺 餅饼 餓饿 館馆 饅馒
馬马 駱骆 駝驼 驢驴 騎骑 騙骗 驗验 鬆松 魚鱼 鯨鲸 鯊鲨 鱷鳄 鯉鲤 鰻鳗 鱉鳖 鳥鸟 鴨鸭 鴿鸽
鵝鹅 鷹鹰 鸚鹦 鵡鹉 鶴鹤 鵲鹊 鶯莺 鴕鸵 鹽盐 麥麦 黃黄 齊齐 齒齿 龍龙 龜龟 裡里 裏里 麵面
鬍胡 嚮向 捨舍 準准 製制 雙双 蘆芦 樺桦 狹狭 猻狲 鱺鲡 蠔蚝 鮭鲑 鱈鳕 鰐鳄 鑰钥
鎖锁 燭烛 傢家 鏟铲 壺壶 盞盏 燦灿 幣币 鑽钻 瓏珑 蠔蚝 麼么 囉啰
"""
_T2S = {pair[0]: pair[1] for pair in _T2S_PAIRS.split() if len(pair) == 2 and pair[0] != pair[1]}
_T2S_TABLE = str.maketrans(_T2S)


def _prenormalize(text: str) -> str:
    """Simplified, half-width, lowercase; punctuation and spaces are kept (separators)."""
    return unicodedata.normalize("NFKC", text).translate(_T2S_TABLE).lower()


def _is_hanzi(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch == "〇"


def normalize(text: str) -> str:
    """Traditional → simplified, full-width → half-width, lowercase; drop punctuation/space."""
    return "".join(
        ch for ch in _prenormalize(text) if (ch.isascii() and ch.isalnum()) or _is_hanzi(ch)
    )


# --------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "幺": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = (("亿", 10**8), ("万", 10**4))
_NUM_RE = re.compile(r"(?:[0-9]+|[零〇一幺二两三四五六七八九十百千万亿])+")
# Everyday words whose numeral characters are not a number someone said.
_NUM_IDIOMS = (
    "一下", "一定", "一样", "一起", "一直", "一点", "一些", "一般", "一切", "一共", "一会",
    "一边", "一致", "一旦", "一向", "统一", "唯一", "万一", "十分", "千万", "万万", "一模一样",
    "三明治", "一心", "百分百", "四处", "不三不四",
)  # fmt: skip
_IDIOM_RE = re.compile("|".join(sorted(map(re.escape, _NUM_IDIOMS), key=len, reverse=True)))


def _parse_small(s: str) -> int | None:
    """A Chinese numeral below 10000 (no 万/亿), or None when it is not well formed."""
    if not s:
        return None
    total, pending, last_unit, zero_seen = 0, None, None, False
    for ch in s:
        if ch in ("零", "〇"):
            if pending is not None:
                return None  # "一零": a digit string, not a numeral
            zero_seen = True
        elif ch in _ZH_DIGITS:
            if pending is not None:
                return None  # "三四": two numbers run together
            pending = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            unit = _ZH_UNITS[ch]
            if last_unit is not None and unit >= last_unit:
                return None
            if pending is None:
                if total:
                    return None
                pending = 1  # "十五", "百"
            total += pending * unit
            pending, last_unit, zero_seen = None, unit, False
        else:
            return None
    if pending is not None:
        if last_unit is not None and last_unit >= 100 and not zero_seen:
            total += pending * last_unit // 10  # colloquial "一百一" = 110
        else:
            total += pending
    return total


def _parse_zh(s: str) -> int | None:
    for big, mult in _ZH_BIG:
        if big in s:
            left, right = s.split(big, 1)
            lv = _parse_zh(left) if left else 1
            if lv is None or lv == 0:
                return None
            rv: int | None
            if not right:
                rv = 0
            elif right[0] in ("零", "〇"):
                rv = _parse_zh(right.lstrip("零〇"))
            elif len(right) == 1 and right in _ZH_DIGITS:
                rv = _ZH_DIGITS[right] * mult // 10  # colloquial "三万五" = 35000
            else:
                rv = _parse_zh(right)
            if rv is None or rv >= mult:
                return None
            return lv * mult + rv
    if s and all(ch in ("零", "〇") for ch in s):
        return 0 if len(s) == 1 else None
    return _parse_small(s)


def _parse_expression(expr: str) -> int | None:
    if expr.isdigit():
        return int(expr)
    if any(ch.isdigit() for ch in expr):
        # Mixed such as "3万": single Arabic digits stand for Chinese digits.
        parts = re.split(r"([0-9]+)", expr)
        rebuilt = []
        for part in parts:
            if part.isdigit():
                if len(part) != 1:
                    return None
                rebuilt.append("零一二三四五六七八九"[int(part)])
            else:
                rebuilt.append(part)
        expr = "".join(rebuilt)
    return _parse_zh(expr)


# A lone 一/两 before a measure word is often the article "a", not a number: 给我一个提示,
# 换一题, 再来一局. It still counts as a number when it is the whole answer ("两个"), or
# an ordinal ("第一个").
_CLASSIFIERS = frozenset("个下点些次局把样起会直定共边般半块位道题轮种回遍句声只条张")
_ARTICLE_BEFORE = frozenset("来换给要出讲说听做玩猜下另这那每")  # 再来一个, 下一个, 另一个


def _is_article(text: str, start: int, end: int) -> bool:
    if text[start:end] not in ("一", "两") or text[end : end + 1] not in _CLASSIFIERS:
        return False
    before = text[start - 1 : start]
    if before == "第":
        return False
    after = text[end + 1 : end + 2]
    return before in _ARTICLE_BEFORE or _is_hanzi(after) if after else before in _ARTICLE_BEFORE


def _number_spans(text: str) -> list[tuple[int, int, int | None]]:
    """(start, end, value) of every number expression in a prenormalised text."""
    masked = _IDIOM_RE.sub(lambda m: "\x00" * len(m.group()), text)
    return [
        (m.start(), m.end(), _parse_expression(m.group()))
        for m in _NUM_RE.finditer(masked)
        if not _is_article(masked, m.start(), m.end())
    ]


def parse_number(text: str) -> int | None:
    """The number a user said ('15', '十五', '两', '一百零三', '第三个', '我猜 7 吧', '１５').

    None when the text holds no number, a malformed one, or several different ones.
    """
    values = {value for _, _, value in _number_spans(_prenormalize(text))}
    if len(values) != 1:
        return None
    return values.pop()


# --------------------------------------------------------------------------------------
# Asking for help
# --------------------------------------------------------------------------------------

_HINT_PHRASES = ("提示", "线索", "给点提醒", "提醒一下", "想不出", "想不起", "不知道是什么")
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
        "刚才说的什么", "刚才说什么",
    )),
    ("again", (
        "再来一局", "再玩一局", "再玩一次", "再来一轮", "再玩一轮", "再来一盘", "再玩一盘", "再开一局",
        "重新开始", "重新来", "重来", "新的一局", "开一局新的", "再来一次", "重新玩",
    )),
    ("next", (
        "下一个", "下一题", "下一道", "下一幅", "下一张", "换一题", "换一个", "换一道", "换个题",
        "换题", "再来一个", "再来一题", "再来一道", "再来一幅", "再出一个", "再出一题", "再出一道",
        "再画一个", "再讲一个", "再猜一个", "另一个", "新的一题", "再来个", "来个新的",
    )),
)  # fmt: skip
# What may stand around a round-control phrase: who asks, how politely, what it is about.
# Anything else left over ("下一个是小猫吗", "不要下一个") means the line is something else.
_ROUND_PADDING = tuple(sorted((
    "我", "我们", "咱们", "你", "小懒", "要", "我要", "想", "我想", "还要", "还想", "给我", "帮我",
    "请", "请你", "麻烦", "能", "能不能", "可以", "可不可以", "你能", "就", "那", "那就", "那么",
    "好", "好吧", "好的", "嗯", "行", "吧", "呀", "啊", "呢", "嘛", "了", "哦", "吗", "啦", "哈",
    "好不好", "行不行", "好吗", "可以吗", "一下", "把", "的", "再", "快", "快点", "赶紧",
    "谜语", "题", "题目", "问题", "谜面", "汤面", "故事", "海龟汤", "汤", "数", "数字", "画", "动物",
    "游戏", "一遍", "刚才", "那个", "这个", "这道题", "这个谜语",
), key=len, reverse=True))  # fmt: skip
# A bare yes: a round request only right after the game offered one (``offered``).
_YES = frozenset((
    "要", "好", "好的", "好啊", "好呀", "好吧", "来吧", "来", "来啊", "来呀", "行", "行啊", "可以",
    "嗯", "嗯嗯", "要的", "要要", "要要要", "当然", "当然要", "当然好", "想", "想要", "还要",
    "继续", "再来", "好好", "好哒", "没问题", "ok", "okay", "yes", "要啊", "要呀", "还想",
    "好耶", "玩", "再玩", "还玩", "我要", "我还要", "我想", "对", "是",
))  # fmt: skip
_YES_TRIM = "呀啊呢了耶哦嘛诶哇啦吧"


def _only_padding(rest: str) -> bool:
    """Can ``rest`` be cut into round padding words (or is it empty)?"""
    reach = [True] + [False] * len(rest)
    for i in range(len(rest)):
        if reach[i]:
            for word in _ROUND_PADDING:
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
        for phrase in phrases:
            at = heard.find(phrase)
            if at >= 0 and _only_padding(heard[:at]) and _only_padding(heard[at + len(phrase) :]):
                return request
    if offered is not None:
        core = heard.rstrip(_YES_TRIM)
        if heard in _YES or core in _YES or core.lstrip("嗯") in _YES:
            return offered
    return None


def spell_number(n: int) -> str:
    """Spell a non-negative integer in Chinese numerals, as it is said (15 → 十五, 103 → 一百零三)."""
    digits = "零一二三四五六七八九"
    if n == 0:
        return "零"
    if n >= 10**8:
        head, rest = divmod(n, 10**8)
        return (
            spell_number(head)
            + "亿"
            + ("零" if 0 < rest < 10**7 else "")
            + (spell_number(rest) if rest else "")
        )
    if n >= 10**4:
        head, rest = divmod(n, 10**4)
        return (
            spell_number(head)
            + "万"
            + ("零" if 0 < rest < 1000 else "")
            + (spell_number(rest) if rest else "")
        )
    out = []
    started = False
    zero_pending = False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d, n = divmod(n, unit)
        if d:
            if zero_pending:
                out.append("零")
                zero_pending = False
            if not (unit == 10 and d == 1 and not started):
                out.append(digits[d])
            out.append(name)
            started = True
        elif started:
            zero_pending = True
    return "".join(out)


# --------------------------------------------------------------------------------------
# Pinyin
# --------------------------------------------------------------------------------------

_INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h",
             "j", "q", "x", "r", "z", "c", "s")  # fmt: skip
_FUZZY_INITIAL = {"zh": "z", "ch": "c", "sh": "s", "n": "l", "r": "l", "f": "h"}
_FUZZY_FINAL = (("ang", "an"), ("eng", "en"), ("ing", "in"))


_GLIDE_FINALS = {"iou": "iu", "uei": "ui", "uen": "un", "ueng": "ong"}


def _split(syl: str) -> tuple[str, str]:
    """Initial and final of a toneless syllable; y/w spellings give their true final."""
    if syl[:1] in ("y", "w") and len(syl) > 1:
        head, rest = syl[0], syl[1:]
        if head == "y" and rest.startswith("u"):
            fin = "v" + rest[1:]  # yu, yue, yuan, yun
        elif head == "y":
            fin = rest if rest.startswith("i") else "i" + rest  # yi, ying; ya → ia
        else:
            fin = rest if rest.startswith("u") else "u" + rest  # wu; wo → uo, weng → ueng
        return "", _GLIDE_FINALS.get(fin, fin)
    for ini in _INITIALS:
        if syl.startswith(ini) and len(syl) > len(ini):
            fin = syl[len(ini) :]
            if ini in ("j", "q", "x") and fin.startswith("u"):
                fin = "v" + fin[1:]  # ju = jü
            return ini, fin
    return "", syl


def _fuzzy_parts(syl: str) -> tuple[str, str]:
    ini, fin = _split(syl)
    ini = _FUZZY_INITIAL.get(ini, ini)
    for long, short in _FUZZY_FINAL:
        if fin.endswith(long):
            fin = fin[: -len(long)] + short
            break
    return ini, fin


def fuzzy_syllable(syllable: str) -> str:
    """Fold a toneless pinyin syllable over common ASR/accent confusions.

    zh→z, ch→c, sh→s, n→l, r→l, f→h; ang→an, eng→en, ing→in (also iang, uang).
    ``fuzzy_syllable('jing') == fuzzy_syllable('jin')``; ``fuzzy_syllable('nan') == 'lan'``.
    """
    ini, fin = _fuzzy_parts(syllable.lower().rstrip("012345"))
    return ini + fin


@dataclass(frozen=True, slots=True)
class _Han:
    """The readings of one character, folded several ways for the comparisons."""

    char: str
    plain: frozenset[str]  # folded, toneless
    toned: frozenset[str]  # folded + tone digit
    initials: frozenset[str]
    finals: frozenset[str]
    primary: str  # folded toneless reading used for the ratio gate
    exact: frozenset[tuple[str, str, str]]  # (folded, raw toneless, tone)


def _make_han(char: str, readings: Sequence[str]) -> _Han:
    plain, toned, inits, fins, exact = set(), set(), set(), set(), set()
    for reading in readings:
        tone = reading[-1] if reading[-1:].isdigit() else "5"
        raw = reading.rstrip("012345")
        ini, fin = _fuzzy_parts(raw)
        plain.add(ini + fin)
        toned.add(ini + fin + tone)
        exact.add((ini + fin, raw, tone))
        if ini:
            inits.add(ini)
        fins.add(fin)
    primary = "".join(_fuzzy_parts(readings[0].rstrip("012345"))) if readings else char
    return _Han(
        char,
        frozenset(plain),
        frozenset(toned),
        frozenset(inits),
        frozenset(fins),
        primary,
        frozenset(exact),
    )


def _imperfection(heard: _Han, want: _Han) -> int:
    """For agreeing characters: 0 same sound, +1 a folded confusion, +1 another tone.

    The neutral tone (5) never counts as another tone.
    """
    best = 3
    for folded, raw, tone in heard.exact:
        for w_folded, w_raw, w_tone in want.exact:
            if folded == w_folded:
                cost = (raw != w_raw) + (tone != w_tone and "5" not in (tone, w_tone))
                best = min(best, cost)
    return best


@lru_cache(maxsize=8192)
def _heard_han(char: str) -> _Han:
    """An utterance character: every reading it may have."""
    readings = pinyin(char, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True)[0]
    readings = [r for r in readings if r and r[0].isalpha() and r.isascii()]
    return _make_han(char, readings)


# --------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------

# A token is (kind, text, payload): kind "h" (hanzi; payload _Han), "w" (Latin word),
# "n" (number; payload int | None).
_Token = tuple[str, str, object]
_TOKEN_RE = re.compile(r"[a-z]+|[0-9]+|[\u3400-\u9fff\uf900-\ufaff〇]")


def _tokens_plain(text: str, *, answer: bool) -> list[_Token]:
    """Text-mode tokens of a prenormalised text (digits spelled out as Chinese)."""
    text = re.sub(r"[0-9]+", lambda m: spell_number(int(m.group())), text)
    tokens: list[_Token] = []
    for m in _TOKEN_RE.finditer(text):
        piece = m.group()
        if piece[0].isascii():
            tokens.append(("w", piece, None))
        else:
            tokens.append(("h", piece, None))
    if answer:
        # The answer's characters take their in-context reading (长颈鹿 → chang).
        for start, end in _han_runs(tokens):
            run = "".join(tok[1] for tok in tokens[start:end])
            readings = lazy_pinyin(run, style=Style.TONE3, neutral_tone_with_five=True)
            if len(readings) != len(run):
                readings = [
                    lazy_pinyin(ch, style=Style.TONE3, neutral_tone_with_five=True)[0] for ch in run
                ]
            for i, reading in zip(range(start, end), readings, strict=True):
                ok = reading[:1].isalpha() and reading.isascii()
                tokens[i] = ("h", tokens[i][1], _make_han(tokens[i][1], [reading] if ok else []))
    else:
        tokens = [(k, t, _heard_han(t) if k == "h" else None) for k, t, _ in tokens]
    return tokens


def _han_runs(tokens: list[_Token]) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, tok in enumerate([*tokens, ("w", "", None)]):
        if tok[0] == "h" and start is None:
            start = i
        elif tok[0] != "h" and start is not None:
            runs.append((start, i))
            start = None
    return runs


def _tokens_numeric(text: str) -> list[_Token]:
    """Number-mode tokens: each number expression is one token carrying its value."""
    tokens: list[_Token] = []
    pos = 0
    for start, end, value in _number_spans(text):
        tokens.extend(_tokens_plain(text[pos:start], answer=False))
        tokens.append(("n", text[start:end], value))
        pos = end
    tokens.extend(_tokens_plain(text[pos:], answer=False))
    return tokens


@dataclass(frozen=True, slots=True)
class _Form:
    """One way to state the answer (the answer itself or an alias), pre-tokenised."""

    tokens: tuple[_Token, ...]
    number: int | None  # the value, when the form is purely a number


@lru_cache(maxsize=1024)
def _form(text: str) -> _Form | None:
    pre = _prenormalize(text)
    compact = normalize(text)
    if not compact:
        return None
    spans = _number_spans(compact)
    if (
        len(spans) == 1
        and spans[0][0] == 0
        and spans[0][1] == len(compact)
        and spans[0][2] is not None
    ):
        return _Form((), spans[0][2])
    return _Form(tuple(_tokens_plain(pre, answer=True)), None)


# --------------------------------------------------------------------------------------
# Padding
# --------------------------------------------------------------------------------------

# Characters that are function words; in the utterance they never stand in for another
# character by sound (so 是吗 is not 马, 不 is not 布).
_PARTICLES = frozenset("的了吗吧呢啊呀嘛哦噢喔嗯呃额哎诶唉哇啦咯么是就个只不没别也还和或跟与及呐哈")
# Fillers, interjections and list words that are also everyday syllables: inside a word of
# two or more syllables they may stand for a character of the same sound (起额 for 企鹅,
# 和马 for 河马, ASR writing the sound with the commonest character), never alone (哇 is
# not 蛙, 额 is not 鹅: a child's "哇！" or "额……" is not an answer).
_SOFT_PARTICLES = frozenset("哦噢喔额哎诶唉哇啦咯哈呐和跟与及")

# Numeral characters in text answers match by value only (三只小猪 is not 四只小猪).
_NUMERALS = {**_ZH_DIGITS, **_ZH_UNITS, "万": 10**4, "亿": 10**8}

# The closed list of what may surround an answer. Negations (不 没 别 不对 不是) and list
# words (还是 或者 和) are deliberately absent.
_PADDING_ZH = """
嗯 呃 额 啊 呀 吖 呢 嘛 吗 么 吧 哦 噢 喔 哎 诶 唉 哇 啦 咯 嘞 哈 呐 了 的 是 对 就 我 那 这 它
嗯嗯 嗯哼 对的 对了 好的 好吧 是的 就是 那就是 我猜 猜 猜是 我猜是 我就猜 我猜一下 猜一下 我来猜
我觉得 觉得 我想 我认为 认为 我选 选 我选择 我说 我说是 我要猜 要猜 我再猜 再猜 我还是猜
我知道 知道 知道了 我知道了 我想想 想想 让我想想 等一下
应该 应该是 可能 可能是 也许 也许是 大概 大概是 估计 估计是 肯定 肯定是 一定是 好像 好像是
答案 答案是 答案就是 我的答案 我的答案是 谜底 谜底是 它是 这是 那是 这个 那个 这个是 那个是
是不是 对不对 会不会 会不会是 是吗 对吗 对吧 是吧 有点像 像是
一个 一只 一头 一条 一匹 一种 个 只 第 号 啦
"""
_PADDING_EN = "i think guess it its is a an the maybe um uh er hmm answer my that thats s oh well ok okay yes right probably must be should"
_PADDING: frozenset[tuple[str, ...]] = frozenset(
    {tuple(p) for p in _PADDING_ZH.split()} | {(w,) for w in _PADDING_EN.split()}
)
_PADDING_BY_FIRST: dict[str, tuple[tuple[str, ...], ...]] = {}
for _p in sorted(_PADDING, key=len, reverse=True):
    _PADDING_BY_FIRST[_p[0]] = (*_PADDING_BY_FIRST.get(_p[0], ()), _p)
_NEGATIONS = ("不", "没", "别", "不是", "不对", "没有", "不会", "还是", "或者", "或")

# How a child names a thing: a closed list of words that may stand right before an answer
# (一只 / 一把 / 这个, 小 / 大 / 胖胖的, 红色的 / 白), and right after it (宝宝, 儿). They
# are not padding: they count only when an answer follows (or precedes) them, so 小的 or
# 一把 alone is no answer, and they never join other characters: 熊猫 keeps 熊 over for
# answer 猫, 龙虾 keeps 龙 over for 虾, 天鹅 keeps 天 over for 鹅.
_MEASURES = "只个头条匹把朵颗根双张本盏面件道块片座辆棵串位支枝顶架艘粒台瓶碗杯群些种"
_COLOURS = ("红", "黄", "蓝", "绿", "白", "黑", "灰", "紫", "粉", "橙", "棕", "花", "彩",
            "粉红", "黑白", "金黄", "五颜六色")  # fmt: skip
_SIZES = ("小", "大", "小小", "大大", "胖", "胖胖", "胖乎乎", "圆", "圆圆", "高", "高高",
          "长长", "矮矮", "肥肥", "毛茸茸", "可爱", "漂亮", "好看", "好大", "好小", "很大",
          "很小", "超大", "超级大", "大大的", "一点点")  # fmt: skip


def _modifier_phrases() -> frozenset[tuple[str, ...]]:
    words: set[str] = set()
    for head in ("一", "这", "那", "这一", "那一"):
        words.update(head + m for m in _MEASURES)
    for colour in _COLOURS:
        words.update((colour, colour + "色", colour + "色的", colour + "的"))
    for size in _SIZES:
        words.update((size, size + "的"))
    return frozenset(tuple(w) for w in words)


_MODIFIERS = _modifier_phrases()
_SUFFIXES: frozenset[tuple[str, ...]] = frozenset(tuple(w) for w in ("宝宝", "宝贝", "儿"))


def _by_first(phrases: frozenset[tuple[str, ...]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Phrases grouped by first character, longest first (the segmenter's lookup)."""
    grouped: dict[str, tuple[tuple[str, ...], ...]] = {}
    for phrase in sorted(phrases, key=len, reverse=True):
        grouped[phrase[0]] = (*grouped.get(phrase[0], ()), phrase)
    return grouped


_MODIFIERS_BY_FIRST = _by_first(_MODIFIERS)
_SUFFIXES_BY_FIRST = _by_first(_SUFFIXES)


def _reduplicated_adjective(texts: Sequence[str], i: int) -> int:
    """Length of an 'AA的' adjective (圆圆的, 亮亮的, 甜甜的) at i, else 0."""
    a = texts[i]
    if (
        len(a) == 1
        and _is_hanzi(a)
        and a not in _PARTICLES
        and a not in _NUMERALS
        and texts[i + 1 : i + 3] == [a, "的"]
    ):
        return 3
    return 0


# --------------------------------------------------------------------------------------
# Span matching
# --------------------------------------------------------------------------------------


def _budget(n: int) -> int:
    return 0 if n <= 2 else 1 if n <= 5 else 2


def _ratio_threshold(n: int) -> float:
    return 75.0 if n <= 5 else 70.0


def _word_close(heard: str, want: str) -> bool:
    """English: equal, a plural, or (for longer words with the same first letter) a typo."""
    if heard == want or heard in (want + "s", want + "es"):
        return True
    n = len(want)
    limit = 0 if n <= 5 else 1 if n <= 7 else 2
    return (
        limit > 0
        and heard[:1] == want[:1]
        and Levenshtein.distance(heard, want, score_cutoff=limit) <= limit
    )


def _sub_cost(heard: _Token, want: _Token, single: bool) -> int:
    """0 agree, 1 near miss, 2 different."""
    if heard[0] != want[0]:
        return 2
    if heard[0] == "w":
        return 0 if _word_close(heard[1], want[1]) else 2
    if heard[1] == want[1]:
        return 0
    if heard[1] in _PARTICLES:
        if single or heard[1] not in _SOFT_PARTICLES or want[0] != "h":
            return 2
        h, w = heard[2], want[2]
        assert isinstance(h, _Han)
        assert isinstance(w, _Han)
        raw = {r for _, r, _ in h.exact} & {r for _, r, _ in w.exact}
        return 0 if raw else 2
    if heard[1] in _NUMERALS or want[1] in _NUMERALS:
        # A numeral only ever matches the same value (两 = 二), never a similar sound.
        return 0 if _NUMERALS.get(heard[1], -1) == _NUMERALS.get(want[1], -2) else 2
    h, w = heard[2], want[2]
    assert isinstance(h, _Han)
    assert isinstance(w, _Han)
    if single:
        return 0 if h.toned & w.toned else 2
    if h.plain & w.plain:
        return 0
    if h.initials & w.initials or h.finals & w.finals:
        return 1
    return 2


def _edit_cost(span: Sequence[_Token], want: Sequence[_Token], limit: int) -> int:
    """Weighted edit distance (substitutions by ``_sub_cost``, indels 1), capped at limit+1."""
    n, m = len(span), len(want)
    single = m == 1
    if n == m and limit == 0:
        for a, b in zip(span, want, strict=True):
            if _sub_cost(a, b, single):
                return 1
        return 0
    prev = list(range(m + 1))
    for i in range(1, n + 1):
        cur = [i] + [0] * m
        for j in range(1, m + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1,
                         prev[j - 1] + _sub_cost(span[i - 1], want[j - 1], single))  # fmt: skip
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return prev[m]


def _imperfection_budget(n: int) -> int:
    return 1 if n <= 2 else n - 1


def _total_imperfection(span: Sequence[_Token], want: Sequence[_Token]) -> int:
    total = 0
    for heard, wanted in zip(span, want, strict=True):
        h, w = heard[2], wanted[2]
        if (
            isinstance(h, _Han)
            and isinstance(w, _Han)
            and heard[1] != wanted[1]
            and _sub_cost(heard, wanted, len(want) == 1) == 0
        ):
            total += _imperfection(h, w)
    return total


def _pinyin_string(tokens: Sequence[_Token], like: Sequence[_Token] = ()) -> str:
    """Folded toneless pinyin; with ``like`` (same length), pick the readings it uses."""
    out = []
    for i, tok in enumerate(tokens):
        han = tok[2]
        if not isinstance(han, _Han):
            out.append(tok[1])
            continue
        other = like[i][2] if len(like) == len(tokens) else None
        if isinstance(other, _Han) and other.primary in han.plain:
            out.append(other.primary)
        else:
            out.append(han.primary)
    return "".join(out)


def _span_ends(tokens: Sequence[_Token], start: int, form: _Form) -> list[int]:
    """Ends j such that tokens[start:j] states the (textual) form."""
    want = form.tokens
    n = len(want)
    ends = []
    if all(t[0] == "w" for t in want):
        # English: compare the joined words, allowing split/merged words.
        target = "".join(t[1] for t in want)
        for k in range(max(1, n - 1), n + 2):
            span = tokens[start : start + k]
            if (
                len(span) == k
                and all(t[0] == "w" for t in span)
                and _word_close("".join(t[1] for t in span), target)
            ):
                ends.append(start + k)
        return ends
    budget = _budget(n)
    lengths = (n - 1, n, n + 1) if n >= 4 else (n,)
    for k in lengths:
        span = tokens[start : start + k]
        if len(span) != k:
            continue
        cost = _edit_cost(span, want, budget)
        if cost > budget:
            continue
        if cost and fuzz.ratio(_pinyin_string(span, want), _pinyin_string(want)) < _ratio_threshold(
            n
        ):
            continue
        if k == n and _total_imperfection(span, want) > _imperfection_budget(n):
            continue
        ends.append(start + k)
    return ends


# Segmenter states (bits of reach[i]): no answer yet / an answer seen, each either free
# (padding may follow) or right after a modifier (only a modifier or an answer may follow).
_FREE, _ANSWERED, _MOD_FREE, _MOD_ANSWERED = 1, 2, 4, 8


def _segments(tokens: Sequence[_Token], answer_ends: Callable[[int], Sequence[int]]) -> bool:
    """Can the tokens be cut into answer spans (>= 1), padding and modifier phrases?

    Modifiers must lead into an answer span and suffixes must follow one. Linear in the
    number of tokens: a constant number of states and phrase lookups per position.
    ``answer_ends(i)`` is asked only for positions the cut can reach: the answer spans
    (pinyin edit costs, most of the work) are not computed where no cut can start, so a
    name tried at every window of a line stops at the first character that is neither
    padding nor the name.
    """
    size = len(tokens)
    texts = [t[1] if t[0] != "n" else "" for t in tokens]
    reach = [0] * (size + 1)
    reach[0] = _FREE
    for i in range(size):
        state = reach[i]
        if not state:
            continue
        for j in answer_ends(i):
            reach[j] |= _ANSWERED
            for suffix in _SUFFIXES_BY_FIRST.get(texts[j] if j < size else "", ()):
                k = j + len(suffix)
                if tuple(texts[j:k]) == suffix:
                    reach[k] |= _ANSWERED
        answered = state & (_ANSWERED | _MOD_ANSWERED)
        modded = (_MOD_ANSWERED if answered else 0) | (
            _MOD_FREE if state & (_FREE | _MOD_FREE) else 0
        )
        free = state & (_FREE | _ANSWERED)
        if free:
            for phrase in _PADDING_BY_FIRST.get(texts[i], ()):
                j = i + len(phrase)
                if tuple(texts[i:j]) == phrase:
                    reach[j] |= free
        for phrase in _MODIFIERS_BY_FIRST.get(texts[i], ()):
            j = i + len(phrase)
            if tuple(texts[i:j]) == phrase:
                reach[j] |= modded
        if n := _reduplicated_adjective(texts, i):
            reach[i + n] |= modded
    return bool(reach[size] & _ANSWERED)


def is_match(utterance: str, answer: str, aliases: Sequence[str] = ()) -> bool:
    """Is the user's raw utterance (from ASR) a statement of this answer?

    Tolerates homophones and accent/ASR confusions (via pinyin), one near-miss syllable
    in longer answers, spoken padding, traditional characters, full-width forms,
    Arabic/Chinese numerals and repetition; rejects negations, hedged lists of several
    answers, and the answer embedded in a longer different word. See the module docstring.
    """
    forms = [f for f in (_form(a) for a in (answer, *aliases) if a) if f is not None]
    if not forms or not utterance:
        return False
    pre = _prenormalize(utterance)
    text_forms = [f for f in forms if f.number is None]
    numbers = {f.number for f in forms if f.number is not None}
    if text_forms:
        tokens = _tokens_plain(pre, answer=False)
        if tokens and _segments(
            tokens, lambda i: sorted({j for f in text_forms for j in _span_ends(tokens, i, f)})
        ):
            return True
    if numbers:
        numeric = _tokens_numeric(pre)
        if _segments(
            numeric, lambda i: [i + 1] if numeric[i][0] == "n" and numeric[i][2] in numbers else []
        ):
            return True
    return False


# --------------------------------------------------------------------------------------
# Lines said to a question with one answer (a riddle, a drawing to name, a word)
# --------------------------------------------------------------------------------------

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
        self.asked = 0
        self.solved = 0

    def draw(self) -> dict[str, Any] | None:
        """The next question (its answer unrevealed), or None when the deck is used up."""
        self.current = self._left.pop(0) if self._left else None
        self.revealed = False
        self.asked += self.current is not None
        return self.current

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

    def solve(self) -> str | None:
        """The player guessed it: counted as solved and revealed; returns the answer."""
        answer = self.reveal()
        self.solved += answer is not None
        return answer
