"""Chat models: the ``ChatModel`` protocol, the OpenAI-compatible client and the offline model.

One module per job:

* ``base``: ``ChatModel``, ``ModelReply``, ``ToolCall``, ``ModelError`` (what every model is);
* ``client``: ``OpenAIChatModel`` over ``openai.AsyncOpenAI``, and the shared client pool;
* ``stream``: assembling a streamed completion into one ``ModelReply``;
* ``offline``: ``OfflineModel``, the deterministic stand-in when no model is configured;
* ``spoken``: ``speak_results``, plain speech for tool results (the spoken fallback).

Cancellation (``trio.Cancelled``) is never caught: cancelling a turn cancels the request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcade.core.settings import LLMSettings
from agentcade.llm.base import (
    ChatModel,
    ModelError,
    ModelReply,
    StreamingChatModel,
    TextSink,
    ToolCall,
)
from agentcade.llm.offline import MAX_TOOL_CALLS, OfflineModel
from agentcade.llm.spoken import SPEECH_KEYS, speak_results

if TYPE_CHECKING:
    from agentcade.llm.client import OpenAIChatModel

__all__ = [
    "MAX_TOOL_CALLS",
    "SPEECH_KEYS",
    "ChatModel",
    "ModelError",
    "ModelReply",
    "OfflineModel",
    "OpenAIChatModel",
    "StreamingChatModel",
    "TextSink",
    "ToolCall",
    "make_model",
    "offline_notice",
    "speak_results",
]


def __getattr__(name: str) -> object:
    """``OpenAIChatModel`` is imported when first asked for: the openai package takes
    0.4 s to import, which a game served offline, ``check`` or ``--help`` never need."""
    if name == "OpenAIChatModel":
        from agentcade.llm.client import OpenAIChatModel

        return OpenAIChatModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def offline_notice() -> str:
    """One line for the CLI when the offline model is used."""
    return "未配置大模型（LLM_BASE_URL / LLM_API_KEY），使用离线模型。"


def make_model(
    settings: LLMSettings, *, stream: bool = False, response_format: dict[str, Any] | None = None
) -> ChatModel:
    """``OfflineModel`` when ``settings.offline``, else ``OpenAIChatModel``."""
    if settings.offline:
        return OfflineModel()
    from agentcade.llm.client import OpenAIChatModel

    return OpenAIChatModel(settings, stream=stream, response_format=response_format)
