"""Plain speech for tool and hook results: the spoken fallback.

The offline model answers with it; ``SkillAgent`` falls back to it when the model fails
after tools already acted, so the player still hears what happened. It only ever repeats
strings that tools or hooks returned, plus a few fixed generic lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcade.core.speech import as_sentence, clip_text

__all__ = ["SPEECH_KEYS", "speak_results"]


SPEECH_KEYS = (
    "feedback", "message", "reply", "say", "text", "summary", "result_text",
    "hint", "clue", "question", "riddle", "puzzle", "prompt", "story",
    "提示", "谜面", "题目", "汤面", "汤底", "回答",
)  # fmt: skip
"""Result fields the offline model reads aloud, in this order."""

_LINE_OK = "好的。"
_LINE_SORRY = "抱歉，我没听清，请再说一次。"
_LINE_RIGHT = "答对了！"
_LINE_WRONG = "不对哦，再想想。"


def speak_results(results: list[Any]) -> str:
    """Plain speech for tool results: their speech fields and ``must_say`` texts.

    The offline model answers with it; ``SkillAgent`` falls back to it when the model
    fails after tools already acted, so the player still hears what happened.
    """
    return _clip(_speak_results(results))


def _speak_results(results: list[Any]) -> str:
    if results and all(isinstance(r, Mapping) and r.get("error") for r in results):
        return _LINE_SORRY
    return _speak([r for r in results if not (isinstance(r, Mapping) and r.get("error"))], _LINE_OK)


def _speak(results: list[Any], generic: str) -> str:
    """What to say for hook/tool results: the speech fields, then any ``must_say`` text
    they do not already contain (verbatim), else the generic line before it."""
    must: list[str] = []
    parts: list[str] = []
    for result in results:
        if isinstance(result, str):
            parts.append(result)
        elif isinstance(result, Mapping):
            value = result.get("must_say")
            must.extend([value] if isinstance(value, str) else [v for v in value or () if isinstance(v, str)])
            if isinstance(result.get("correct"), bool) and not _has_speech(result):
                parts.append(_LINE_RIGHT if result["correct"] else _LINE_WRONG)
            for key in SPEECH_KEYS:
                value = result.get(key)
                if isinstance(value, str):
                    parts.append(value)
                elif isinstance(value, list):
                    parts.extend(v for v in value if isinstance(v, str))
    spoken = "".join(as_sentence(p) for p in dict.fromkeys(p.strip() for p in parts) if p)
    missing = [m for m in dict.fromkeys(m.strip() for m in must) if m and m not in spoken]
    if not spoken and not missing:
        return generic
    if not spoken and generic != _LINE_OK:
        spoken = generic
    return spoken + "".join(as_sentence(m) for m in missing)


def _has_speech(result: Mapping[str, Any]) -> bool:
    return any(isinstance(result.get(key), str | list) and result.get(key) for key in SPEECH_KEYS)


def _clip(text: str) -> str:
    return clip_text(text.strip() or _LINE_OK)
