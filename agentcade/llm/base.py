"""What every model is: the ``ChatModel`` protocol and the ``ModelReply`` it answers with.

Messages and tool schemas are in OpenAI chat-completions format. A model answers one
request with a ``ModelReply``: text, tool calls, or both.

Errors: ``ModelError`` (``agentcade.core.errors``) for any failure of the model: HTTP status,
connection, timeout, garbage body, no choices, malformed tool calls. Short message, never
the API key.

Cancellation (``trio.Cancelled``) is never caught: cancelling a turn cancels the request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentcade.core.errors import ModelError

__all__ = ["ChatModel", "ModelError", "ModelReply", "StreamingChatModel", "TextSink", "ToolCall"]

TextSink = Callable[[str], Awaitable[None]]
"""Receives each piece of a reply's text as the model generates it."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is JSON text (maybe invalid)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """The model's answer to one request."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()


class ChatModel(Protocol):
    """What ``SkillAgent`` needs from a model."""

    name: str

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Answer ``messages`` with ``tools`` available.

        Raises:
            ModelError: any failure of the model. Cancellation propagates.
        """
        ...

    async def aclose(self) -> None:
        """Release what the model holds (its HTTP client); once, when it is no longer used.

        Every model has it (a model with nothing to release just returns), so callers
        close any model the same way.
        """
        ...



@runtime_checkable
class StreamingChatModel(Protocol):
    """A ``ChatModel`` that can hand over its text while it generates it.

    ``SkillAgent`` uses it to speak each finished sentence at once; a model without it is
    called with ``complete`` and its reply is spoken when it is whole.
    """

    name: str

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """As ``ChatModel.complete``."""
        ...

    async def complete_streaming(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: TextSink
    ) -> ModelReply:
        """As ``complete``, awaiting ``on_text`` with each text delta as it arrives.

        The returned reply holds the whole text too. Raises ``ModelError``; cancellation
        propagates.
        """
        ...

    async def aclose(self) -> None:
        """As ``ChatModel.aclose``."""
        ...


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
