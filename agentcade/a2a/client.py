"""A2A 1.0 client for remote games, on trio + h11 (one HTTP/1.1 connection per request).

Every failure of a remote game reaches the caller as one exception type,
``GameRemoteError(kind, message)`` (``agentcade.core.errors``; ``kind`` is a ``RemoteErrorKind``)::

    GameRemoteError
        kind "network"   connect/TLS/read/write failed, connection dropped mid-stream
        kind "timeout"   no reply within ``reply_timeout`` (or connect timeout)
        kind "http"      a non-200 status
        kind "rpc"       a JSON-RPC error (unary body or ``event: error``)
        kind "failed"    the task ended FAILED or REJECTED (message: the game's text)
        kind "canceled"  the task ended CANCELED
        kind "protocol"  bad JSON, bad SSE, a reply that is not a GameReply, a reply in
                         another game-protocol version than the negotiated one, no final reply
                         (``ReplyCutShort`` when the stream ended before the final reply)
        kind "card"      the agent card is missing or unusable (``fetch_card``)

Cancellation is never caught: cancelling a ``stream()`` closes its connection, which the
server sees as a disconnect and turns into cancelling the game's work.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlsplit

import h11
import trio

from agentcade.a2a import wire
from agentcade.a2a.card import CardError, CardInfo, read_card
from agentcade.a2a.sse import SSEDecoder, SSEEvent
from agentcade.core.errors import GameRemoteError, ReplyCutShort
from agentcade.core.protocol import GameInput, GameReply, ProtocolError, negotiate
from agentcade.core.tls import client_context
from agentcade.core.trace import current_request_id
from agentcade.core.under_test import UNREVEALED_EXTENSION, UNREVEALED_METHOD
from agentcade.net._http import H11Stream

__all__ = [
    "REPLY_TIMEOUT",
    "A2AClient",
    "A2AReplyStream",
    "GameRemoteError",
    "message_id",
    "negotiate_protocol",
]

REPLY_TIMEOUT = 210.0
"""Longest silence (no reply; SSE pings do not count) before a request is given up.
A turn may legitimately take long (drawing, a slow model), but 3.5 minutes of nothing is
a dead game."""
CONNECT_TIMEOUT = 10.0


def message_id() -> str:
    """A new A2A ``messageId`` that carries the request id (the communication design:
    "``message_id`` 是请求 ID").

    The request id is the user's turn (``agentcade.core.trace.current_request_id``), which
    may send more than one message (switching games ends one and starts another), while A2A
    wants every message's id unique; so the id is ``<request id>.<8 hex>``. Our server runs
    the game in the scope of the whole ``messageId``, so a served game's trace records are
    found by the turn that caused them.
    """
    suffix = uuid.uuid4().hex[:8]
    rid = current_request_id()
    return f"{rid}.{suffix}" if rid else uuid.uuid4().hex
MAX_UNARY_BODY = 1024 * 1024
CONTEXT_HEADER = b"x-a2a-context-id"
"""Sent with every request so a load balancer can keep a game session on one replica."""


def negotiate_protocol(card: CardInfo) -> str | None:
    """The newest game-protocol version both we and the card list (None: no common one)."""
    return negotiate(card.protocols)


@contextmanager
def _translate(what: str) -> Iterator[None]:
    """The one choke point mapping transport errors to GameRemoteError."""
    try:
        yield
    except trio.BrokenResourceError as exc:
        if isinstance(exc.__cause__, ssl.SSLError):  # the TLS handshake (trio wraps it)
            tls = exc.__cause__
            why = getattr(tls, "verify_message", None) or tls.reason or str(tls)
            raise GameRemoteError("network", f"{what}: TLS failed: {why}") from exc
        raise GameRemoteError("network", f"{what}: {str(exc) or type(exc).__name__}") from exc
    except (OSError, trio.ClosedResourceError) as exc:
        raise GameRemoteError("network", f"{what}: {str(exc) or type(exc).__name__}") from exc
    except h11.ProtocolError as exc:
        raise GameRemoteError("protocol", f"{what}: bad HTTP from the game: {exc}") from exc


class _Target:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise GameRemoteError("protocol", f"not an http(s) URL: {url!r}")
        self.url = url
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        default = 443 if self.https else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if self.port == default else f"{host}:{self.port}"
        path = parts.path or "/"
        self.target = path + (f"?{parts.query}" if parts.query else "")


async def _next_event(conn: H11Stream, gone: str) -> Any:
    """``conn.next_event()``, reporting a peer that closed mid-message as "network"."""
    try:
        return await conn.next_event()
    except h11.RemoteProtocolError as exc:
        if conn.eof:
            raise GameRemoteError("network", gone) from exc
        raise


def _status_reply(
    state: str, message: object, protocol: str | None = None
) -> tuple[GameReply, bool] | None:
    """Map one task status to a reply (None: nothing to yield) or raise for failures."""
    if state in (wire.COMPLETED, *wire.INTERRUPTED):
        if not isinstance(message, dict):
            raise GameRemoteError("protocol", f"the final status ({state}) carries no reply")
        return wire.reply_from_parts(message.get("parts"), protocol=protocol), True
    if state == wire.WORKING:
        if isinstance(message, dict):
            return wire.reply_from_parts(message.get("parts"), protocol=protocol), False
        return None
    if state in (wire.FAILED, wire.REJECTED):
        text = "the game failed this request"
        if isinstance(message, dict):
            with contextlib.suppress(ProtocolError):  # keep the generic text
                text = wire.reply_from_parts(message.get("parts")).text or text
        raise GameRemoteError("failed", text)
    if state == wire.CANCELED:
        raise GameRemoteError("canceled", "the game canceled the request")
    return None  # SUBMITTED, UNSPECIFIED


def _result_replies(result: object, protocol: str | None = None) -> list[tuple[GameReply, bool]]:
    """Replies in one JSON-RPC result (a StreamResponse or a SendMessageResponse).

    ``protocol``: the negotiated game-protocol version every reply must speak.
    """
    if not isinstance(result, dict):
        raise GameRemoteError("protocol", "a JSON-RPC result is not an object")
    try:
        if "statusUpdate" in result:
            status = (result["statusUpdate"] or {}).get("status") or {}
            found = _status_reply(
                wire.state_name(status.get("state")), status.get("message"), protocol
            )
            return [found] if found else []
        if "task" in result or "status" in result:
            task = result.get("task", result) or {}
            status = task.get("status") or {}
            state = wire.state_name(status.get("state"))
            if state == wire.WORKING:
                return []  # a snapshot; the updates follow
            found = _status_reply(state, status.get("message"), protocol)
            return [found] if found else []
        if "message" in result:
            message = result["message"] or {}
            return [(wire.reply_from_parts(message.get("parts"), protocol=protocol), True)]
    except ProtocolError as exc:
        raise GameRemoteError("protocol", str(exc)) from exc
    except AttributeError as exc:
        raise GameRemoteError("protocol", f"malformed A2A result: {exc}") from exc
    return []  # artifactUpdate and future payloads: not for us


def _rpc_payload(text: str) -> object:
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise GameRemoteError("protocol", f"the game sent invalid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise GameRemoteError("protocol", "a JSON-RPC response is not an object")
    error = payload.get("error")
    if error is not None:
        if isinstance(error, dict):
            raise GameRemoteError("rpc", f"{error.get('code')}: {error.get('message')}")
        raise GameRemoteError("rpc", str(error))
    if "result" not in payload:
        raise GameRemoteError("protocol", "a JSON-RPC response has neither result nor error")
    return payload["result"]


class A2AReplyStream:
    """``async for reply, final in replies``: the game's replies to one request.

    Ends after the final reply. Raises ``GameRemoteError`` as described in the module.
    """

    def __init__(
        self,
        conn: H11Stream,
        *,
        sse: bool,
        reply_timeout: float,
        first: bytes,
        protocol: str | None = None,
    ) -> None:
        self._conn = conn
        self._protocol = protocol
        self._sse = sse
        self._timeout = reply_timeout
        self._decoder = SSEDecoder()
        self._pending: deque[tuple[GameReply, bool]] = deque()
        self._body = bytearray()
        self._ended = False
        self._final = False
        self._deadline = trio.current_time() + reply_timeout
        self.results: list[object] = []
        """Every JSON-RPC result received, raw (``check`` inspects the DataParts)."""
        if first:
            self._feed(first)

    def __aiter__(self) -> A2AReplyStream:
        return self

    def _feed(self, data: bytes) -> None:
        if not self._sse:
            self._body += data
            if len(self._body) > MAX_UNARY_BODY:
                raise GameRemoteError("protocol", "the game's JSON reply is too large")
            return
        try:
            events = self._decoder.feed(data)
        except ValueError as exc:
            raise GameRemoteError("protocol", f"bad SSE from the game: {exc}") from exc
        for event in events:
            self._on_event(event)

    def _on_event(self, event: SSEEvent) -> None:
        if event.event == "error":
            _rpc_payload(event.data)  # raises for a JSON-RPC error
            raise GameRemoteError("rpc", f"error event: {event.data[:200]}")
        result = _rpc_payload(event.data)
        self.results.append(result)
        self._pending.extend(_result_replies(result, self._protocol))

    async def __anext__(self) -> tuple[GameReply, bool]:
        while True:
            if self._final:
                raise StopAsyncIteration
            if self._pending:
                reply = self._pending.popleft()
                self._final = reply[1]
                self._deadline = trio.current_time() + self._timeout
                return reply
            if self._ended:
                if not self._sse:
                    self._sse = True  # parsed once, below
                    result = _rpc_payload(self._body.decode())
                    self.results.append(result)
                    self._pending.extend(_result_replies(result, self._protocol))
                    continue
                raise ReplyCutShort("the game ended the stream before its final reply")
            with trio.move_on_at(self._deadline) as waited, _translate("reading the reply"):
                event = await _next_event(self._conn, "the game dropped the connection mid-reply")
            if waited.cancelled_caught:
                raise GameRemoteError("timeout", f"no reply from the game for {self._timeout:g} s")
            if isinstance(event, h11.Data):
                self._feed(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                self._ended = True


class A2AClient:
    """Talks A2A 1.0 JSON-RPC to remote games.

    Args:
        reply_timeout: longest wait for the next reply of a request.
        connect_timeout: longest wait for TCP (+TLS) setup.
        ssl_context: for https (default: ``agentcade.core.tls.client_context()``, the
            operating system's trust store).
    """

    def __init__(
        self,
        *,
        reply_timeout: float = REPLY_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        user_agent: str = "agentcade",
    ) -> None:
        self.reply_timeout = reply_timeout
        self.connect_timeout = connect_timeout
        self._ssl = ssl_context
        self.user_agent = user_agent

    async def _connect(self, target: _Target) -> H11Stream:
        try:
            with trio.fail_after(self.connect_timeout), _translate(f"connecting to {target.url}"):
                stream: trio.abc.Stream = await trio.open_tcp_stream(target.host, target.port)
                if target.https:
                    if self._ssl is None:
                        self._ssl = client_context()
                    tls = trio.SSLStream(
                        stream, self._ssl, server_hostname=target.host, https_compatible=True
                    )
                    try:
                        await tls.do_handshake()
                    except BaseException:
                        await trio.aclose_forcefully(stream)
                        raise
                    stream = tls
        except trio.TooSlowError as exc:
            raise GameRemoteError("timeout", f"connecting to {target.url} timed out") from exc
        except ssl.SSLError as exc:
            raise GameRemoteError("network", f"TLS with {target.url} failed: {exc}") from exc
        return H11Stream(stream, h11.CLIENT)

    async def _request(
        self,
        target: _Target,
        method: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes = b"",
    ) -> tuple[H11Stream, h11.Response]:
        """Send one request and read the response head (caller closes the connection)."""
        conn = await self._connect(target)
        try:
            all_headers = [
                (b"host", target.host_header.encode()),
                (b"user-agent", self.user_agent.encode()),
                (b"a2a-version", b"1.0"),
                *headers,
            ]
            if method == b"POST":
                all_headers.append((b"content-length", str(len(body)).encode()))
            with _translate(f"{method.decode()} {target.url}"):
                await conn.send(
                    h11.Request(method=method, target=target.target, headers=all_headers)
                )
                if body:
                    await conn.send(h11.Data(data=body))
                await conn.send(h11.EndOfMessage())
                with trio.move_on_after(self.reply_timeout) as waited:
                    response = await _next_event(conn, f"{target.url} closed the connection")
                    while isinstance(response, h11.InformationalResponse):  # 1xx: ignored (RFC 9110)
                        response = await _next_event(conn, f"{target.url} closed the connection")
            if waited.cancelled_caught:
                raise GameRemoteError(
                    "timeout", f"no response from {target.url} for {self.reply_timeout:g} s"
                )
            if isinstance(response, h11.ConnectionClosed):
                raise GameRemoteError("network", f"{target.url} closed the connection")
            if not isinstance(response, h11.Response):
                raise GameRemoteError("protocol", f"{target.url} answered with {type(response).__name__}")
        except BaseException:
            await conn.aclose()
            raise
        return conn, response

    async def _read_all(self, conn: H11Stream, what: str) -> bytes:
        body = bytearray()
        with trio.move_on_after(self.reply_timeout) as waited, _translate(what):
            while True:
                event = await conn.next_event()
                if isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > MAX_UNARY_BODY:
                        raise GameRemoteError("protocol", f"{what}: body too large")
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
        if waited.cancelled_caught:
            raise GameRemoteError("timeout", f"{what}: timed out")
        return bytes(body)

    async def fetch_card(self, base_url: str) -> tuple[dict[str, Any], CardInfo]:
        """GET ``<base_url>/.well-known/agent-card.json`` and read it.

        Raises:
            GameRemoteError: kind "card" for an unusable card, else the transport kinds.
        """
        url = base_url.rstrip("/") + "/.well-known/agent-card.json"
        target = _Target(url)
        conn, response = await self._request(target, b"GET", [(b"accept", b"application/json")])
        try:
            body = await self._read_all(conn, f"reading {url}")
        finally:
            await conn.aclose()
        if response.status_code != 200:
            raise GameRemoteError("http", f"HTTP {response.status_code} for {url}")
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise GameRemoteError("card", f"{url} is not JSON: {exc}") from exc
        try:
            return data, read_card(data)
        except CardError as exc:
            raise GameRemoteError("card", str(exc)) from exc

    @asynccontextmanager
    async def stream(
        self,
        url: str,
        context_id: str,
        game_input: GameInput,
        *,
        protocol: str | None = None,
    ) -> AsyncIterator[A2AReplyStream]:
        """POST ``SendStreamingMessage`` with ``game_input``; iterate the replies.

        Args:
            url: the JSON-RPC endpoint.
            context_id: the game session.
            game_input: what to send.
            protocol: the negotiated game-protocol version: it replaces ``game_input``'s
                ``protocol`` field, and a reply in any other version is a "protocol" error.
                None: the version of ``game_input``.
        """
        if protocol is not None and protocol != game_input.protocol:
            game_input = game_input.model_copy(update={"protocol": protocol})
        target = _Target(url)
        message = {
            "messageId": message_id(),
            "contextId": context_id,
            "role": "ROLE_USER",
            "parts": [{"data": game_input.to_wire()}],
        }
        body = json.dumps(
            {
                "method": "SendStreamingMessage",
                "params": {"message": message},
                "id": str(uuid.uuid4()),
                "jsonrpc": "2.0",
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"accept", b"text/event-stream"),
            (b"cache-control", b"no-store"),
            (CONTEXT_HEADER, context_id.encode()),
        ]
        conn, response = await self._request(target, b"POST", headers, body)
        try:
            if response.status_code != 200:
                snippet = (await self._read_all(conn, "reading the error"))[:200]
                raise GameRemoteError(
                    "http",
                    f"HTTP {response.status_code} from {url}: {snippet.decode('utf-8', 'replace')}",
                )
            ctype = b""
            for key, value in response.headers:
                if key == b"content-type":
                    ctype = value.lower()
            yield A2AReplyStream(
                conn,
                sse=ctype.startswith(b"text/event-stream"),
                reply_timeout=self.reply_timeout,
                first=b"",
                protocol=game_input.protocol,
            )
        finally:
            await conn.aclose()

    async def unrevealed(self, url: str, context_id: str) -> list[str] | None:
        """Ask a game in test mode what it keeps unrevealed in session ``context_id`` (the
        test extension, ``agentcade.core.under_test``; only for a card that declares it).

        Returns None when the game has no such session or does not answer the method.

        Raises:
            GameRemoteError: the game cannot be reached.
        """
        body = json.dumps(
            {"method": UNREVEALED_METHOD, "params": {"contextId": context_id},
             "id": str(uuid.uuid4()), "jsonrpc": "2.0"},
            separators=(",", ":"),
        ).encode()
        headers = [(b"content-type", b"application/json"),
                   (b"a2a-extensions", UNREVEALED_EXTENSION.encode())]
        conn, response = await self._request(_Target(url), b"POST", headers, body)
        try:
            data = await self._read_all(conn, f"asking {url} {UNREVEALED_METHOD}")
        finally:
            await conn.aclose()
        if response.status_code != 200:
            return None
        try:
            result = json.loads(data).get("result")
        except (ValueError, AttributeError):
            return None
        hidden = result.get("unrevealed") if isinstance(result, dict) else None
        return [str(h) for h in hidden] if isinstance(hidden, list) else None

    async def send(
        self,
        url: str,
        context_id: str,
        game_input: GameInput,
        *,
        protocol: str | None = None,
    ) -> list[GameReply]:
        """Convenience: all replies of one request (the last one is the final)."""
        async with self.stream(url, context_id, game_input, protocol=protocol) as replies:
            return [reply async for reply, _final in replies]
