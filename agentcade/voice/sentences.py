"""Text to spoken sentences: the unit TTS synthesises and the robot plays (pure).

A reply is said sentence by sentence so the first sound comes after one sentence's
synthesis, not the whole reply's. Sentences end where ``agentcade.core.speech``'s one
rule ends them (``split_sentences``), and at a line break;
a piece with nothing speakable (only punctuation) joins its neighbour; a very long
sentence is cut at a comma so one clip never takes long to synthesise.

:func:`speech_pieces` also cuts the first sentence after its first clause: a verdict's
"不对哦，" is synthesised (and heard) while the rest of its sentence is — the child hears the
answer one clause's synthesis after the reply is ready, not one sentence's.
"""

from __future__ import annotations

import re

from agentcade.core.speech import split_sentences as _core_sentences

__all__ = ["MAX_SENTENCE", "speech_pieces", "split_sentences"]

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


FIRST_CLAUSE_MIN = 2
"""Speakable characters a first clause needs to be said alone (好， stays with its sentence)."""
REST_MIN = 4
"""Speakable characters the rest of the first sentence needs for the cut to be worth a clip."""


def speech_pieces(text: str) -> list[str]:
    """What the robot says of ``text``, one clip each: its sentences, the first cut after its
    first clause (see the module docstring)."""
    pieces = split_sentences(text)
    if pieces:
        first = pieces[0]
        for i, char in enumerate(first):
            if char in _COMMAS:
                head, rest = first[:i + 1], first[i + 1:].strip()
                if (len(_SPEAKABLE.findall(head)) >= FIRST_CLAUSE_MIN
                        and len(_SPEAKABLE.findall(rest)) >= REST_MIN):
                    pieces[0:1] = [head, rest]
                break
    return pieces


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
