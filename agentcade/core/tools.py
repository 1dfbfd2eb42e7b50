"""``@tool``: a game method the model may call, with a JSON schema built from its type hints.

A game declares its tools as methods of its ``SkillAgent`` subclass::

    @tool("用户猜一个数。")
    def guess(self, turn, number: Annotated[int, Field(ge=1, le=20, description="用户猜的数")]):
        ...

``@tool`` turns the function into a ``Tool`` once, when the class body runs, so every mistake a
game author can make in a declaration (a bad name, a missing annotation, ``*args``, an
unsupported type) raises ``ToolDefinitionError`` while the game loads, and ``chat`` and
``check`` show it at start-up. ``collect_tools`` then gathers a class's tools and rejects
duplicate names, including the built-in ``say``.

Theory of operation (the pipeline follows the OpenAI Agents SDK's ``function_schema``):

1. Inspect the signature: ``self`` first; ``turn`` (anywhere after it) is injected by the
   runtime and hidden from the model; every other parameter is filled by the model.
2. Resolve each model-filled parameter's hint with ``typing.get_type_hints`` (games use
   ``from __future__ import annotations``, so hints are strings in the function's module) and
   check it is one we can describe: ``str``, ``int``, ``float``, ``bool``, ``Literal[...]``,
   ``Annotated[T, Field(...)]``, ``T | None`` and ``list[T]``.
3. Build a pydantic model ``<name>_args`` with ``extra="forbid"``. Fields get internal names
   and the parameter name as alias, so a parameter may be called ``json`` or ``schema``
   without shadowing ``BaseModel`` attributes.
4. Build the JSON schema from the model: no titles, ``required`` always present,
   ``additionalProperties: false``.

At run time ``Tool.invoke`` validates the model's arguments and calls the method. Three
outcomes go back to the model as a result dict, never as an exception: invalid arguments
(the method is not called), an exception raised by the method, and the method's own result.
Cancellation (``trio.Cancelled``) is a ``BaseException`` and passes through: the one
``except Exception`` here is the tool-error boundary of this layer. ``SystemExit`` and
``KeyboardInterrupt`` raised by the game's code (``exit()`` in a tool) become
``GameCodeError``: they would end the whole server, and the host fails the session instead.

Sync tools run through the caller's ``run_sync`` (the game layer runs them in a worker
thread with a time bound, so ``time.sleep(20)`` in one game's tool freezes no other
session); the caller's task waits meanwhile, so the per-session state and the current
``turn`` are never touched by two threads at once. Without ``run_sync`` they run inline.

The hints a parameter may have are :mod:`agentcade.core.tool_hints`'s.

Pure Python and pydantic: no I/O, no trio.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Concatenate, Generic, Protocol, final, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from typing_extensions import ParamSpec, TypeVar

from agentcade.core.errors import GameCodeError, ToolDefinitionError
from agentcade.core.judge import small_talk
from agentcade.core.tool_hints import SUPPORTED, HintsOf, NoTitles, Unsupported, prepare_hint
from agentcade.core.trace import caller_scope

__all__ = [
    "ALREADY_JUDGED",
    "BUILTIN_TOOL_NAMES",
    "Tool",
    "ToolDefinitionError",
    "collect_tools",
    "failure_sentence",
    "tool",
]

log = logging.getLogger(__name__)

BUILTIN_TOOL_NAMES = frozenset({"say"})
"""Tools the runtime gives every game; a game's own tool may not use these names."""

TURN_PARAMETER = "turn"
ALREADY_JUDGED: Mapping[str, str] = MappingProxyType({"outcome": "already_judged"})
"""What a judging tool answers for a line already judged (``Tool.judges``)."""
SMALL_TALK: Mapping[str, str] = MappingProxyType({"outcome": "small_talk"})
"""What a judging tool answers, without running, for small talk (``judge.small_talk``)."""
"""The parameter the runtime fills with the current ``Turn``; the model never sees it."""

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# The OpenAI chat-completions limit on function names; other providers accept a superset.

P = ParamSpec("P", default=...)
R = TypeVar("R", default=Any, covariant=True)
# A tool keeps its method's signature, so game code calling ``self.get_hint()`` gets its
# declared return type; bare ``Tool`` (the defaults) is any tool.
_P = ParamSpec("_P")
_R = TypeVar("_R")


# --- Tool ----------------------------------------------------------------------------------

SyncRunner = Callable[[Callable[[], Any]], Awaitable[Any]]
"""How ``Tool.invoke`` calls a sync method: ``await run_sync(call)`` gives its result."""


