"""Numbers a player said: ``parse_number`` (十五, 两, 一百零三, 3万, 第三个), ``spell_number``,
and ``number_may_go_on`` (十 before its 五).

Characters are read as written: ``是五`` is 5 and never ``十五`` (see ``parse_number``).
"""

from __future__ import annotations

import re

from agentcade.core.judge.text import _is_hanzi, _prenormalize, normalize

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


def _said_twice(expr: str) -> int | None:
    """The number of an expression that does not parse as one, said twice over (十一十一,
    七七: a child repeating a guess, issue 54); None when its halves differ."""
    half, odd = divmod(len(expr), 2)
    if odd or not half or expr[:half] != expr[half:]:
        return None
    return _parse_expression(expr[:half])


def _number_spans(text: str) -> list[tuple[int, int, int | None]]:
    """(start, end, value) of every number expression in a prenormalised text."""
    masked = _IDIOM_RE.sub(lambda m: "\x00" * len(m.group()), text)
    spans = []
    for m in _NUM_RE.finditer(masked):
        if _is_article(masked, m.start(), m.end()):
            continue
        expr = m.group()
        value = _parse_expression(expr)
        if value is None and not expr.isdigit():
            value = _said_twice(expr)
        spans.append((m.start(), m.end(), value))
    return spans


def parse_number(text: str) -> int | None:
    """The number a user said ('15', '十五', '两', '一百零三', '第三个', '我猜 7 吧', '１５').

    None when the text holds no number, a malformed one, or several different ones.

    Characters are read as written, never by sound: ``是五`` (and ``石五``) is 5,
    though a recogniser may write 是 for a spoken 十 (shi). Decided (issue 38): "是五" is
    how a child says "it's five", far more often than a misheard 十五, and reading 是 as 十
    would turn every "是五吗" into 15. A number game says the number it heard back ("五？
    小了"), so a misheard 十五 is corrected by the child's next line, never silently
    judged. ``is_match`` does the same for a number answer: ``是五`` states 5, not 15.
    """
    values = {value for _, _, value in _number_spans(_prenormalize(text))}
    if len(values) != 1:
        return None
    return values.pop()


def number_may_go_on(text: str) -> bool:
    """Whether ``text`` ends on a round number whose units may still come: 十, 二十, 一百
    (十……五 is 15 said with a pause; 十五 and 十个 are finished). A listener that acts on a
    number before the silence window ends waits the window for these."""
    bare = normalize(text)
    spans = _number_spans(_prenormalize(bare))
    if not spans:
        return False
    _start, end, value = spans[-1]
    return end == len(bare) and value is not None and bare[end - 1] in "十百千"


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
