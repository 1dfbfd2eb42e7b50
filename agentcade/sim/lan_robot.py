"""The simulated robot on the LAN: paired with the real Daemon the way firmware is.

:class:`LanRobot` is the robot's network side for a :class:`~agentcade.sim.SimDevice`
(robot-sdk.md §10; ``watcherobot/runtime/daemon/pairing/``): inside a
:class:`~agentcade.sim.netns.PrivateNetwork` it listens for the Daemon's UDP
broadcasts on port 37021 and

* answers ``pair.request`` (with its pairing code) with ``pair.accept`` and a session
  token it makes up (64 hex), from :data:`~agentcade.sim.netns.ROBOT_IP`;
* answers ``link.reunite.request`` (a restarted Daemon looking for the robot it remembers)
  with ``link.reunite.accept``: the challenge's HMAC under the binding secret derived from
  the first pairing's token, and a new session token;
* opens the Daemon's WebSocket **from the same IP**, sends ``sys.client.hello`` (role
  ``hardware`` and the pairing fields), and then carries every frame unchanged both ways
  between the Daemon and the device (the Daemon answers ``sys.ping`` itself; the device
  already sends Opus microphone packets and paces its speaker with credits).

When the link closes under it the robot says hello again with the same credentials every
:data:`RETRY` seconds (the Daemon keeps the slot ``RECONNECTING`` for 30 s);
:meth:`LanRobot.drop` takes it off the network until :meth:`LanRobot.come_back`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

import trio
from trio_websocket import (
    ConnectionClosed,
    HandshakeError,
    WebSocketConnection,
    open_websocket_url,
    wrap_client_stream,
)

from agentcade.sim import SimDevice
from agentcade.sim.netns import BROADCAST_IP, DAEMON_IP, ROBOT_IP, PrivateNetwork

__all__ = ["PAIRING_PORT", "LanRobot"]

PAIRING_PORT = 37021
"""Where the Daemon broadcasts (``pairing/udp.py`` ``PAIRING_UDP_PORT``, whatever it binds)."""
PROTOCOL = "watcher-lan-pairing"
RETRY = 0.5
"""Seconds between hellos while the link is down."""
_BINDING_INFO = b"watcher-link-binding-v1"
_REUNITE_PREFIX = "watcher-link-reunite-v1"


@dataclass(frozen=True)
class _Credentials:
    request_id: str
    daemon_instance_id: str
    session_token: str
    mode: str
    version: str
    port: int

    def hello(self) -> str:
        return json.dumps({"type": "sys.client.hello", "code": 0, "data": {
            "role": "hardware", "pairing_protocol": PROTOCOL, "pairing_version": self.version,
            "pair_request_id": self.request_id, "daemon_instance_id": self.daemon_instance_id,
            "session_token": self.session_token, "mode": self.mode,
        }}, separators=(",", ":"))


def binding_secret(session_token: str) -> str:
    """The long-term secret both ends derive from the first pairing's token."""
    return hmac.new(session_token.encode(), _BINDING_INFO, hashlib.sha256).hexdigest()


def reunite_mac(secret: str, *, request_id: str, nonce: str, instance: str, mode: str) -> str:
    """The answer to a reunite challenge (``pairing/protocol.py`` ``reunite_response_mac``)."""
    message = "|".join((_REUNITE_PREFIX, request_id, nonce, instance, mode))
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


