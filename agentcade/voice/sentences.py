"""Text to spoken sentences: the unit TTS synthesises and the robot plays (pure).

A reply is said sentence by sentence so the first sound comes after one sentence's
synthesis, not the whole reply's. Sentences end where ``agentcade.core.speech``'s one
rule ends them (``split_sentences``), and at a line break;
a piece with nothing speakable (only punctuation) joins its neighbour; a very long
sentence is cut at a comma so one clip never takes long to synthesise.
"""

from __future__ import annotations

import re

from agentcade.core.speech import split_sentences as _core_sentences

__all__ = ["MAX_SENTENCE", "split_sentences"]

MAX_SENTENCE = 80
"""Characters; a longer sentence is cut after a comma (or hard) near this length."""

_SPEAKABLE = re.compile(r"\w")
_COMMAS = "，,、：:"


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, stripped; none for empty text."""
    pieces = [piece for line in text.splitlines() for piece in _core_sentences(line)]
    out: list[str] = []
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if not _SPEAKABLE.search(piece):
            if out:
                out[-1] += piece
            continue
        out.extend(_cut(piece))
    return out


def _cut(sentence: str) -> list[str]:
    parts: list[str] = []
    while len(sentence) > MAX_SENTENCE:
        head = sentence[:MAX_SENTENCE]
        cut = max(head.rfind(c) for c in _COMMAS)
        cut = cut + 1 if cut >= MAX_SENTENCE // 3 else MAX_SENTENCE
        parts.append(sentence[:cut].strip())
        sentence = sentence[cut:].strip()
    if sentence:
        parts.append(sentence)
    return parts
