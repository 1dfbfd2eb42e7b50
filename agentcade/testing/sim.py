"""A simulated WatcheRobot: the DEVICE side of the SDK's wire protocol, on trio-websocket.

:class:`SimDevice` is a WebSocket server that a real ``watcherobot`` transport connects to
(``DesktopRobotSession(url)``; the Daemon's raw routing is impersonated too: it answers
``sys.client.hello``). It follows robot-sdk.md §3-4:

* ``sys.client.hello`` -> ``sys.ack {type, role}``; ``sys.sdk.ready.get`` -> ``evt.sdk.ready``
  (device_id, capabilities, animations) *before* the ACK, so ``start()`` returns with the
  capabilities; ``sys.ping`` -> ``sys.pong`` with the same data.
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

* microphone (Opus 16 kHz mono, 60 ms frames), speaker (``audio.stream`` with credits and
  the sha256 check) and back touch: :mod:`agentcade.testing.sim_audio` (``device.audio``).

None of these values comes from firmware documentation (there is none in the wheel):
they are the SDK's callers' values and this module's assumptions.

The device keeps a model of its state (:class:`SimState`: lights, head, animation,
behaviour, action, sound, expression runtime, what the screen shows) and can render the
screen as text (:meth:`SimDevice.render_text`, with an ASCII raster of a vector drawing)
and as PNG (:meth:`SimDevice.render_png`, needs Pillow).

The Daemon around the device is simulated too (robot-sdk.md §9): ``serve`` also opens the
control port (``device.control_url``: ``GET /daemon/status``, ``GET /daemon/devices`` in the
Daemon's shapes, ``runtime/daemon/control/rest.py``); :meth:`SimDevice.drop_device` /
:meth:`SimDevice.bring_back_device` take the robot away from behind a live Daemon (commands
are then dropped, as the Daemon's ``send_to_role`` does, and ``daemon.device.state`` is sent to
every desktop client); :meth:`SimDevice.close_sockets` closes the desktop sockets (a Daemon
restart; ``refuse=True`` keeps refusing until :meth:`SimDevice.reopen`);
:meth:`SimDevice.stall_link` makes the open sockets carry nothing either way until
:meth:`SimDevice.unstall_link`; ``hello_delay`` slows the handshake; ``holder`` names an
Application that holds the robot.

:func:`open_sim_robot` starts a device in a nursery and connects a :class:`SimRobot` (an
:class:`~agentcade.device.robots.SdkRobot` over the real ``DesktopRobotSession`` and
``WatcheRobot``) to it.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest, serve_websocket

from agentcade.core.allowlist import (
    FRONT_PAN,
    FRONT_TILT,
    KNOWN_CAPABILITIES,
    KNOWN_EFFECTS,
    PAN_RANGE,
    TILT_RANGE,
)
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.core.vector import CANVAS, Stroke, VectorError, decode_vector
from agentcade.device.daemon import ask_daemon
from agentcade.device.robots import SdkRobot, watched
from agentcade.net.server import Exchange, HttpLimits, HttpServer, Request
from agentcade.testing._nack import _Nack
from agentcade.testing.room import Room
from agentcade.testing.sim_audio import SimAudio

__all__ = [
    "SIM_ANIMATIONS",
    "SIM_CAPABILITIES",
    "SIM_ZONES",
    "Expression",
    "Lights",
    "SimDevice",
    "SimRobot",
    "SimState",
    "SimTimings",
    "open_sim_robot",
]

SIM_ANIMATIONS: tuple[str, ...] = ("standby", "happy", "sad", "shock", "smile", "thinking", "music")
SIM_ZONES: frozenset[str] = frozenset({"all", "side", "bottom"})
SIM_CAPABILITIES: tuple[str, ...] = tuple(
    sorted(
        KNOWN_CAPABILITIES
        | {
            # The SDK's firmware flags the allowed calls may need or the bundled apps read.
            "animation.prefetch.v1",
            "expression.vector_accessory.v1",
            "expression.audio_follow.v1",
            "audio.stream",  # host PCM playback (robot.audio.play_pcm), see sim_audio
        }
    )
)
"""Every capability a game can declare, plus the SDK firmware flags of the open calls."""

_CONTROL_LIMITS = HttpLimits(max_body=64 * 1024, request_timeout=10.0, idle_timeout=30.0)
"""The control port answers two small GETs; a client never needs more."""

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
class SimTimings:
    """How long simulated jobs take, in seconds (a move takes its ``duration_ms``)."""

    animation: float = 1.5
    action: float = 1.2
    audio: float = 1.0
    behavior_per_repeat: float = 2.0
    endless_behaviors: frozenset[str] = frozenset({"desktop_expression_panel"})


@dataclass
class Lights:
    """The light ring: off, a colour, or an effect."""

    on: bool = False
    color: str = "#000000"
    brightness: float = 0.0
    zone: str = "all"
    effect: str | None = None
    period_ms: int | None = None
    repeat: int | None = None

    def describe(self) -> str:
        if not self.on:
            return "off"
        text = f"{self.color} {round(self.brightness * 100)}% zone={self.zone}"
        if self.effect:
            times = "until stopped" if not self.repeat else f"x{self.repeat}"
            text += f" effect={self.effect} every {self.period_ms} ms {times}"
        return text


@dataclass
class Expression:
    """The expression runtime (the procedural eyes and their accessory)."""

    running: bool = False
    preset: str | None = None
    accessory: str = "none"
    custom_vector_path: str | None = None
    custom_accessory_layer: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    """Every other field as sent, ``*_milli`` turned back into floats (``gaze_x``: 0.5)."""

    def strokes(self) -> list[Stroke]:
        """The vector drawing shown, if any (empty when there is none or it is invalid)."""
        if self.accessory != "custom_vector" or not self.custom_vector_path:
            return []
        try:
            return decode_vector(self.custom_vector_path)
        except VectorError:
            return []


@dataclass
class SimState:
    """What the simulated robot is doing now."""

    lights: Lights = field(default_factory=Lights)
    pan: int = FRONT_PAN
    tilt: int = FRONT_TILT
    moving_to: tuple[int, int] | None = None
    animation: str | None = None
    behavior: str | None = None
    action: str | None = None
    sound: str | None = None
    expression: Expression = field(default_factory=Expression)
    screen: str = "standby"
    """``standby`` (the device's idle eyes), ``expression``, ``animation:<id>``,
    ``behavior:<id>``, ``official:<id>``, ``work:<id>`` or ``work:<id>/<clip>``."""

    @property
    def head(self) -> tuple[int, int]:
        return (self.pan, self.tilt)


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


def _envelope(type_: str, data: dict[str, Any], code: int = 0) -> str:
    return json.dumps({"type": type_, "code": code, "data": data}, separators=(",", ":"))


@dataclass(eq=False)
class _Link:
    """One desktop socket, and whether it is stalled (nothing flows while it is)."""

    ws: WebSocketConnection
    flowing: trio.Event = field(default_factory=trio.Event)

    def __post_init__(self) -> None:
        self.flowing.set()


class SimDevice:
    """The simulated robot; serve it with ``url = await nursery.start(device.serve)``.

    Attributes:
        state: the device model (:class:`SimState`), changed as commands arrive.
        received: every command received, ``(type, data)`` without ``command_id``.
        events: every ``evt.sdk.operation`` sent, ``(operation_id, state, reason)``.
        errors: bugs of the simulator itself (the command was NACKed
            ``sim_internal_error``); tests should assert it stays empty.
        online: whether the robot is connected to the (simulated) Daemon.
        holder: the id of an Application holding the robot (the control port says so).
        dropped: commands the Daemon dropped while the robot was away.
        sessions: how many desktop sockets have been accepted.
    """

    def __init__(
        self,
        *,
        capabilities: tuple[str, ...] = SIM_CAPABILITIES,
        animations: tuple[str, ...] = SIM_ANIMATIONS,
        timings: SimTimings | None = None,
        device_id: str = "SIM-0001",
        answer_ready: bool = True,
        hello_delay: float = 0.0,
        audio_speed: float = 1.0,
        room: Room | None = None,
        trace: Trace = NULL_TRACE,
    ) -> None:
        self.capabilities = capabilities
        self.animations = animations
        self.timings = timings or SimTimings()
        self.device_id = device_id
        self.answer_ready = answer_ready
        self.hello_delay = hello_delay
        self.online = True
        self.holder: str | None = None
        self.dropped: list[str] = []
        self.sessions = 0
        self.refused = 0
        """Desktop connections turned away while ``close_sockets(refuse=True)`` holds."""
        self.control_url: str | None = None
        self._links: set[_Link] = set()
        self._refusing = False
        self.state = SimState()
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.events: list[tuple[int, str, str | None]] = []
        self.errors: list[str] = []
        self.url: str | None = None
        self._clients: set[trio.MemorySendChannel[str | bytes]] = set()
        self._operations: dict[int, _Operation] = {}
        self._next_operation = 0
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self.audio = SimAudio(self._broadcast, speed=audio_speed, room=room, trace=trace)
        """Microphone, speaker and back touch (:mod:`agentcade.testing.sim_audio`)."""
        self.control = HttpServer(
            self._control, limits=_CONTROL_LIMITS, headers=[(b"server", b"agentcade-sim")]
        )
        """The Daemon's control port: the one HTTP loop (``agentcade.net.server``) over
        ``GET /daemon/status`` and ``GET /daemon/devices``."""

    # -- serving ---------------------------------------------------------------------------

    async def serve(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen until cancelled; ``task_status.started(url)`` once accepting."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.audio.attach(nursery)
            server = await nursery.start(serve_websocket, self._connection, host, port, None)
            self.url = f"ws://{host}:{server.port}"
            listeners = await nursery.start(
                partial(trio.serve_tcp, self.control.handle_connection, 0, host=host)
            )
            control_port = listeners[0].socket.getsockname()[1]
            self.control_url = f"http://{host}:{control_port}"
            task_status.started(self.url)

    async def _connection(self, request: WebSocketRequest) -> None:
        if self._refusing:
            self.refused += 1
            await request.reject(503)
            return
        ws = await request.accept()
        link = _Link(ws)
        self._links.add(link)
        self.sessions += 1
        send, receive = trio.open_memory_channel[str | bytes](math.inf)
        self._clients.add(send)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._writer, link, receive)
                try:
                    first = True
                    while True:
                        await link.flowing.wait()
                        raw = await ws.get_message()
                        await link.flowing.wait()
                        if first and self.hello_delay:
                            await trio.sleep(self.hello_delay)
                        first = False
                        if isinstance(raw, str):
                            self._on_text(raw, send)
                        else:
                            self.audio.on_binary(raw)
                except ConnectionClosed:
                    pass
                nursery.cancel_scope.cancel()
        finally:
            self._links.discard(link)
            self._clients.discard(send)
            send.close()

    @staticmethod
    async def _writer(link: _Link, receive: trio.MemoryReceiveChannel[str | bytes]) -> None:
        async for frame in receive:
            await link.flowing.wait()
            try:
                await link.ws.send_message(frame)
            except ConnectionClosed:
                return

    # -- the Daemon around the device --------------------------------------------------------

    def device_snapshot(self) -> dict[str, Any]:
        """The Daemon's device slot (``pairing/session.py`` ``snapshot``)."""
        return {
            "state": "connected" if self.online else "reconnecting",
            "online": self.online,
            "mode": "lan",
            "request_id": None,
            "last_error": None if self.online else "device_connection_lost",
        }

    def status_answer(self) -> dict[str, Any]:
        """``GET /daemon/status`` (``control/rest.py`` ``_status_response``)."""
        return {
            "application": {
                "selected": self.holder is not None,
                "current_app": self.holder,
                "selection_id": None,
                "state": "running" if self.holder else "not_selected",
                "process_id": None,
                "last_exit_code": None,
            },
            "runtime": {"external_url": self.url, "application_protocol": 1, "draining": False},
        }

    def devices_answer(self) -> dict[str, Any]:
        """``GET /daemon/devices`` (``runtime.py`` ``device_status``)."""
        return {"device": {**self.device_snapshot(), "reuniting": False}}

    async def _control(self, http: Exchange, request: Request) -> None:
        """The control port's routes (HTTP/1.1 by the one loop, ``agentcade.net.server``)."""
        answers = {"/daemon/status": self.status_answer, "/daemon/devices": self.devices_answer}
        answer = answers.get(request.path) if request.method == "GET" else None
        body = json.dumps(answer() if answer else {"error": "not_found"}).encode()
        await http.respond(200 if answer else 404, body)

    def _publish_device_state(self) -> None:
        self._broadcast(_envelope("daemon.device.state", self.device_snapshot()))
        self._touch()

    def drop_device(self) -> None:
        """The robot leaves the Daemon (power, Wi-Fi): its jobs stop without a word,
        commands are dropped, desktop clients get ``daemon.device.state`` online false."""
        if not self.online:
            return
        self.online = False
        for op in list(self._operations.values()):
            op.scope.cancel()  # no event: the device is not there to send one
            self._operations.pop(op.id, None)
        self._publish_device_state()

    def bring_back_device(self) -> None:
        """The robot is connected to the Daemon again (``daemon.device.state`` online)."""
        if self.online:
            return
        self.online = True
        self._publish_device_state()

    def close_sockets(self, *, refuse: bool = False) -> None:
        """Close every desktop socket (the Daemon went away); ``refuse``: and stay away."""
        self._refusing = refuse
        assert self._nursery is not None
        for link in list(self._links):
            link.flowing.set()
            self._nursery.start_soon(link.ws.aclose)

    @property
    def open_sockets(self) -> int:
        """How many desktop sockets are open now."""
        return len(self._links)

    def reopen(self) -> None:
        """Accept desktop sockets again after ``close_sockets(refuse=True)``."""
        self._refusing = False

    def stall_link(self) -> None:
        """The open desktop sockets stop carrying anything, either way (new ones work)."""
        for link in self._links:
            link.flowing = trio.Event()

    def unstall_link(self) -> None:
        """The stalled sockets flow again."""
        for link in self._links:
            link.flowing.set()

    def _broadcast(self, frame: str | bytes) -> None:
        for client in list(self._clients):
            try:
                client.send_nowait(frame)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._clients.discard(client)

    def _on_text(self, raw: str, reply: trio.MemorySendChannel[str | bytes]) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            return
        type_ = message["type"]
        data: dict[str, Any] = message["data"] if isinstance(message.get("data"), dict) else {}
        command_id = data.get("command_id")
        ids = {"command_id": command_id} if isinstance(command_id, str) else {}
        if type_ == "sys.client.hello":
            reply.send_nowait(_envelope("sys.ack", {"type": type_, "role": data.get("role")}))
            return
        if type_ == "sys.ping":
            reply.send_nowait(_envelope("sys.pong", data))
            return
        if type_.startswith("sys.") and type_ != "sys.sdk.ready.get":
            return  # sys.pong and the like: nothing to answer
        if not self.online:  # the Daemon has no robot to route it to
            self.dropped.append(type_)
            return
        payload = {k: v for k, v in data.items() if k != "command_id"}
        self.received.append((type_, payload))
        if type_ == "sys.sdk.ready.get":
            if self.answer_ready:
                reply.send_nowait(_envelope("evt.sdk.ready", self.ready_data()))
                reply.send_nowait(_envelope("sys.ack", ids))
            return
        try:
            result, start = self._command(type_, payload)
        except _Nack as nack:
            reply.send_nowait(_envelope("sys.nack", {**ids, "reason": nack.reason}, code=1))
        except Exception as exc:  # noqa: BLE001 - a sim bug: keep it visible, keep serving
            self.errors.append(f"{type_}: {type(exc).__name__}: {exc}")
            reply.send_nowait(
                _envelope("sys.nack", {**ids, "reason": "sim_internal_error"}, code=2)
            )
        else:
            reply.send_nowait(_envelope("sys.ack", {**ids, **result}))
            if start is not None:
                start()
        self._touch()

    def ready_data(self) -> dict[str, Any]:
        """The ``evt.sdk.ready`` payload."""
        return {
            "device_id": self.device_id,
            "capabilities": list(self.capabilities),
            "animations": list(self.animations),
            "firmware": "sim",
        }

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
        self._broadcast(_envelope("evt.sdk.operation", data))

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

    # -- rendering -------------------------------------------------------------------------

    def describe(self) -> str:
        """A few lines: screen, lights, head, what is playing."""
        st = self.state
        expr = st.expression
        screen = st.screen
        if screen == "expression":
            screen += f" preset={expr.preset} accessory={expr.accessory}"
            strokes = expr.strokes()
            if strokes:
                points = sum(len(s.points) for s in strokes)
                screen += f" ({len(strokes)} strokes, {points} points)"
        head = f"pan {st.pan} tilt {st.tilt}"
        if st.moving_to:
            head += f" -> {st.moving_to[0]},{st.moving_to[1]}"
        busy = [
            f"{name} {value}"
            for name, value in (
                ("behavior", st.behavior),
                ("action", st.action),
                ("sound", st.sound),
            )
            if value
        ]
        lines = [f"screen: {screen}", f"lights: {st.lights.describe()}", f"head: {head}"]
        if busy:
            lines.append("playing: " + ", ".join(busy))
        return "\n".join(lines)

    def render_text(self, width: int = 40, height: int = 20) -> str:
        """:meth:`describe`, then the vector drawing as ASCII (``#``) in a frame, if any."""
        text = self.describe()
        strokes = self.state.expression.strokes() if self.state.screen == "expression" else []
        if not strokes:
            return text
        return text + "\n" + ascii_raster(strokes, width, height)

    def render_png(self, path: str | Path | None = None, *, size: int = CANVAS) -> bytes:
        """The screen as a PNG (Pillow): the vector drawing, else the screen's name.

        Returns the PNG bytes; also writes them to ``path`` if given.

        Raises:
            RuntimeError: Pillow is not installed.
        """
        try:
            from PIL import Image, ImageDraw
        except ImportError as exc:  # pragma: no cover - a game binary leaves Pillow out
            raise RuntimeError("render_png needs Pillow (pip install pillow)") from exc
        image = Image.new("RGB", (size, size), "black")
        draw = ImageDraw.Draw(image)
        draw.ellipse((0, 0, size - 1, size - 1), outline=(60, 60, 60), width=2)
        scale = size / CANVAS
        strokes = self.state.expression.strokes() if self.state.screen == "expression" else []
        for stroke in strokes:
            points = [(x * scale, y * scale) for x, y in stroke.points]
            width = max(1, round(stroke.width * scale))
            if len(points) == 1:
                (x, y), r = points[0], width / 2
                draw.ellipse((x - r, y - r, x + r, y + r), fill="white")
            else:
                draw.line(points, fill="white", width=width, joint="curve")
        if not strokes:
            draw.text((size * 0.3, size * 0.48), self.state.screen, fill="white")
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = buffer.getvalue()
        if path is not None:
            Path(path).write_bytes(data)
        return data


_HANDLERS: dict[
    str, Callable[[SimDevice, dict[str, Any]], tuple[dict[str, Any], Callable[[], None] | None]]
] = {
    "ctrl.light.set": SimDevice._light_set,
    "ctrl.light.effect.play": SimDevice._light_effect,
    "ctrl.light.off": SimDevice._light_off,
    "ctrl.animation.play": SimDevice._animation_play,
    "ctrl.animation.prefetch": SimDevice._animation_prefetch,
    "ctrl.animation.stop": SimDevice._animation_stop,
    "ctrl.behavior.play": SimDevice._behavior_play,
    "ctrl.behavior.stop": SimDevice._behavior_stop,
    "ctrl.motion.move_to": SimDevice._move_to,
    "ctrl.motion.set_target": SimDevice._set_target,
    "ctrl.motion.action.play": SimDevice._action_play,
    "ctrl.motion.stop": SimDevice._motion_stop,
    "ctrl.audio.play": SimDevice._audio_play,
    "ctrl.expression.runtime.start": lambda dev, d: dev._expression(d, start=True),
    "ctrl.expression.runtime.update": lambda dev, d: dev._expression(d, start=False),
    "ctrl.expression.runtime.stop": SimDevice._expression_stop,
    "resource.expression.play": SimDevice._resource_expression,
    "resource.work.play": SimDevice._work_play,
    "ctrl.job.cancel": SimDevice._job_cancel,
    "ctrl.microphone.open": lambda dev, d: (dev.audio.mic_open(d), None),
    "ctrl.microphone.close": lambda dev, d: (dev.audio.mic_close(d), None),
    "ctrl.audio.stream.begin": lambda dev, d: (dev.audio.stream_begin(d), None),
    "ctrl.audio.stop": lambda dev, d: (dev.audio.stop(d), None),
}
assert set(_HANDLERS) >= _JOB_TYPES


def ascii_raster(strokes: list[Stroke], width: int = 40, height: int = 20) -> str:
    """Strokes drawn with ``#`` on a ``width`` x ``height`` grid inside a ``+--+`` frame."""
    grid = [[" "] * width for _ in range(height)]

    def cell(x: int, y: int) -> tuple[int, int]:
        return (min(width - 1, x * width // CANVAS), min(height - 1, y * height // CANVAS))

    for stroke in strokes:
        pts = [cell(x, y) for x, y in stroke.points]
        if len(pts) == 1:
            pts = pts * 2
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            steps = max(abs(x1 - x0), abs(y1 - y0), 1)
            for i in range(steps + 1):
                x = round(x0 + (x1 - x0) * i / steps)
                y = round(y0 + (y1 - y0) * i / steps)
                grid[y][x] = "#"
    border = "+" + "-" * width + "+"
    return "\n".join([border, *("|" + "".join(row) + "|" for row in grid), border])


class SimRobot(SdkRobot):
    """An :class:`SdkRobot` whose device is a :class:`SimDevice` (``.device``)."""

    device: SimDevice


class WallClock(trio.abc.Clock):
    """``time.perf_counter()`` as a trio clock: a device in a process of its own
    (:mod:`agentcade.testing.sim_process`) and a host or bench that runs with this clock too
    read the same times (trio's default clock starts at a random offset in each run)."""

    def start_clock(self) -> None:
        pass

    def current_time(self) -> float:
        return time.perf_counter()

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return deadline - time.perf_counter()


@asynccontextmanager
async def open_sim_robot(
    *,
    device: SimDevice | None = None,
    command_timeout: float = 2.0,
    out: TextIO | None = None,
    trace: Trace = NULL_TRACE,
    notice: Callable[[str], None] | None = None,
) -> AsyncIterator[SimRobot]:
    """Start a simulated device and connect a real SDK robot to it over a socket.

    ``robot.device`` is the device (state, render). The robot's link is watched
    (:meth:`SdkRobot.watch`, asking the simulated control port), so it reconnects when the
    device's hooks take it away. Leaving the block closes the SDK robot and stops the device.
    (A robot whose clock must not wait for a busy host: :mod:`agentcade.testing.sim_process`.)
    """
    device = device or SimDevice()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(device.serve)
        assert device.control_url is not None
        robot = await SimRobot.connect(
            url,
            command_timeout=command_timeout,
            out=out,
            name="sim",
            control=partial(ask_daemon, device.control_url),
        )
        assert isinstance(robot, SimRobot)
        robot.device = device
        try:
            async with watched(robot, trace=trace, notice=notice):
                yield robot
        finally:
            nursery.cancel_scope.cancel()
