"""Validate a directive the way the robot SDK would, plus the host's own limits.

A directive is judged in three steps, and the first failure wins:

1. ``not_allowed``: the call is not in :data:`~agentcade.core.allowlist.ALLOWED_CALLS`.
2. ``undeclared``: the game did not declare the capability the call needs.
3. ``invalid``: the arguments are wrong. The SDK itself decides: the call is run on a real
   ``watcherobot.robot.WatcheRobot`` whose transport only records (no device, no sockets,
   no threads), after ``inspect.signature(method).bind`` has checked arity and keyword-only
   use. Any ``TypeError``/``ValueError`` the SDK raises becomes the reason. Then the host
   limits the SDK does not check (pan/tilt envelope, move duration, light zone and effect
   names, motion profile) are applied.

One validator robot is shared by the whole process. It is built on first use and guarded
by a lock, because the SDK's domain objects keep state (display ownership, job tables).
A validation costs a few tens of microseconds.

:func:`bind_call` is the one place that maps ``"domain.method"`` to a bound SDK method;
the host's executors use it to run a directive on the real or simulated robot.

No I/O, no trio.
"""

from __future__ import annotations

import functools
import inspect
import math
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any

from watcherobot.job import Job
from watcherobot.robot import WatcheRobot

from agentcade.core.allowlist import (
    ALLOWED_CALLS,
    DURATION_RANGE,
    FRONT_PAN,
    FRONT_TILT,
    KNOWN_EFFECTS,
    KNOWN_PROFILES,
    KNOWN_ZONES,
    PAN_RANGE,
    TILT_RANGE,
)
from agentcade.core.errors import DirectiveError, DirectiveErrorKind
from agentcade.core.protocol import Directive

__all__ = [
    "SDK_CAPABILITIES",
    "DirectiveError",
    "ErrorKind",
    "allowed_in_domain",
    "bind_call",
    "not_allowed",
    "sdk_signature",
    "undeclared",
    "validate_directive",
]

ErrorKind = DirectiveErrorKind
"""Why a call was refused (``agentcade.core.errors.DirectiveErrorKind``)."""

# Every capability string in watcherobot 0.1.11 (robot-sdk.md §1): the validator robot
# advertises all of them so the SDK's own capability checks never get in the way. Whether
# a game may use a call is decided by the allowlist and its declared capabilities instead.
SDK_CAPABILITIES: tuple[str, ...] = (
    "animation.prefetch.v1",
    "expression.audio_follow.v1",
    "expression.runtime.v3",
    "resource.expression.official",
    "resource.work.expression.play",
    "camera.capture.feedback.v1",
    "recording.device.v1",
    "recording.device.av.v1",
    "recording.host.v1",
    "recording.screen_preview.v1",
    "recording.download.resume.v1",
    "vision.models.v1",
    "vision.inference.v1",
    "vision.inference.preview.v1",
    "vision.status.v1",
    "vision.model.select.v1",
    "face_tracking.control.v1",
    "face_tracking.preview.v1",
    "audio.stream",
    "rtc.audio.full_duplex.v1",
    "rtc.video.mjpeg.v1",
    "motion",
    "light",
    "animation",
    "behavior",
    "camera.capture",
    "expression.vector_accessory.v1",
)


def allowed_in_domain(domain: str) -> list[str]:
    """The allowed ``"domain.method"`` names of one SDK domain (empty if none)."""
    return [c for c in ALLOWED_CALLS if c.split(".", 1)[0] == domain]


def not_allowed(call: str) -> DirectiveError:
    """The ``not_allowed`` error for ``call`` (or a bare domain), listing what is open."""
    domain = call.split(".", 1)[0]
    same = allowed_in_domain(domain)
    if same:
        return DirectiveError(
            "not_allowed",
            call,
            "this SDK method is not open to games",
            f"Allowed calls of {domain}: {', '.join(same)}",
        )
    what = "SDK method" if "." in call else "SDK domain"
    return DirectiveError(
        "not_allowed",
        call,
        f"this {what} is not open to games",
        f"Allowed calls: {', '.join(ALLOWED_CALLS)}",
    )


def undeclared(call: str, capability: str) -> DirectiveError:
    """The ``undeclared`` error: ``call`` needs ``capability``, which was not declared."""
    return DirectiveError(
        "undeclared",
        call,
        f"it needs the capability {capability!r}, which the game did not declare",
        f"Add {capability} to required_capabilities in SKILL.md",
    )


# --- the validator robot ---------------------------------------------------------------


class _RecordingTransport:
    """An in-process stand-in for a robot connection: every command is ACKed and kept.

    Job commands get a positive, increasing ``operation_id``; :meth:`finish` then reports
    the job completed through the robot's own message callback, so the SDK forgets it
    (its job table stays empty however many directives are validated).
    """

    command_timeout = 5.0

    def __init__(self) -> None:
        self.capabilities: tuple[str, ...] = SDK_CAPABILITIES
        self.device_info: dict[str, Any] = {}
        self.animation_ids: tuple[str, ...] = ()
        self.last: tuple[str, dict[str, Any]] | None = None
        self._next_operation = 0
        self._on_message: Callable[[dict[str, Any]], None] | None = None

    def set_callbacks(
        self,
        on_message: Callable[[dict[str, Any]], None],
        on_binary: Callable[[Any], None],
        on_disconnect: Callable[[], None],
    ) -> None:
        self._on_message = on_message

    def send_command(
        self, message_type: str, data: dict[str, Any], timeout: float | None = None
    ) -> dict[str, Any]:
        self._next_operation += 1
        self.last = (message_type, dict(data))
        return {"type": "sys.ack", "code": 0, "data": {"operation_id": self._next_operation}}

    def finish(self, operation_id: int) -> None:
        if self._on_message is not None:
            self._on_message(
                {
                    "type": "evt.sdk.operation",
                    "code": 0,
                    "data": {"operation_id": operation_id, "state": "completed"},
                }
            )

    def close(self) -> None:
        pass


