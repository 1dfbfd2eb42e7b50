"""``OfflineModel``: the deterministic stand-in used when no model is configured.

Used by ``check`` and CI too: it picks at most one tool per user input from the tool
schemas by generic rules and otherwise repeats what tools and hooks returned. It never
invents content.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import trio

from agentcade.core.judge import help_request, parse_number, round_request, small_talk
from agentcade.llm.base import ModelReply, ToolCall
from agentcade.llm.spoken import (
    _LINE_SORRY,
    _clip,
    _speak,
    _speak_results,
)

__all__ = ["MAX_TOOL_CALLS", "OfflineModel"]

# Theory of operation. A round is everything after the last user message. The offline
# model looks at the round and at the tool schemas only:
#
#   round has tool results -> speak them (must_say verbatim, else speech-like fields)
#   user event start       -> speak the hook result; without one, call a "start" tool
#   user event end         -> speak the hook result; never calls tools
#   user event message     -> with a hook result (on_message judged it): speak it; else
#                             one tool by the first rule that matches:
#                             number + tool with one required integer parameter,
#                             hint / give-up / next intent (judge.help_request,
#                             judge.round_request, or the words below) + matching tool,
#                             small talk (judge.small_talk): a chat line, no tool;
#                             a tool that reads the user's own words (原话);
#                             else a generic line
#
# So a round has at most one tool call, well under MAX_TOOL_CALLS. The model only ever
# repeats strings that tools or hooks returned, plus a few fixed generic lines.

MAX_TOOL_CALLS = 3
"""Tool results per round after which the offline model always speaks."""

_LINE_GREET = "你好，我们开始吧！"
_LINE_START = "好的，我们开始吧。"
_LINE_BYE = "好的，下次再玩。"
_LINE_LISTEN = "嗯，我在听，你可以接着说。"
_LINE_CHAT = "嗯嗯，跟你聊天真开心！"

_START_WORDS = ("start", "begin", "new", "开始", "开局", "出题", "新的一", "新题")
_HINT_WORDS = ("提示", "hint", "线索", "clue")
_GIVE_UP_WORDS = ("放弃", "不猜了", "答案是什么", "公布", "告诉我答案", "揭晓", "认输")
_GIVE_UP_TOOL_WORDS = ("放弃", "公布", "揭晓", "give up", "give_up", "giveup", "reveal", "surrender")
_NEXT_WORDS = ("下一", "再来", "换一", "next", "另一", "新的")
_NEXT_TOOL_WORDS = ("next", "new", "下一", "换一", "再来", "新的", "新题", "出题")
_OWN_WORDS = ("原话",)


class OfflineModel:
    """Deterministic, network-free ``ChatModel`` (see the rules above).

    Input conventions (``SkillAgent``): user messages are JSON
    ``{"event": "start|message|end", "user_text": "...", "result": {...}}``; tool results
    are ``{"role": "tool", "tool_call_id": ..., "content": JSON}``.
    """

    name = "offline"

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Decide (``decide``), after one checkpoint like any async call."""
        await trio.lowlevel.checkpoint()
        return self.decide(messages, tools)

    async def aclose(self) -> None:
        """Nothing to release."""
        await trio.lowlevel.checkpoint()

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """The pure decision: same messages and tools, same reply."""
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        round_messages = messages[last_user + 1 :]
        results = _tool_results(round_messages, messages)
        if results or round_messages:
            # After tool results (or anything else following the user input): speak.
            return ModelReply(_clip(_speak_results(results)))
        if last_user < 0:
            return ModelReply(_LINE_GREET)
        event = _parse_event(messages[last_user].get("content"))
        kind = event["event"]
        specs = [spec for spec in (_ToolSpec.of(tool) for tool in tools) if spec is not None]
        if kind in ("start", "end"):
            if event.get("result") is not None:
                generic = _LINE_START if kind == "start" else _LINE_BYE
                return ModelReply(_clip(_speak([event["result"]], generic)))
            if kind == "start" and (tool := _first(specs, _START_WORDS, free=True)):
                return self._call(messages, tool.name, {})
            return ModelReply(_LINE_GREET if kind == "start" else _LINE_BYE)
        if event.get("result") is not None:  # the game's on_message judged the line
            return ModelReply(_clip(_speak([event["result"]], _LINE_LISTEN)))
        return self._on_message(messages, specs, str(event.get("user_text") or ""))

    def _on_message(self, messages: list[dict[str, Any]], specs: list[_ToolSpec], text: str) -> ModelReply:
        text = text.strip()
        if not text:
            return ModelReply(_LINE_SORRY)
        number = parse_number(text)
        if number is not None:
            for spec in specs:
                if spec.integer_param is not None:
                    return self._call(messages, spec.name, {spec.integer_param: number})
        lowered = text.lower()
        asked = help_request(text)
        round_asked = round_request(text)
        for said, user_words, tool_words in (
            (asked == "hint", _HINT_WORDS, _HINT_WORDS),
            (asked == "give_up", _GIVE_UP_WORDS, _GIVE_UP_TOOL_WORDS),
            (round_asked in ("next", "again"), _NEXT_WORDS, _NEXT_TOOL_WORDS),
        ):
            wanted = said or any(word in lowered for word in user_words)
            if wanted and (tool := _first(specs, tool_words, free=True)):
                return self._call(messages, tool.name, {})
        if small_talk(text):
            return ModelReply(_LINE_CHAT)  # said to the host: chat, never a verdict
        for spec in specs:
            if spec.free and any(word in spec.description for word in _OWN_WORDS):
                return self._call(messages, spec.name, {})
        return ModelReply(_LINE_LISTEN)

    @staticmethod
    def _call(messages: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> ModelReply:
        made = sum(len(m.get("tool_calls") or ()) for m in messages if m.get("role") == "assistant")
        call = ToolCall(
            id=f"offline_{made + 1}", name=name, arguments=json.dumps(arguments, ensure_ascii=False)
        )
        return ModelReply(text="", tool_calls=(call,))


@dataclass(frozen=True)
class _ToolSpec:
    name: str
    description: str
    free: bool  # no required parameters
    integer_param: str | None  # the only required parameter, and it is an integer

    @classmethod
    def of(cls, tool: Mapping[str, Any]) -> _ToolSpec | None:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return None
        name = function["name"]
        if name == "say":  # SkillAgent's built-in "say something now" tool
            return None
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = list(parameters.get("required") or [])
        integer_param = None
        if len(required) == 1 and _is_integer(properties.get(required[0], {})):
            integer_param = required[0]
        return cls(name, str(function.get("description") or ""), not required, integer_param)

    def mentions(self, words: Iterable[str]) -> bool:
        haystack = f"{self.name.lower().replace('_', ' ')} {self.name.lower()} {self.description.lower()}"
        return any(word in haystack for word in words)


def _is_integer(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") == "integer":
        return True
    return any(_is_integer(option) for option in schema.get("anyOf", ()) if isinstance(option, Mapping))


def _first(specs: list[_ToolSpec], words: Iterable[str], *, free: bool) -> _ToolSpec | None:
    words = tuple(words)
    # Names first: a tool named get_hint beats one whose description mentions hints.
    for spec in specs:
        if (spec.free or not free) and any(w in spec.name.lower() for w in words):
            return spec
    for spec in specs:
        if (spec.free or not free) and spec.mentions(words):
            return spec
    return None

def _parse_event(content: object) -> dict[str, Any]:
    text = _text_of(content)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("event") in ("start", "message", "end"):
        return data
    return {"event": "message", "user_text": text}



def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""



def _tool_results(round_messages: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[Any]:
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or ()
        if isinstance(call, Mapping)
    }
    results = []
    for message in round_messages:
        if message.get("role") != "tool" or names.get(message.get("tool_call_id")) == "say":
            continue
        text = _text_of(message.get("content"))
        try:
            results.append(json.loads(text))
        except ValueError:
            results.append({"error": text})  # tool output we cannot read: treat as a failure
    return results[-MAX_TOOL_CALLS:] if len(results) > MAX_TOOL_CALLS else results

