"""``@tool``: a game's methods as the model's tools.

The guide's import path (``agentcade.tools``); the code lives in ``agentcade.core.tools``.
"""

from agentcade.core.tools import (
    ALREADY_JUDGED as ALREADY_JUDGED,
    BUILTIN_TOOL_NAMES as BUILTIN_TOOL_NAMES,
    Tool as Tool,
    ToolDefinitionError as ToolDefinitionError,
    collect_tools as collect_tools,
    failure_sentence as failure_sentence,
    tool as tool,
)

__all__ = [
    "ALREADY_JUDGED",
    "BUILTIN_TOOL_NAMES",
    "Tool",
    "ToolDefinitionError",
    "collect_tools",
    "failure_sentence",
    "tool",
]
