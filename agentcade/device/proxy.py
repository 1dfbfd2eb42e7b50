"""``RobotProxy``: the ``self.robot`` of a game, shaped like the robot SDK.

A game writes ``await self.robot.lights.set_color("#00FF00", brightness=0.8)`` exactly as
with ``watcherobot``. Nothing reaches a robot from here: each call is checked at once
(:func:`~agentcade.device.validate.validate_directive`: allowed, declared, arguments the SDK
accepts, host limits) and then recorded as a :class:`~agentcade.core.protocol.Directive` into
the sink bound for the current request. The main agent runs the directives later, in
order, so calls return ``None`` and do not wait for the robot.

A call the game may not make is refused the way the main agent refuses it, and traced
``directive_skipped`` (call, directive, kind, reason, hint, tool, raised) so that ``check``
sees every one: a call whose capability the game did not declare is skipped (nothing is
recorded, the call returns ``None``, as on the robot); a call that is not open or has
arguments the SDK or the host limits reject raises ``DirectiveError`` (``raised=True``),
which a tool hands to the model as its error. ``tool`` is the tool or hook that made the
call (``agentcade.core.trace.current_caller``).

The sink and the trace are bound by ``SkillAgent`` for the length of a request
(``proxy.bind(sink, trace)`` / ``proxy.bind(None)``); a call outside a request raises
``RuntimeError``.

The proxy also remembers whether the game's expression runtime owns the screen, the way
the SDK does (``start`` takes it; ``stop``, animations, behaviours, official expressions
and works give it back), so :mod:`agentcade.device.effects` knows whether to ``start`` or
``update``.

No I/O, no trio.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import weakref
from collections.abc import Callable, Collection, Coroutine, Iterator
from typing import Any, Protocol

from agentcade.core.allowlist import ALLOWED_CALLS
from agentcade.core.errors import DirectiveErrorKind
from agentcade.core.protocol import Directive, Timing
from agentcade.core.trace import NULL_TRACE, Trace, current_caller
from agentcade.device.validate import (
    DirectiveError,
    allowed_in_domain,
    not_allowed,
    sdk_signature,
    validate_directive,
)

__all__ = ["DirectiveSink", "RobotProxy", "flush_directives"]

OUTSIDE_TURN = "robot used outside a game turn"

_DOMAINS: tuple[str, ...] = tuple(sorted({c.split(".", 1)[0] for c in ALLOWED_CALLS}))

_TAKES_DISPLAY = frozenset({"expression_runtime.start"})
# The SDK's ``_mark_display_released`` callers, plus an explicit stop.
_RELEASES_DISPLAY = frozenset(
    {
        "expression_runtime.stop",
        "animation.play",
        "behavior.play",
        "expressions.play_official",
        "works.play",
        "works.play_expression",
    }
)


class DirectiveSink(Protocol):
    """Where a proxy puts directives during a request (the current ``Turn``)."""

    def record(self, directive: Directive) -> None:
        """Queue ``directive`` for the next reply."""

    async def flush(self) -> None:
        """Send the queued directives now, as a directives-only intermediate reply."""


def _json_safe(call: str, where: str, value: object) -> Any:
    """``value`` as plain JSON data, or DirectiveError(invalid)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DirectiveError("invalid", call, f"{where} is {value!r}", "Pass a finite number")
        return float(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, list | tuple):
        return [_json_safe(call, f"{where}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise DirectiveError("invalid", call, f"{where} has a non-string key {key!r}")
            out[str.__str__(key)] = _json_safe(call, f"{where}[{key!r}]", item)
        return out
    hint = "Pass str, int, float, bool or None"
    if type(value).__name__ == "Stroke":
        hint = "Encode drawings with agentcade.core.vector.encode_vector(strokes)"
    raise DirectiveError(
        "invalid",
        call,
        f"{where} is a {type(value).__name__}, which cannot be sent to the robot",
        hint,
    )


class RobotProxy:
    """SDK-shaped robot for a game: validates each call and records it as a directive.

    Args:
        declared_capabilities: the game's ``required_capabilities``; a call whose
            capability is not among them is skipped and traced.
    """

    def __init__(self, declared_capabilities: Collection[str]) -> None:
        self._declared: tuple[str, ...] = tuple(dict.fromkeys(declared_capabilities))
        self._sink: DirectiveSink | None = None
        self._trace: Trace = NULL_TRACE
        self._owns_display = False
        self._timing: Timing = "queue"
        for domain, cls in _DOMAIN_CLASSES.items():
            object.__setattr__(self, domain, cls(self))

    # -- game-facing ----------------------------------------------------------------------

    @property
    def capabilities(self) -> tuple[str, ...]:
        """The capabilities the game declared."""
        return self._declared

    @property
    def owns_display(self) -> bool:
        """Whether the game's expression runtime holds the screen (``start`` was recorded)."""
        return self._owns_display

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not set: domains are instance attributes.
        if name.startswith("_"):
            raise AttributeError(name)
        error = not_allowed(name)
        self.refuse(error, name)
        raise error  # pragma: no cover - refuse raises every kind but undeclared

    def __repr__(self) -> str:
        state = "bound" if self._sink is not None else "unbound"
        return f"RobotProxy(capabilities={self._declared!r}, {state})"

    @contextlib.contextmanager
    def timed(self, timing: Timing) -> Iterator[None]:
        """Calls made inside run at ``timing`` relative to the reply's text (see
        :data:`~agentcade.core.protocol.Timing`): ``effects.react`` moves the head
        ``with_text`` and puts the screen back ``after_text``."""
        previous, self._timing = self._timing, timing
        try:
            yield
        finally:
            self._timing = previous

    # -- host-facing ----------------------------------------------------------------------

    def bind(self, sink: DirectiveSink | None, trace: Trace | None = None) -> None:
        """Record into ``sink`` (and refusals into ``trace``) from now on; ``None`` ends
        the request."""
        self._sink = sink
        self._trace = trace if trace is not None and sink is not None else NULL_TRACE

    def refuse(self, error: DirectiveError, described: str) -> None:
        """Trace a call the game may not make; raise ``error`` unless it is undeclared.

        An undeclared call is skipped, not raised: the robot would skip it too (the main
        agent re-validates every directive), and a game that forgot a capability should
        go on playing. ``check`` reads the trace and fails the game either way.

        Raises:
            DirectiveError: ``error``, when it is not of kind ``undeclared``.
            RuntimeError: outside a game turn.
        """
        skipped = error.kind == DirectiveErrorKind.UNDECLARED
        if skipped and self._sink is None:
            raise RuntimeError(OUTSIDE_TURN)
        self._trace.record(
            "directive_skipped",
            call=error.call,
            directive=described,
            kind=error.kind,
            reason=error.reason,
            hint=error.hint,
            tool=current_caller(),
            raised=not skipped,
        )
        if not skipped:
            raise error

    def _call(self, call: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            directive = Directive(
                call=call,
                args=[_json_safe(call, f"argument {i + 1}", a) for i, a in enumerate(args)],
                kwargs={k: _json_safe(call, k, v) for k, v in kwargs.items()},
                timing=self._timing,
            )
            validate_directive(directive, self._declared)
        except DirectiveError as error:
            self.refuse(error, _describe(call, args, kwargs))
            return
        sink = self._sink
        if sink is None:
            raise RuntimeError(OUTSIDE_TURN)
        sink.record(directive)
        if call in _TAKES_DISPLAY:
            self._owns_display = True
        elif call in _RELEASES_DISPLAY:
            self._owns_display = False


class _ProxyDomain:
    """One SDK domain (``lights``, ``motion``...): its allowed methods, nothing else.

    The methods live on one generated class per domain, built once per process, and the
    domain refers back to its proxy weakly: a session's proxy then holds no reference
    cycle and is freed the moment the session ends, not at the next full GC pass (whose
    pauses showed in the ``end`` latency benchmark).
    """

    _domain = ""

    def __init__(self, proxy: RobotProxy) -> None:
        self._proxy = weakref.ref(proxy)

    def _call(self, call: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        proxy = self._proxy()
        if proxy is None:
            raise RuntimeError(OUTSIDE_TURN)
        proxy._call(call, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        call = f"{self._domain}.{name}"
        error = not_allowed(call)
        proxy = self._proxy()
        if proxy is not None:
            proxy.refuse(error, call)
        raise error

    def __repr__(self) -> str:
        return f"<robot.{self._domain}: {', '.join(allowed_in_domain(self._domain))}>"


def _describe(call: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The call as the game wrote it, for the trace (values that are not JSON too)."""
    parts = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    return f"{call}({', '.join(parts)})"


def _short(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _make_method(call: str) -> Callable[..., Coroutine[Any, Any, None]]:
    async def method(self: _ProxyDomain, *args: Any, **kwargs: Any) -> None:
        self._call(call, args, kwargs)

    sig = sdk_signature(call).replace(return_annotation=None)
    method.__name__ = call.split(".", 1)[1]
    method.__qualname__ = f"robot.{call}"
    method.__doc__ = (
        f"Send the SDK call ``{call}{sig}`` to the robot.\n\n"
        "Checked now (raises DirectiveError; skipped when its capability is not declared), "
        "run later by the main agent; returns None."
    )
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    # inspect.signature() reads __signature__; typeshed does not declare it on functions.
    method.__signature__ = sig.replace(parameters=[self_param, *sig.parameters.values()])  # type: ignore[attr-defined]
    return method


def _domain_class(domain: str) -> type[_ProxyDomain]:
    methods: dict[str, Any] = {
        call.split(".", 1)[1]: _make_method(call) for call in allowed_in_domain(domain)
    }
    return type(f"_{domain}_domain", (_ProxyDomain,), {"_domain": domain, **methods})


_DOMAIN_CLASSES: dict[str, type[_ProxyDomain]] = {d: _domain_class(d) for d in _DOMAINS}


async def flush_directives(robot: RobotProxy) -> None:
    """Send the directives queued so far now, instead of with the next reply.

    Raises:
        RuntimeError: outside a game turn.
    """
    sink = robot._sink
    if sink is None:
        raise RuntimeError(OUTSIDE_TURN)
    await sink.flush()
