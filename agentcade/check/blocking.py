"""Rule ``TOOLS-BLOCKING``: a tool or hook that calls something known to block.

An ``async`` tool that calls ``time.sleep`` stops the event loop, and with it every
session of every game in the process; a plain ``def`` tool runs in a worker thread
(``agentcade.game.worker``) but still holds up its own turn, for 10 s at most. Either way
the family waits in silence. Found by reading the code (AST): a call of one of
:data:`BLOCKING` in a tool's or hook's own body. Pure: no I/O beyond reading the source.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterable
from typing import Any

from agentcade.game.skill_agent import HOOKS

__all__ = ["BLOCKING", "blocking_calls"]

BLOCKING: dict[str, str] = {
    "time.sleep": "await trio.sleep(...)",
    "sleep": "await trio.sleep(...)",
    "input": "ask through the game's reply instead",
    "requests": "httpx.AsyncClient in an async tool",
    "urllib.request.urlopen": "httpx.AsyncClient in an async tool",
    "urlopen": "httpx.AsyncClient in an async tool",
    "subprocess": "await trio.run_process(...)",
    "os.system": "await trio.run_process(...)",
    "socket.create_connection": "await trio.open_tcp_stream(...)",
}
"""Dotted call names (or their first part) that block -> what to use instead."""


def blocking_calls(fn: Callable[..., Any]) -> list[tuple[str, str]]:
    """``(call, instead)`` for each blocking call in ``fn``'s source, in order.

    A function whose source cannot be read (built in C, made at run time) has none.
    """
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(fn)))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return []
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            for key in (name, name.split(".")[0]):
                if key in BLOCKING:
                    found.append((name, BLOCKING[key]))
                    break
    return found


def tool_and_hook_functions(agent_cls: type, tools: Iterable[Any]) -> list[tuple[str, Callable[..., Any]]]:
    """The game's own code the runtime calls during a turn: its tools and its hooks."""
    out: list[tuple[str, Callable[..., Any]]] = [(f"tool {t.name}", t.fn) for t in tools]
    for hook in HOOKS:
        fn = getattr(agent_cls, hook, None)
        if fn is not None and getattr(fn, "__module__", "").split(".")[0] != "agentcade":
            out.append((hook, fn))
    return out


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""