@final
class Tool(Generic[P, R]):
    """A method the model may call. Created by ``@tool``; read-only after that.

    On the class, the attribute is this ``Tool``; on an instance it is the bound method, so
    game code still calls ``self.get_hint()`` directly (that call skips validation).
    """

    __slots__ = (
        "_fields",
        "_model",
        "description",
        "fn",
        "is_async",
        "judges",
        "name",
        "parameters",
        "wants_turn",
    )

    name: str
    """What the model calls the tool: letters, digits, ``_`` and ``-``."""
    description: str
    """Sent to the model verbatim."""
    parameters: dict[str, Any]
    """JSON schema of the model-filled parameters (``turn`` is not among them)."""
    wants_turn: bool
    """The method has a ``turn`` parameter, passed by the runtime."""
    is_async: bool
    """The method is ``async def``; ``invoke`` awaits it."""
    fn: Callable[..., Any]
    """The decorated function."""
    judges: bool
    """A judging tool (``@tool(..., judges=True)``): one verdict per line the player said.
    ``invoke`` answers ``ALREADY_JUDGED`` without calling it once ``turn.judged`` is set (by
    ``on_message``, by another judging tool, or from the start on ``start``/``end``),
    ``SMALL_TALK`` without calling it for a line ``judge.small_talk`` calls small talk
    ("你叫什么名字": nothing to judge, the line stays unjudged), and sets ``turn.judged``
    before calling it."""

    def __init__(
        self,
        fn: Callable[Concatenate[Any, P], R],
        description: str,
        name: str | None,
        *,
        judges: bool = False,
    ) -> None:
        where = _where(fn)
        if not inspect.isfunction(fn):
            raise ToolDefinitionError(
                f"{where}: @tool decorates a plain method (def or async def), got "
                f"{type(fn).__name__}; put @tool above any other decorator"
            )
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise ToolDefinitionError(
                f"{where}: a tool cannot be a generator; return a dict instead of yielding"
            )
        if not isinstance(description, str) or not description.strip():
            raise ToolDefinitionError(
                f'{where}: the @tool description must be a non-empty string, e.g. @tool("取得下一条提示。")'
            )
        tool_name = fn.__name__ if name is None else name
        if not isinstance(tool_name, str) or not _NAME_RE.match(tool_name):
            raise ToolDefinitionError(
                f"{where}: tool name {tool_name!r} may only use letters, digits, '_' and '-' "
                f'(1 to 64 characters); rename the method or pass name="...", e.g. '
                f'@tool("...", name="give_up")'
            )
        self.fn = fn
        self.judges = judges
        self.name = tool_name
        self.description = description.strip()
        self.is_async = inspect.iscoroutinefunction(fn)
        self.wants_turn, self._fields, self._model = _build_model(fn, tool_name, where)
        self.parameters = _schema_of(self._model)

    # Descriptor: game code calls its tools as ordinary methods.
    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Tool[P, R]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> Callable[P, R]: ...
    def __get__(self, instance: object, owner: type | None = None) -> Tool[P, R] | Callable[P, R]:
        if instance is None:
            return self
        return types.MethodType(self.fn, instance)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function unchanged, e.g. ``GameAgent.get_hint(agent)``."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<Tool {self.name!r} of {_where(self.fn)}>"

    def openai_schema(self) -> dict[str, Any]:
        """The tool in OpenAI chat-completions format (a fresh copy each call)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json.loads(json.dumps(self.parameters)),
            },
        }

    async def invoke(
        self,
        owner: object,
        turn: object | None,
        arguments: str | Mapping[str, Any] | None,
        *,
        run_sync: SyncRunner | None = None,
    ) -> dict[str, Any]:
        """Validate the model's arguments, call the method, and describe the outcome.

        Args:
            owner: the game instance (``self`` of the method).
            turn: the current turn, passed as ``turn=`` if the method asks for it.
            arguments: the model's arguments: JSON text, an already parsed dict, or
                ``None`` / ``""`` / ``"null"`` for none.
            run_sync: how a sync method is called (``await run_sync(call)``); inline
                when None.

        Returns:
            The method's dict unchanged; ``{"ok": True}`` for ``None``; ``{"result": value}``
            for any other JSON value. ``{"error": "Invalid arguments for <name>: ..."}`` if
            the arguments do not fit (the method is not called), and
            ``{"error": failure_sentence(name, ...)}`` if the method raised an ``Exception``
            or returned something that is not JSON: one short sentence the model can act
            on (the exception itself goes to the log).

        Raises:
            GameCodeError: the method raised ``SystemExit`` or ``KeyboardInterrupt``.
            BaseException: cancellation is never caught.
        """
        try:
            values = self._validate(arguments)
        except _InvalidArguments as exc:
            return {"error": f"Invalid arguments for {self.name}: {exc}"}
        if self.judges and turn is not None:
            # The model may not judge the same words twice, nor words the player never said.
            if getattr(turn, "judged", False):
                return dict(ALREADY_JUDGED)
            if small_talk(str(getattr(turn, "text", ""))):
                return dict(SMALL_TALK)  # said to the host: no verdict, the model chats
            setattr(turn, "judged", True)  # noqa: B010 - a Turn; the core knows no Turn type
        if self.wants_turn:
            values[TURN_PARAMETER] = turn
        try:
            with caller_scope(self.name):  # a worker thread runs in a copy of this context
                if self.is_async:
                    result = await self.fn(owner, **values)
                elif run_sync is not None:
                    result = await run_sync(lambda: self.fn(owner, **values))
                else:
                    result = self.fn(owner, **values)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise GameCodeError(f"tool {self.name} raised {type(exc).__name__}") from exc
        except Exception as exc:  # the tool-error boundary: errors go to the model
            log.info("tool %s raised", self.name, exc_info=True)
            return {"error": failure_sentence(self.name, str(exc))}
        return self._normalise(result)

    def _validate(self, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
        data: object = arguments
        if isinstance(arguments, str | bytes):
            text = arguments.strip()
            try:
                data = json.loads(text) if text else None
            except ValueError as exc:
                raise _InvalidArguments(f"not valid JSON ({exc})") from None
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise _InvalidArguments(f"expected a JSON object, got {_json_type(data)}")
        try:
            model = self._model.model_validate(dict(data))
        except ValidationError as exc:
            raise _InvalidArguments(self._describe(exc)) from None
        return {param: getattr(model, field) for field, param in self._fields.items()}

    def _describe(self, exc: ValidationError) -> str:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            if err["type"] == "missing":
                problems.append(f"{where}: missing")
            elif err["type"] == "extra_forbidden":
                params = ", ".join(self._fields.values()) or "none"
                problems.append(f"{where}: unexpected argument (parameters: {params})")
            else:
                problems.append(f"{where}: {err['msg']}, got {_short(err.get('input'))}")
        return "; ".join(problems)

    def _normalise(self, result: object) -> dict[str, Any]:
        try:
            json.dumps(result)
        except (TypeError, ValueError) as exc:
            log.warning("tool %s returned %s, which is not JSON (%s)", self.name, type(result).__name__, exc)
            return {"error": failure_sentence(self.name, "it returned something that is not JSON")}
        if result is None:
            return {"ok": True}
        if isinstance(result, dict):
            return result
        return {"result": result}


class _InvalidArguments(Exception):
    """Internal: the model's arguments do not fit; the text says why."""


