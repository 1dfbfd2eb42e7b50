"""The simulated robot's firmware: the commands it obeys and the Jobs it runs on its state.

:class:`SimFirmware` is what the device does with a command once the link has carried it
(robot-sdk.md §3-4); :class:`~agentcade.sim.device.SimDevice` is it with the link and the
Daemon around it.

* every command is ACKed with its ``command_id``; Job commands also carry an
  ``operation_id`` and then emit ``evt.sdk.operation`` ``running`` -> ``completed`` after a
  realistic time (move: ``duration_ms``; animation 1.5 s; action 1.2 s; audio 1 s;
  behaviour 2 s per repeat, ``desktop_expression_panel`` until stopped; a light effect
  ``period_ms * repeat``, ``repeat=0`` until stopped). ``ctrl.job.cancel`` ends a job
  ``cancelled`` (reason ``cancel_requested``); a stop command or a newer command for the
  same part ends it ``cancelled`` with reason ``stopped``/``superseded``.
* values the firmware plausibly refuses are NACKed (``sys.nack`` + ``reason``):
  ``invalid_zone`` (zones are ``all|side|bottom``: ``head`` is the CLI's alias, the host
  translates it), ``unknown_effect``, ``unknown_animation``, ``pan_out_of_range`` /
  ``tilt_out_of_range`` (the host limits), ``invalid_vector_path``,
  ``expression_runtime_not_running`` (update before start), ``unknown_operation``,
  ``unknown_command``.
* the microphone, speaker and back touch are :mod:`agentcade.sim.audio`'s (``audio``).

The state it keeps is :class:`~agentcade.sim.state.SimState`; :meth:`SimFirmware.wait_for`
waits on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from agentcade.core.allowlist import KNOWN_EFFECTS, PAN_RANGE, TILT_RANGE
from agentcade.core.vector import VectorError, decode_vector
from agentcade.sim._nack import _Nack
from agentcade.sim.audio import SimAudio
from agentcade.sim.state import SIM_ZONES, Expression, Lights, SimState, SimTimings

__all__ = ["SimFirmware", "envelope"]

_PRESETS = frozenset({"standby", "thinking", "speaking"})
_COLOR = re.compile(r"#[0-9A-F]{6}")
_JOB_TYPES = frozenset(
    {
        "ctrl.light.effect.play",
        "ctrl.animation.play",
        "ctrl.behavior.play",
        "ctrl.motion.move_to",
        "ctrl.motion.action.play",
        "ctrl.audio.play",
    }
)


@dataclass
class _Operation:
    id: int
    kind: str  # light_effect | animation | behavior | move | action | audio
    label: str
    state: str = "running"
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    started: float = 0.0
    duration: float | None = None
    start_head: tuple[int, int] | None = None
    target_head: tuple[int, int] | None = None


def envelope(type_: str, data: dict[str, Any], code: int = 0) -> str:
    """One frame of the wire: ``{"type", "code", "data"}``, compact JSON."""
    return json.dumps({"type": type_, "code": code, "data": data}, separators=(",", ":"))


class SimFirmware:
    """The commands and Jobs of the simulated robot, on its :class:`SimState`.

    Attributes:
        state: the device model, changed as commands arrive.
        events: every ``evt.sdk.operation`` sent, ``(operation_id, state, reason)``.

    The link around it (:class:`~agentcade.sim.device.SimDevice`) gives it ``audio``, the
    nursery its Jobs run in (``_nursery``) and :meth:`_broadcast`.
    """

    audio: SimAudio
    _nursery: trio.Nursery | None

    def __init__(self, *, animations: tuple[str, ...], timings: SimTimings | None) -> None:
        self.animations = animations
        self.timings = timings or SimTimings()
        self.state = SimState()
        self.events: list[tuple[int, str, str | None]] = []
        self._operations: dict[int, _Operation] = {}
        self._next_operation = 0
        self._changed = trio.Event()

    def _broadcast(self, frame: str | bytes) -> None:
        """Send a frame to every desktop client (the link's job)."""
        raise NotImplementedError

    # -- waiting on the model --------------------------------------------------------------

    def _touch(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_for(self, predicate: Callable[[SimState], bool]) -> None:
        """Wait until ``predicate(state)`` holds (wrap it in ``trio.fail_after``)."""
        while not predicate(self.state):
            await self._changed.wait()

    # -- jobs ------------------------------------------------------------------------------

    def running(self, kind: str | None = None) -> list[int]:
        """Ids of running operations (of one kind: ``animation``, ``move``...)."""
        return [
            o.id
            for o in self._operations.values()
            if o.state == "running" and (kind is None or o.kind == kind)
        ]

    def _new_operation(
        self, kind: str, label: str, duration: float | None
    ) -> tuple[dict[str, Any], Callable[[], None]]:
        for other in list(self._operations.values()):
            if other.kind == kind or (
                kind in ("move", "action") and other.kind in ("move", "action")
            ):
                self._finish(other, "cancelled", "superseded")
        self._next_operation += 1
        op = _Operation(self._next_operation, kind, label, duration=duration)
        op.started = trio.current_time()
        self._operations[op.id] = op

        def start() -> None:
            self._event(op.id, "running")
            assert self._nursery is not None
            self._nursery.start_soon(self._run_operation, op)

        return {"operation_id": op.id}, start

    async def _run_operation(self, op: _Operation) -> None:
        with op.scope:
            if op.duration is None:
                await trio.sleep_forever()
            else:
                await trio.sleep(op.duration)
            self._finish(op, "completed")

    def _event(self, operation_id: int, state: str, reason: str | None = None) -> None:
        data: dict[str, Any] = {"operation_id": operation_id, "state": state}
        if reason:
            data["reason"] = reason
        self.events.append((operation_id, state, reason))
        self._broadcast(envelope("evt.sdk.operation", data))

    def _finish(self, op: _Operation, state: str, reason: str | None = None) -> None:
        if op.state != "running":
            return
        if op.kind == "move" and op.target_head is not None:
            if state == "completed":
                self.state.pan, self.state.tilt = op.target_head
            else:  # stopped part of the way
                self.state.pan, self.state.tilt = self._head_now(op)
            self.state.moving_to = None
        op.state = state
        op.scope.cancel()
        self._operations.pop(op.id, None)
        st = self.state
        if op.kind == "animation" and st.animation == op.label:
            st.animation = None
            if st.screen == f"animation:{op.label}":
                st.screen = "standby"
        elif op.kind == "behavior" and st.behavior == op.label:
            st.behavior = None
            if st.screen == f"behavior:{op.label}":
                st.screen = "standby"
        elif op.kind == "action":
            st.action = None
        elif op.kind == "audio":
            st.sound = None
        elif op.kind == "light_effect":
            st.lights.effect = st.lights.period_ms = st.lights.repeat = None
        self._event(op.id, state, reason)
        self._touch()

    def _stop(self, *kinds: str) -> None:
        for op in list(self._operations.values()):
            if op.kind in kinds:
                self._finish(op, "cancelled", "stopped")

    def _head_now(self, op: _Operation) -> tuple[int, int]:
        assert op.start_head is not None
        assert op.target_head is not None
        fraction = 1.0
        if op.duration:
            fraction = min(1.0, (trio.current_time() - op.started) / op.duration)
        (p0, t0), (p1, t1) = op.start_head, op.target_head
        return (round(p0 + (p1 - p0) * fraction), round(t0 + (t1 - t0) * fraction))

    # -- commands --------------------------------------------------------------------------

    def _command(
        self, type_: str, d: dict[str, Any]
    ) -> tuple[dict[str, Any], Callable[[], None] | None]:
        handler = _HANDLERS.get(type_)
        if handler is None:
            raise _Nack("unknown_command")
        return handler(self, d)

    def _light_common(self, d: dict[str, Any]) -> tuple[str, float, str]:
        zone = d.get("zone", "all")
        if zone not in SIM_ZONES:
            raise _Nack("invalid_zone")
        color = d.get("color", "#FFFFFF")
        if not isinstance(color, str) or _COLOR.fullmatch(color) is None:
            raise _Nack("invalid_color")
        brightness = d.get("brightness", 1.0)
        if not isinstance(brightness, int | float) or not 0.0 <= brightness <= 1.0:
            raise _Nack("invalid_brightness")
        return zone, float(brightness), color

    def _light_set(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        zone, brightness, color = self._light_common(d)
        self._stop("light_effect")
        self.state.lights = Lights(True, color, brightness, zone)
        return {}, None

    def _light_effect(self, d: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        zone, brightness, color = self._light_common(d)
        effect, period, repeat = d.get("effect"), d.get("period_ms", 500), d.get("repeat", 0)
        if effect not in KNOWN_EFFECTS:
            raise _Nack("unknown_effect")
        if not isinstance(period, int) or not 0 <= period <= 65535:
            raise _Nack("invalid_period")
        if not isinstance(repeat, int) or repeat < 0:
            raise _Nack("invalid_repeat")
        duration = None if repeat == 0 else period * repeat / 1000
        result = self._new_operation("light_effect", str(effect), duration)
        self.state.lights = Lights(True, color, brightness, zone, str(effect), period, repeat)
        return result

    def _light_off(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        self._stop("light_effect")
        self.state.lights = Lights()
        return {}, None

    def _screen_taken(self, screen: str) -> None:
        """Something other than the expression runtime takes the screen (SDK: released)."""
        self.state.expression.running = False
        self.state.screen = screen

    def _animation_play(self, d: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        animation = d.get("animation_id")
        if animation not in self.animations:
            raise _Nack("unknown_animation")
        self._stop("behavior")
        # The standby animation is the device's idle face: it is there at once.
        duration = 0.0 if animation == "standby" else self.timings.animation
        result = self._new_operation("animation", str(animation), duration)
        if animation == "standby":
            self._screen_taken("standby")
        else:
            self.state.animation = str(animation)
            self._screen_taken(f"animation:{animation}")
        return result

    def _animation_prefetch(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        if d.get("animation_id") not in self.animations:
            raise _Nack("unknown_animation")
        return {}, None

    def _animation_stop(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        self._stop("animation")
        return {}, None

    def _behavior_play(self, d: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        behavior, repeat = d.get("behavior_id"), d.get("repeat", 1)
        if not isinstance(behavior, str) or not behavior:
            raise _Nack("unknown_behavior")
        if not isinstance(repeat, int) or repeat <= 0:
            raise _Nack("invalid_repeat")
        self._stop("animation")
        t = self.timings
        duration = None if behavior in t.endless_behaviors else t.behavior_per_repeat * repeat
        result = self._new_operation("behavior", behavior, duration)
        self.state.behavior = behavior
        self._screen_taken(f"behavior:{behavior}")
        return result

    def _behavior_stop(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        self._stop("behavior")
        return {}, None

    @staticmethod
    def _angle(d: dict[str, Any], name: str, limits: tuple[int, int]) -> int | None:
        value = d.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Nack(f"invalid_{name}")
        if not limits[0] <= value <= limits[1]:
            raise _Nack(f"{name.split('_')[0]}_out_of_range")
        return value

    def _move_to(self, d: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        pan = self._angle(d, "pan_deg", PAN_RANGE)
        tilt = self._angle(d, "tilt_deg", TILT_RANGE)
        duration = d.get("duration_ms")
        if pan is None or tilt is None:
            raise _Nack("missing_target")
        if not isinstance(duration, int) or not 1 <= duration <= 65535:
            raise _Nack("invalid_duration")
        current = self._head_now_all()
        result = self._new_operation("move", f"{pan},{tilt}", duration / 1000)
        op = self._operations[result[0]["operation_id"]]
        op.start_head, op.target_head = current, (pan, tilt)
        self.state.pan, self.state.tilt = current
        self.state.moving_to = (pan, tilt)
        return result

    def _head_now_all(self) -> tuple[int, int]:
        for op in self._operations.values():
            if op.kind == "move" and op.state == "running":
                return self._head_now(op)
        return self.state.head

    def _set_target(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        pan = self._angle(d, "pan_deg", PAN_RANGE)
        tilt = self._angle(d, "tilt_deg", TILT_RANGE)
        if pan is None and tilt is None:
            raise _Nack("missing_target")
        self._stop("move", "action")
        if pan is not None:
            self.state.pan = pan
        if tilt is not None:
            self.state.tilt = tilt
        return {}, None

    def _action_play(self, d: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        action = d.get("action_id")
        if not isinstance(action, str) or not action:
            raise _Nack("unknown_action")
        result = self._new_operation("action", action, self.timings.action)
        self.state.action = action
        return result

    def _motion_stop(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        self._stop("move", "action")
        return {}, None

    def _audio_play(self, d: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        sound = d.get("sound_id")
        if not isinstance(sound, str) or not sound:
            raise _Nack("unknown_sound")
        result = self._new_operation("audio", sound, self.timings.audio)
        self.state.sound = sound
        return result

    def _expression(self, d: dict[str, Any], *, start: bool) -> tuple[dict[str, Any], None]:
        expr = self.state.expression
        if not start and not expr.running:
            raise _Nack("expression_runtime_not_running")
        preset = d.get("preset")
        if (start or preset is not None) and preset not in _PRESETS:
            raise _Nack("invalid_preset")
        path = d.get("custom_vector_path")
        if path is not None:
            try:
                decode_vector(path)
            except VectorError:
                raise _Nack("invalid_vector_path") from None
        if start:
            expr = Expression(running=True)
        for key, value in d.items():
            if key in ("preset", "accessory", "custom_vector_path", "custom_accessory_layer"):
                setattr(expr, key, value)
            elif key.endswith("_milli") and isinstance(value, int):
                expr.params[key.removesuffix("_milli")] = value / 1000
            else:
                expr.params[key] = value
        self.state.expression = expr
        self._stop("animation", "behavior")
        self.state.screen = "expression"
        return {}, None

    def _expression_stop(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        expr = self.state.expression
        if expr.running:
            self.state.expression = Expression()
            if self.state.screen == "expression":
                self.state.screen = "standby"
        return {}, None

    def _resource_expression(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        if d.get("source") == "official":
            self._screen_taken(f"official:{d.get('resource_id')}")
        elif d.get("source") == "work":
            self._screen_taken(f"work:{d.get('work_id')}/{d.get('clip_id')}")
        else:
            raise _Nack("unknown_source")
        self._stop("animation", "behavior")
        return {}, None

    def _work_play(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        self._stop("animation", "behavior")
        self._screen_taken(f"work:{d.get('work_id')}")
        return {}, None

    def _job_cancel(self, d: dict[str, Any]) -> tuple[dict[str, Any], None]:
        operation_id = d.get("operation_id")
        op = self._operations.get(operation_id) if isinstance(operation_id, int) else None
        if op is None:
            if isinstance(operation_id, int) and 0 < operation_id <= self._next_operation:
                return {}, None  # already over: nothing to cancel
            raise _Nack("unknown_operation")
        self._finish(op, "cancelled", "cancel_requested")
        return {}, None


_HANDLERS: dict[
    str, Callable[[SimFirmware, dict[str, Any]], tuple[dict[str, Any], Callable[[], None] | None]]
] = {
    "ctrl.light.set": SimFirmware._light_set,
    "ctrl.light.effect.play": SimFirmware._light_effect,
    "ctrl.light.off": SimFirmware._light_off,
    "ctrl.animation.play": SimFirmware._animation_play,
    "ctrl.animation.prefetch": SimFirmware._animation_prefetch,
    "ctrl.animation.stop": SimFirmware._animation_stop,
    "ctrl.behavior.play": SimFirmware._behavior_play,
    "ctrl.behavior.stop": SimFirmware._behavior_stop,
    "ctrl.motion.move_to": SimFirmware._move_to,
    "ctrl.motion.set_target": SimFirmware._set_target,
    "ctrl.motion.action.play": SimFirmware._action_play,
    "ctrl.motion.stop": SimFirmware._motion_stop,
    "ctrl.audio.play": SimFirmware._audio_play,
    "ctrl.expression.runtime.start": lambda dev, d: dev._expression(d, start=True),
    "ctrl.expression.runtime.update": lambda dev, d: dev._expression(d, start=False),
    "ctrl.expression.runtime.stop": SimFirmware._expression_stop,
    "resource.expression.play": SimFirmware._resource_expression,
    "resource.work.play": SimFirmware._work_play,
    "ctrl.job.cancel": SimFirmware._job_cancel,
    "ctrl.microphone.open": lambda dev, d: (dev.audio.mic_open(d), None),
    "ctrl.microphone.close": lambda dev, d: (dev.audio.mic_close(d), None),
    "ctrl.audio.stream.begin": lambda dev, d: (dev.audio.stream_begin(d), None),
    "ctrl.audio.stop": lambda dev, d: (dev.audio.stop(d), None),
}
assert set(_HANDLERS) >= _JOB_TYPES