class LanRobot:
    """See the module docstring; run it with ``await nursery.start(robot.run)``.

    Attributes:
        hellos: hellos the Daemon acknowledged (the first pairing, each return).
        reunites: reunite challenges answered.
        refused: hellos the Daemon refused.
    """

    def __init__(self, net: PrivateNetwork, device: SimDevice, *, code: str = "246810") -> None:
        self.net = net
        self.device = device
        self.code = code
        self.hellos = 0
        self.reunites = 0
        self.refused = 0
        self._credentials: _Credentials | None = None
        self._secret: str | None = None
        self._fresh = trio.Event()
        self._away = False
        self._back = trio.Event()
        self._linked = False
        self._changed = trio.Event()
        self._link_scope: trio.CancelScope | None = None

    @property
    def linked(self) -> bool:
        """Whether the robot's socket to the Daemon is open and greeted."""
        return self._linked

    async def wait_linked(self, linked: bool = True) -> None:
        while self._linked != linked:
            await self._changed.wait()

    def _set_linked(self, linked: bool) -> None:
        self._linked = linked
        self._changed.set()
        self._changed = trio.Event()

    def drop(self) -> None:
        """Off the network: the socket to the Daemon closes and no hello is said."""
        self._away = True
        self._back = trio.Event()
        if self._link_scope is not None:
            self._link_scope.cancel()

    def come_back(self) -> None:
        """Back on the network: hello again with the same credentials."""
        self._away = False
        self._back.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen for the Daemon and keep the link up until cancelled."""
        broadcast = self.net.udp_socket((BROADCAST_IP, PAIRING_PORT))
        unicast = self.net.udp_socket((ROBOT_IP, PAIRING_PORT))
        with broadcast, unicast:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._listen, broadcast, unicast)
                nursery.start_soon(self._listen, unicast, unicast)
                nursery.start_soon(self._keep_link)
                task_status.started()

    # -- UDP -----------------------------------------------------------------------------

    async def _listen(self, sock: trio.socket.SocketType, reply: trio.socket.SocketType) -> None:
        while True:
            data, address = await sock.recvfrom(4096)
            try:
                message = json.loads(data)
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("protocol") != PROTOCOL:
                continue
            answer = self._answer(message)
            if answer is not None:
                await reply.sendto(json.dumps(answer, separators=(",", ":")).encode(), address)

    def _answer(self, m: dict[str, Any]) -> dict[str, Any] | None:
        kind = m.get("type")
        common = {"protocol": PROTOCOL, "request_id": m.get("request_id"),
                  "daemon_instance_id": m.get("daemon_instance_id")}
        port = m.get("websocket_port")
        if not isinstance(port, int):
            return None
        if kind == "pair.request" and m.get("pairing_code") == self.code:
            current = self._credentials
            if current is not None and current.request_id == m["request_id"]:
                token = current.session_token  # the same broadcast again: the same answer
            else:
                token = secrets.token_hex(32)
                self._secret = binding_secret(token)
                self._use(_Credentials(m["request_id"], m["daemon_instance_id"], token,
                                       m["target_mode"], "1.0", port))
            return {"type": "pair.accept", **common, "version": "1.0",
                    "target_mode": m["target_mode"], "session_token": token}
        if kind == "link.reunite.request" and self._secret is not None:
            current = self._credentials
            if current is not None and current.request_id == m["request_id"]:
                token = current.session_token
            else:
                token = secrets.token_hex(32)
                self.reunites += 1
                self._use(_Credentials(m["request_id"], m["daemon_instance_id"], token,
                                       m["target_mode"], "1.1", port))
            mac = reunite_mac(self._secret, request_id=m["request_id"], nonce=m["nonce"],
                              instance=m["daemon_instance_id"], mode=m["target_mode"])
            return {"type": "link.reunite.accept", **common, "version": "1.1",
                    "nonce": m["nonce"], "target_mode": m["target_mode"],
                    "response_mac": mac, "session_token": token}
        return None

    def _use(self, credentials: _Credentials) -> None:
        self._credentials = credentials
        self._fresh.set()
        self._fresh = trio.Event()

    # -- the WebSocket -------------------------------------------------------------------

    async def _keep_link(self) -> None:
        while True:
            if self._away:
                await self._back.wait()
            credentials = self._credentials
            if credentials is None:
                await self._fresh.wait()
                continue
            accepted = True  # unless the Daemon refuses the hello
            with trio.CancelScope() as self._link_scope:
                accepted = await self._link(credentials)
            self._link_scope = None
            self._set_linked(False)
            if not accepted and credentials is self._credentials:
                # Refused (the Daemon forgot this session): wait for a new pairing or reunite.
                with trio.move_on_after(RETRY * 4):
                    await self._fresh.wait()
                continue
            await trio.sleep(RETRY)

    async def _link(self, credentials: _Credentials) -> bool:
        """One connection: hello, then frames both ways until either side closes.
        False when the Daemon refused the hello."""
        try:
            stream = await self.net.connect_tcp(DAEMON_IP, credentials.port, local=ROBOT_IP)
        except OSError:
            return True
        try:
            async with stream, trio.open_nursery() as nursery:
                ws = await wrap_client_stream(nursery, stream, DAEMON_IP, "/")
                await ws.send_message(credentials.hello())
                ack = json.loads(await ws.get_message())
                if ack.get("type") != "sys.ack":
                    self.refused += 1
                    await ws.aclose()
                    return False
                self.hellos += 1
                assert self.device.url is not None
                async with open_websocket_url(self.device.url) as device:
                    self._set_linked(True)
                    async with trio.open_nursery() as pump:
                        pump.start_soon(_copy, ws, device, pump.cancel_scope)
                        pump.start_soon(_copy, device, ws, pump.cancel_scope)
                await ws.aclose()
        except (ConnectionClosed, HandshakeError, OSError, ValueError):
            pass
        return True


async def _copy(source: WebSocketConnection, sink: WebSocketConnection, scope: trio.CancelScope) -> None:
    try:
        while True:
            await sink.send_message(await source.get_message())
    except ConnectionClosed:
        pass
    scope.cancel()
