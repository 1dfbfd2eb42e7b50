"""The simulated robot's link and the Daemon around it: a WebSocket server on trio-websocket.

:class:`SimDevice` is a WebSocket server that a real ``watcherobot`` transport connects to
(``DesktopRobotSession(url)``; the Daemon's raw routing is impersonated too: it answers
``sys.client.hello``). It follows robot-sdk.md §3-4: ``sys.client.hello`` -> ``sys.ack
{type, role}``; ``sys.sdk.ready.get`` -> ``evt.sdk.ready`` (device_id, capabilities,
animations) *before* the ACK, so ``start()`` returns with the capabilities; ``sys.ping`` ->
``sys.pong`` with the same data. Every other command goes to the firmware
(:class:`~agentcade.sim.firmware.SimFirmware`, which it is), binary audio frames to
:mod:`agentcade.sim.audio` (``device.audio``); the screen is drawn by
:mod:`agentcade.sim.screen` (:meth:`SimDevice.render_text`, :meth:`SimDevice.render_png`).

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
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, WebSocketRequest, serve_websocket

from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.core.vector import CANVAS
from agentcade.net.server import Exchange, HttpLimits, HttpServer, Request
from agentcade.sim import screen
from agentcade.sim._nack import _Nack
from agentcade.sim.audio import SimAudio
from agentcade.sim.firmware import SimFirmware, envelope
from agentcade.sim.room import Room
from agentcade.sim.state import SIM_ANIMATIONS, SIM_CAPABILITIES, SimTimings

__all__ = ["SimDevice"]

_CONTROL_LIMITS = HttpLimits(max_body=64 * 1024, request_timeout=10.0, idle_timeout=30.0)
"""The control port answers two small GETs; a client never needs more."""


@dataclass(eq=False)
class _Link:
    """One desktop socket, and whether it is stalled (nothing flows while it is)."""

    ws: WebSocketConnection
    flowing: trio.Event = field(default_factory=trio.Event)

    def __post_init__(self) -> None:
        self.flowing.set()


class SimDevice(SimFirmware):
    """The simulated robot; serve it with ``url = await nursery.start(device.serve)``.

    Attributes:
        state: the device model (:class:`~agentcade.sim.state.SimState`), changed as commands arrive.
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
        super().__init__(animations=animations, timings=timings)
        self.capabilities = capabilities
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
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.errors: list[str] = []
        self.url: str | None = None
        self._clients: set[trio.MemorySendChannel[str | bytes]] = set()
        self._nursery = None
        self.audio = SimAudio(self._broadcast, speed=audio_speed, room=room, trace=trace)
        """Microphone, speaker and back touch (:mod:`agentcade.sim.audio`)."""
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
        self._broadcast(envelope("daemon.device.state", self.device_snapshot()))
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
            reply.send_nowait(envelope("sys.ack", {"type": type_, "role": data.get("role")}))
            return
        if type_ == "sys.ping":
            reply.send_nowait(envelope("sys.pong", data))
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
                reply.send_nowait(envelope("evt.sdk.ready", self.ready_data()))
                reply.send_nowait(envelope("sys.ack", ids))
            return
        try:
            result, start = self._command(type_, payload)
        except _Nack as nack:
            reply.send_nowait(envelope("sys.nack", {**ids, "reason": nack.reason}, code=1))
        except Exception as exc:  # noqa: BLE001 - a sim bug: keep it visible, keep serving
            self.errors.append(f"{type_}: {type(exc).__name__}: {exc}")
            reply.send_nowait(
                envelope("sys.nack", {**ids, "reason": "sim_internal_error"}, code=2)
            )
        else:
            reply.send_nowait(envelope("sys.ack", {**ids, **result}))
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

    # -- the screen ------------------------------------------------------------------------

    def describe(self) -> str:
        """A few lines: screen, lights, head, what is playing (:func:`screen.describe`)."""
        return screen.describe(self.state)

    def render_text(self, width: int = 40, height: int = 20) -> str:
        """:meth:`describe`, then the vector drawing as ASCII (``#``) in a frame, if any."""
        return screen.render_text(self.state, width, height)

    def render_png(self, path: str | Path | None = None, *, size: int = CANVAS) -> bytes:
        """The screen as a PNG (Pillow): :func:`screen.render_png`.

        Raises:
            RuntimeError: Pillow is not installed.
        """
        return screen.render_png(self.state, path, size=size)
