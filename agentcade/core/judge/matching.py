"""``is_match``: does an utterance state the answer? Tokens, padding, spans (see the package)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from agentcade.core.judge.numerals import _ZH_DIGITS, _ZH_UNITS, _number_spans, spell_number
from agentcade.core.judge.pinyin import _Han, _heard_han, _imperfection, _make_han
from agentcade.core.judge.text import _is_hanzi, _prenormalize, normalize

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
        # pypinyin (0.18 s to import) at the first sound match, not at every program's start:
        # a served game's card waits for it otherwise.
        from pypinyin import Style, lazy_pinyin

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

# Numeral characters: two of them agree by value only (三只小猪 is not 四只小猪); a numeral
# and another character agree by sound but are never a near miss (``_sub_cost``).
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
    h, w = heard[2], want[2]
    assert isinstance(h, _Han)
    assert isinstance(w, _Han)
    if heard[1] in _NUMERALS and want[1] in _NUMERALS:
        # Two numerals agree by value only (两 = 二; 十 is not 四 for all their folded sound).
        return 0 if _NUMERALS[heard[1]] == _NUMERALS[want[1]] else 2
    if heard[1] in _NUMERALS or want[1] in _NUMERALS:
        # A numeral and another character agree by sound, as any two characters do (一气风发
        # for 意气风发, 山心二意 for 三心二意), but are never a near miss: 四只小猪 stays
        # apart from 三只小猪 however alike s and s sound.
        if single:
            return 0 if h.toned & w.toned else 2
        return 0 if h.plain & w.plain else 2
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