def failure_sentence(name: str, reason: str) -> str:
    """What the model is told when a tool or hook fails: one short sentence it can act on.

    Not ``TypeName: message``: the model cannot fix a game's ``KeyError``, but it can tell
    the player that something did not work and carry on. The reason is the exception's own
    text (a game that raises ``ValueError("没有更多提示了")`` says why), clipped to one line.
    """
    reason = " ".join(reason.split()).rstrip("。.!！")
    if len(reason) > 160:
        reason = reason[:159] + "…"
    cause = f": {reason}" if reason else ""
    return f"{name} did not work{cause}. Tell the player in one short sentence and carry on."


def _json_type(value: object) -> str:
    names = {
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), type(value).__name__)


def _short(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _where(fn: object) -> str:
    qualname = getattr(fn, "__qualname__", None) or repr(fn)
    return qualname.replace("<locals>.", "")


def _build_model(
    fn: Callable[..., Any], name: str, where: str
) -> tuple[bool, dict[str, str], type[BaseModel]]:
    """Steps 1-3 of the pipeline: (wants_turn, {field: parameter}, argument model)."""
    # 1. Inspect the signature.
    params = list(inspect.signature(fn).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not params or params[0].name != "self" or params[0].kind not in positional:
        raise ToolDefinitionError(
            f"{where}: a tool is a method, its first parameter must be `self`, "
            f"e.g. `def {fn.__name__}(self, turn): ...`"
        )
    wants_turn = False
    model_params: list[inspect.Parameter] = []
    for param in params[1:]:
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            star = "*" if param.kind is inspect.Parameter.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(
                f"{where}: `{star}{param.name}` is not allowed in a tool; list each "
                f"parameter the model fills by name, with a type annotation"
            )
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"{where}: parameter {param.name!r} is positional-only; remove the `/`, "
                f"tool arguments are passed by name"
            )
        if param.name == TURN_PARAMETER:
            wants_turn = True
            continue
        if param.annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"{where}: parameter {param.name!r} has no type annotation; the model fills "
                f"it, so write its type, e.g. `{param.name}: str` (supported: {SUPPORTED})"
            )
        model_params.append(param)

    # 2. Resolve and check the hints.
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    for index, param in enumerate(model_params):
        try:
            hint = typing.get_type_hints(
                HintsOf(fn, {param.name: param.annotation}), include_extras=True
            )[param.name]
        except Exception as exc:  # any failure to evaluate a hint is the author's
            raise ToolDefinitionError(
                f"{where}: the type of parameter {param.name!r} ({param.annotation!r}) cannot "
                f"be resolved ({type(exc).__name__}: {exc}); import the names it uses at "
                f"module level, not under TYPE_CHECKING"
            ) from exc
        try:
            prepared = prepare_hint(hint)
        except Unsupported as exc:
            raise ToolDefinitionError(
                f"{where}: parameter {param.name!r} has an unsupported type: {exc}; "
                f"use one of {SUPPORTED}"
            ) from None
        default = param.default if param.default is not inspect.Parameter.empty else ...
        field = f"p{index}"
        names[field] = param.name
        fields[field] = (prepared, Field(default, alias=param.name))

    # 3. The argument model.
    try:
        model = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as exc:  # pydantic rejects the declaration: say where
        raise ToolDefinitionError(f"{where}: pydantic cannot build its arguments: {exc}") from exc
    return wants_turn, names, model


