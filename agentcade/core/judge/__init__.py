"""Tolerant answer judging: did the player (heard through speech recognition) say the answer?

One home for every game: ``is_match(utterance, answer, aliases)``, ``parse_number(text)``
and ``normalize(text)``. Pure: no I/O, no trio, no per-answer special cases.

A package by concern, behind the names below: ``text`` (normalisation), ``numerals``
(``parse_number``, ``spell_number``), ``pinyin`` (readings and their folds), ``matching``
(``is_match``), ``intents`` (``help_request``, ``round_request``, ``small_talk``, ``rules_question``,
``asks_verdict``; ``intents.aside`` for the main agent) and ``deck``
(``judge_guess``, ``looks_like_guess``, ``Deck``).

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
   two numeral characters agree by value only (``两`` = ``二``, but ``四只小猪`` is not
   ``三只小猪`` and ``十`` is not ``四``), while a numeral and another character agree by
   sound like any two characters (``一气风发`` / ``衣心一意`` / ``山心二意`` state
   ``意气风发`` / ``一心一意`` / ``三心二意``) but are never a near miss (below).

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

from agentcade.core.judge.deck import Deck, Verdict, judge_guess, looks_like_guess
from agentcade.core.judge.intents import (
    RoundRequest,
    asks_restart,
    asks_verdict,
    help_request,
    round_request,
    rules_question,
    small_talk,
)
from agentcade.core.judge.matching import is_match
from agentcade.core.judge.numerals import parse_number, spell_number
from agentcade.core.judge.pinyin import fuzzy_syllable
from agentcade.core.judge.text import normalize

__all__ = [
    "Deck",
    "RoundRequest",
    "Verdict",
    "asks_restart",
    "asks_verdict",
    "fuzzy_syllable",
    "help_request",
    "is_match",
    "judge_guess",
    "looks_like_guess",
    "normalize",
    "parse_number",
    "round_request",
    "rules_question",
    "small_talk",
    "spell_number",
]
