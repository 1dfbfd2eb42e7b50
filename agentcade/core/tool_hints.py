"""The type hints a tool's parameter may have, checked and made ready for pydantic.

``str``, ``int``, ``float``, ``bool``, ``Literal[...]``, ``Annotated[T, Field(...)]``,
``T | None`` and ``list[T]`` (:data:`SUPPORTED`): :func:`prepare_hint` checks a hint is one
of them, raising :class:`Unsupported` naming the part it cannot describe, and makes a
number refuse JSON ``true``; :class:`HintsOf` resolves only the annotations the model fills;
:class:`NoTitles` keeps titles out of the JSON schema. :mod:`agentcade.core.tools` builds
a tool's argument model from them.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticCustomError

from agentcade.core.errors import AgentcadeError

__all__ = ["SUPPORTED", "HintsOf", "NoTitles", "Unsupported", "prepare_hint"]

SUPPORTED = (
    "str, int, float, bool, Literal[...], Annotated[T, Field(...)], T | None, "
    "list[str], list[int] (and lists of the other simple types)"
)


def _reject_bool(value: object) -> object:
    # JSON `true` is not a number, but pydantic's lax mode would take it as 1.
    if isinstance(value, bool):
        raise PydanticCustomError("number_type", "Input should be a number, not true/false")
    return value


_NOT_BOOL = BeforeValidator(_reject_bool)
# Placed *last* in an Annotated's metadata: earlier, it would stop pydantic from folding
# Field(ge=...) into the number's schema, and the JSON schema would show "ge" instead of
# "minimum". Last also means it runs first, before the constraints.


class Unsupported(AgentcadeError, TypeError):
    """A hint we cannot describe; the text says which part."""


def _is_number(hint: object) -> bool:
    """Whether bool must be refused for ``hint``: int, float or a Literal of numbers."""
    if hint is int or hint is float:
        return True
    if typing.get_origin(hint) is Literal:
        values = typing.get_args(hint)
        has_bool = any(isinstance(v, bool) for v in values)
        return not has_bool and any(isinstance(v, int | float) for v in values)
    return False


def _optional_arg(hint: object) -> object | None:
    """``T`` for ``T | None`` / ``Optional[T]``; None for anything else."""
    if typing.get_origin(hint) not in (Union, types.UnionType):
        return None
    args: tuple[object, ...] = typing.get_args(hint)
    rest = [a for a in args if a is not type(None)]
    if len(args) == 2 and len(rest) == 1:
        return rest[0]
    raise Unsupported(f"{_show(hint)} (the only union allowed is `T | None`)")


def prepare_hint(hint: object, *, in_list: bool = False) -> object:
    """Check ``hint`` is supported and return it with bool refused for numbers.

    Raises:
        Unsupported: naming the part of the hint we cannot describe.
    """
    origin = typing.get_origin(hint)
    if hint is str or hint is bool:
        return hint
    if _is_number(hint):
        return Annotated[hint, _NOT_BOOL]
    if origin is Literal:
        values = typing.get_args(hint)
        if not all(isinstance(v, str | int | float) for v in values):
            raise Unsupported(f"{_show(hint)} (Literal values must be strings or numbers)")
        return hint
    if origin is Annotated:
        base, *meta = typing.get_args(hint)
        inner = _optional_arg(base) if not in_list else None
        if _is_number(base) or (inner is not None and _is_number(inner)):
            return Annotated[(base, *meta, _NOT_BOOL)]
        return Annotated[(prepare_hint(base, in_list=in_list), *meta)]
    inner = _optional_arg(hint)
    if inner is not None:
        if in_list:
            raise Unsupported(f"{_show(hint)} inside a list")
        prepared: Any = prepare_hint(inner)
        return prepared | None
    if origin is list:
        args = typing.get_args(hint)
        if in_list:
            raise Unsupported(f"{_show(hint)} (lists of lists)")
        if not args:
            raise Unsupported("bare `list` (write the item type, e.g. list[str])")
        # A type built at run time for pydantic; mypy only accepts static type expressions.
        return list[prepare_hint(args[0], in_list=True)]  # type: ignore[misc]
    if hint is list:
        raise Unsupported("bare `list` (write the item type, e.g. list[str])")
    raise Unsupported(_show(hint))


def _show(hint: object) -> str:
    if isinstance(hint, type):
        return hint.__qualname__
    return repr(hint).replace("typing.", "")


class HintsOf:
    """Some of a function's annotations, for ``get_type_hints`` to resolve only those.

    ``turn`` and the return annotation are never resolved: a game may annotate them with
    names imported only under ``TYPE_CHECKING``.
    """

    def __init__(self, fn: Callable[..., Any], annotations: dict[str, Any]) -> None:
        self.__annotations__ = annotations
        self.__globals__ = getattr(inspect.unwrap(fn), "__globals__", {})


class NoTitles(GenerateJsonSchema):
    # Pydantic titles every field ("Number") and the model ("guess_args"); they only add
    # tokens to every request.
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False
