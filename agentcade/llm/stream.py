"""Assembling a streamed chat completion (SSE ``data:`` chunks) into one ``ModelReply``.

Pure: chunks in, a reply or a ``ModelError`` out. ``OpenAIChatModel`` feeds it the body.
"""

from __future__ import annotations

import json
from typing import Any

from agentcade.llm.base import ModelError, ModelReply, ToolCall, _short


class _StreamAssembler:
    """Collects streamed chat-completion chunks (dicts) into one ``ModelReply``."""

    def __init__(self) -> None:
        self.chunks = 0
        self.done = False
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self._taken = 0

    def take_text(self) -> str:
        """The text that arrived since the last call (for speaking while it streams)."""
        text = "".join(self.text)
        new, self._taken = text[self._taken :], len(text)
        return new

    def feed(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self.done = True
            return
        if self.done:
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            raise ModelError("model returned a malformed stream chunk") from None
        if not isinstance(chunk, dict):
            raise ModelError("model returned a malformed stream chunk")
        if chunk.get("error"):
            error = chunk["error"]
            detail = error.get("message") if isinstance(error, dict) else error
            raise ModelError(f"model stream failed: {_short(str(detail))}")
        self.chunks += 1
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content is not None and not isinstance(content, str):
                raise ModelError("model returned non-text content")
            if content:
                self.text.append(content)
            for part in delta.get("tool_calls") or ():
                if not isinstance(part, dict):
                    raise ModelError("model returned a malformed tool call")
                index = part.get("index", 0)
                call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
                if part.get("id"):
                    call["id"] = str(part["id"])
                function = part.get("function") or {}
                if function.get("name"):
                    call["name"] += str(function["name"])
                arguments = function.get("arguments")
                if arguments is not None:
                    if not isinstance(arguments, str):
                        raise ModelError("model returned tool-call arguments that are not a string")
                    call["arguments"].append(arguments)

    def reply(self) -> ModelReply:
        if not self.chunks:  # e.g. a body without SSE "data:" lines
            raise ModelError("model returned an empty or malformed stream")
        tool_calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call["name"]:
                raise ModelError("model returned a tool call without a name")
            tool_calls.append(
                ToolCall(
                    id=call["id"] or f"call_{index}",
                    name=call["name"],
                    arguments="".join(call["arguments"]),
                )
            )
        return ModelReply(text="".join(self.text), tool_calls=tuple(tool_calls))