_lock = threading.Lock()
_validator: tuple[WatcheRobot, _RecordingTransport] | None = None


def _validator_robot() -> tuple[WatcheRobot, _RecordingTransport]:
    """The shared validator robot; call with ``_lock`` held."""
    global _validator
    if _validator is None:
        transport = _RecordingTransport()
        _validator = (WatcheRobot(transport), transport)
    return _validator


def _method(robot: WatcheRobot, call: str) -> Callable[..., Any]:
    if call not in ALLOWED_CALLS:
        raise not_allowed(call)
    domain, name = call.split(".", 1)
    method: Callable[..., Any] = getattr(getattr(robot, domain), name)
    return method


_signatures: dict[str, inspect.Signature] = {}


def _signature_of(method: Callable[..., Any], call: str) -> inspect.Signature:
    sig = _signatures.get(call)
    if sig is None:
        try:
            sig = inspect.signature(method, eval_str=True)
        except (NameError, TypeError, SyntaxError):  # an annotation we cannot evaluate
            sig = inspect.signature(method)
        _signatures[call] = sig
    return sig


def sdk_signature(call: str) -> inspect.Signature:
    """The SDK's signature of an allowed call (without ``self``).

    Raises:
        DirectiveError: ``not_allowed`` if the call is not open to games.
    """
    with _lock:
        robot, _ = _validator_robot()
        return _signature_of(_method(robot, call), call)


def bind_call(robot: WatcheRobot, directive: Directive) -> Callable[[], object]:
    """A zero-argument callable that performs ``directive`` on ``robot``.

    The one home for "call name -> bound SDK method": the host's executors call the result
    (in a worker thread; SDK calls block). Only allowed calls are bound.

    Raises:
        DirectiveError: ``not_allowed`` if the call is not open to games.
    """
    method = _method(robot, directive.call)
    return functools.partial(method, *directive.args, **directive.kwargs)


def _short(sig: inspect.Signature, call: str) -> str:
    text = f"{call}{sig}"
    return text if len(text) <= 160 else text[:157] + "...)"


def _run_sdk(directive: Directive) -> inspect.BoundArguments:
    """Run the call on the validator robot; return its bound arguments."""
    call = directive.call
    with _lock:
        robot, transport = _validator_robot()
        method = _method(robot, call)
        sig = _signature_of(method, call)
        try:
            bound = sig.bind(*directive.args, **directive.kwargs)
        except TypeError as exc:
            raise DirectiveError(
                "invalid", call, str(exc), f"The SDK signature is {_short(sig, call)}"
            ) from None
        try:
            result = method(*directive.args, **directive.kwargs)
        except (TypeError, ValueError, OverflowError) as exc:
            raise DirectiveError("invalid", call, str(exc) or type(exc).__name__) from None
        if isinstance(result, Job):
            transport.finish(result.id)
    return bound


# Ids the SDK only checks for truthiness (so 123 or ["x"] would pass): the host wants text.
_FREE_IDS = {
    "animation.play": "animation_id",
    "behavior.play": "behavior_id",
    "motion.play_action": "action_id",
    "audio.play": "sound_id",
}


def _host_limits(call: str, arguments: Mapping[str, Any]) -> None:
    """The limits the SDK does not check (robot-sdk.md, "Values seen in callers")."""

    def fail(reason: str, hint: str) -> DirectiveError:
        return DirectiveError("invalid", call, reason, hint)

    for name, (low, high), front in (
        ("pan_deg", PAN_RANGE, FRONT_PAN),
        ("tilt_deg", TILT_RANGE, FRONT_TILT),
    ):
        if not call.startswith("motion.") or arguments.get(name) is None:
            continue
        value = arguments[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail(f"{name} must be a number, got {value!r}", f"Use an int {low}..{high}")
        if not (math.isfinite(value) and low <= int(value) <= high):
            raise fail(
                f"{name} {value!r} is outside the safe range {low}..{high}",
                f"{front} faces straight ahead",
            )
    if call == "motion.move_to":
        low, high = DURATION_RANGE
        duration = arguments.get("duration_ms")
        if isinstance(duration, int) and not low <= duration <= high:
            raise fail(
                f"duration_ms {duration} is outside the host's range {low}..{high}",
                "Split a long move into several moves",
            )
    id_name = _FREE_IDS.get(call)
    if id_name is not None and not isinstance(arguments.get(id_name), str):
        raise fail(f"{id_name} must be a string, got {arguments.get(id_name)!r}", "")
    for name, known in (("zone", KNOWN_ZONES), ("effect", KNOWN_EFFECTS)):
        if call.startswith("lights.") and name in arguments and arguments[name] not in known:
            raise fail(f"unknown {name} {arguments[name]!r}", f"Use one of {sorted(known)}")
    if (
        call == "motion.move_to"
        and "profile" in arguments
        and arguments["profile"] not in KNOWN_PROFILES
    ):
        raise fail(
            f"unknown profile {arguments['profile']!r}", f"Use one of {sorted(KNOWN_PROFILES)}"
        )


def validate_directive(directive: Directive, declared: Collection[str]) -> None:
    """Raise :class:`DirectiveError` unless a game that declared ``declared`` may send it.

    Thread-safe; a validation takes a few tens of microseconds.
    """
    call = directive.call
    capability = ALLOWED_CALLS.get(call)
    if capability is None:
        raise not_allowed(call)
    if capability not in declared:
        raise undeclared(call, capability)
    bound = _run_sdk(directive)
    _host_limits(call, bound.arguments)