def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """Step 4: the parameters' JSON schema, strict-mode shaped (OpenAI ``strict_schema``)."""
    schema = model.model_json_schema(schema_generator=NoTitles)
    leftovers = set(schema) - {"type", "properties", "required", "additionalProperties", "title"}
    if leftovers:  # pragma: no cover - supported hints never produce $defs
        raise ToolDefinitionError(f"{model.__name__}: unexpected schema keys {sorted(leftovers)}")
    return {
        "type": "object",
        "properties": schema.get("properties", {}),
        "required": schema.get("required", []),
        "additionalProperties": False,
    }


# --- the decorator and collection --------------------------------------------------------


class _Decorate(Protocol):
    """``@tool(...)``: a method in, a ``Tool`` with the method's signature out."""

    def __call__(self, fn: Callable[Concatenate[Any, _P], _R], /) -> Tool[_P, _R]: ...


def tool(description: str, *, name: str | None = None, judges: bool = False) -> _Decorate:
    """Declare a method as a tool the model may call.

    Usage: ``@tool("说明")`` (the tool is named after the method) or
    ``@tool("说明", name="give_up")``; ``@tool("说明", judges=True)`` for a tool that
    judges the player's line (see ``Tool.judges``).

    Args:
        description: sent to the model verbatim; non-empty.
        name: the tool's name if not the method's: letters, digits, ``_`` and ``-``.
        judges: one verdict per line: answered ``{"outcome": "already_judged"}`` once the
            line was judged, and ``{"outcome": "small_talk"}`` (not run) for small talk.

    Raises:
        ToolDefinitionError: when the decorator is used without a description, or the
            method cannot be a tool (see the module docstring).
    """
    if callable(description):
        raise ToolDefinitionError(
            f"{_where(description)}: @tool needs a description: write "
            f'@tool("说明") above `def {getattr(description, "__name__", "...")}`, not a bare @tool'
        )

    def decorate(fn: Callable[Concatenate[Any, _P], _R]) -> Tool[_P, _R]:
        return Tool(fn, description, name, judges=judges)

    return decorate


def collect_tools(cls: type) -> dict[str, Tool]:
    """All tools of ``cls`` by tool name, bases first, each class in definition order.

    A subclass attribute replaces the base class attribute of the same name: a ``@tool``
    override replaces the base tool (keeping its position); a plain method removes it.

    Raises:
        ToolDefinitionError: two tools share a name, or a tool is named like a built-in
            tool (``say``).
    """
    attributes: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        attributes.update(vars(klass))
    tools: dict[str, Tool] = {}
    owners: dict[str, str] = {}
    for attribute, value in attributes.items():
        if not isinstance(value, Tool):
            continue
        if value.name in BUILTIN_TOOL_NAMES:
            raise ToolDefinitionError(
                f"{cls.__qualname__}.{attribute}: the tool name {value.name!r} is built in "
                f'(every game gets it); rename the method or pass name="..." to @tool'
            )
        if value.name in tools:
            raise ToolDefinitionError(
                f"{cls.__qualname__}: methods {owners[value.name]!r} and {attribute!r} both "
                f"declare the tool {value.name!r}; give one of them another name (name=...)"
            )
        tools[value.name] = value
        owners[value.name] = attribute
    return tools
