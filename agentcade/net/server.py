"""The one HTTP/1.1 server loop: the A2A server, the local pages, the simulated Daemon, the fake model.

Theory of operation
-------------------
One trio task per TCP connection (``HttpServer.handle_connection``) runs request cycles
with h11 (``H11Stream``), one at a time (keep-alive; pipelined requests wait in h11's
buffer):

1. wait for the first byte of a request, at most ``idle_timeout`` (then close quietly);
2. read head and body within ``request_timeout`` (408 otherwise); the head is limited to
   ``max_header`` (431), the body to ``max_body`` (413, from Content-Length before a byte
   is read, or while a chunked body arrives); a malformed request is h11's status (400);
3. hand the ``Request`` to the route handler, which answers through the ``Exchange``:
   a whole body (``respond``), a stream (``start_stream``/``send_data``/``end_stream``,
   for SSE), or the raw connection (``take_over``, for a WebSocket upgrade). The answer
   is not timed as a whole (a stream or a socket lasts as long as it lasts); each write
   is;
4. start the next cycle if both sides finished cleanly, else close.

The loop answers malformed requests itself, in one shape for every server built on it
(``error_body``): ``{"error": "<what was wrong>"}`` as JSON, ``Connection: close``,
plus the server's own headers. A handler that raises is the request boundary: logged, a
500 in the same shape if nothing was sent yet, and the connection closed; other
connections never notice.

Writes are bounded by ``write_timeout``: a client that stops reading is dropped.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import h11
import trio
from trio_websocket import WebSocketConnection, wrap_server_stream

from agentcade.net._http import BodyTooLarge, H11Stream, PeerGone

__all__ = [
    "Exchange",
    "Handler",
    "HttpLimits",
    "HttpServer",
    "PeerGone",
    "Request",
    "error_body",
]

log = logging.getLogger(__name__)

Headers = Sequence[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """Protocol policy knobs of one server (the tests shrink the timeouts)."""

    max_body: int = 10 * 1024 * 1024
    """Largest request body."""
    max_header: int = 16 * 1024
    """Largest request head (h11's default; nginx uses 8 KiB, node 16 KiB)."""
    request_timeout: float = 30.0
    """From the first byte of a request to its last (slowloris guard)."""
    idle_timeout: float = 75.0
    """Keep-alive: how long an idle connection waits for its next request (nginx: 75 s)."""
    write_timeout: float = 30.0
    """How long one write may block on a client that stopped reading."""


class Request:
    """One request as the loop read it: h11's head and the whole body."""

    __slots__ = ("body", "head", "method", "path", "query")

    def __init__(self, head: h11.Request, body: bytes) -> None:
        self.head = head
        self.body = body
        self.method = head.method.decode("latin-1")
        target = head.target.decode("latin-1")
        self.path, _, self.query = target.partition("?")

    def header(self, name: bytes) -> str | None:
        """The first value of header ``name`` (lower case), or None."""
        for key, value in self.head.headers:
            if key == name:
                return value.decode("latin-1")
        return None


def error_body(reason: str) -> bytes:
    """The body of every error the loop itself answers: ``{"error": reason}``."""
    return json.dumps({"error": reason}, ensure_ascii=False).encode()


class Exchange:
    """The handler's side of one connection: answer the current request, watch the peer.

    Every write is bounded by the server's ``write_timeout`` (``trio.TooSlowError``).
    """

    __slots__ = ("conn", "extra", "limits")

    def __init__(self, conn: H11Stream, limits: HttpLimits, extra: Headers) -> None:
        self.conn = conn
        self.limits = limits
        self.extra = extra

    @property
    def started(self) -> bool:
        """A response (or part of one) has been sent for the current request."""
        return self.conn.conn.our_state is not h11.SEND_RESPONSE

    @property
    def eof(self) -> bool:
        """The client closed its side (or reset the connection)."""
        return self.conn.eof

    async def _send(self, *events: Any) -> None:
        # ``trio.fail_after`` without its generator-based context manager: this runs for
        # every write, and the wrapper cost more than the cancel scope it wraps.
        scope = trio.CancelScope(deadline=trio.current_time() + self.limits.write_timeout)
        with scope:
            await self.conn.send_many(events)
        if scope.cancelled_caught:
            raise trio.TooSlowError

    def _head(self, status: int, headers: Headers, *, close: bool = False) -> h11.Response:
        all_headers = [*headers, *self.extra]
        if close or self.conn.conn.their_state is not h11.DONE:
            all_headers.append((b"connection", b"close"))
        return h11.Response(status_code=status, headers=all_headers)

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: bytes = b"application/json",
        headers: Headers = (),
        close: bool = False,
    ) -> None:
        """A whole response in one write (Content-Length, the server's headers)."""
        head = self._head(
            status,
            [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
            close=close,
        )
        if body:
            await self._send(head, h11.Data(data=body), h11.EndOfMessage())
        else:
            await self._send(head, h11.EndOfMessage())

    async def respond_empty(self, status: int, headers: Headers = ()) -> None:
        """A response without a body and without Content-Length (e.g. 304)."""
        await self._send(self._head(status, headers), h11.EndOfMessage())

    async def start_stream(self, status: int, headers: Headers, first: bytes = b"") -> None:
        """Send the head of a chunked response (and its first chunk, in the same write)."""
        head = self._head(status, headers)
        if first:
            await self._send(head, h11.Data(data=first))
        else:
            await self._send(head)

    def hold_stream(self, status: int, headers: Headers, first: bytes = b"") -> None:
        """``start_stream``, written with the response's next write (``flush``, ``send_data``,
        ``end_stream``): an answer that comes soon goes out with its head in one write."""
        head = self._head(status, headers)
        self.conn.hold((head, h11.Data(data=first)) if first else (head,))

    @property
    def holding(self) -> bool:
        """Part of the response is held, not written yet (``hold_stream``)."""
        return bool(self.conn.held)

    async def flush(self) -> None:
        """Write what is held."""
        await self._send()

    async def send_data(self, data: bytes) -> None:
        """One chunk of a streamed response."""
        await self._send(h11.Data(data=data))

    async def end_stream(self, last: bytes = b"") -> None:
        """End a streamed response (with its last chunk, in the same write)."""
        if last:
            await self._send(h11.Data(data=last), h11.EndOfMessage())
        else:
            await self._send(h11.EndOfMessage())

    async def watch_peer(
        self, on_gone: Callable[[], None], scope: trio.CancelScope, read_ahead: int
    ) -> None:
        """While a response is open: EOF or a reset from the client calls ``on_gone``.

        Reads ahead (the next pipelined request stays in h11's buffer) at most
        ``read_ahead`` bytes, then only waits. Run it in ``scope`` and cancel that when
        the response is complete.
        """
        conn = self.conn
        with scope:
            while not conn.eof:
                if conn.buffered > read_ahead:
                    await trio.sleep_forever()
                try:
                    alive = await conn.receive()
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    alive = False
                if not alive:
                    conn.mark_eof()
                    on_gone()
                    return

    def take_over(self, request: Request) -> trio.abc.Stream:
        """The raw connection, the request's head replayed in front (a WebSocket upgrade).

        The loop ends with this request; the caller owns the stream until it returns.
        """
        head = request.head
        lines = [b"%s %s HTTP/%s" % (head.method, head.target, head.http_version)]
        lines += [b"%s: %s" % (name, value) for name, value in head.headers.raw_items()]
        replay = b"\r\n".join(lines) + b"\r\n\r\n" + request.body + self.conn.conn.trailing_data[0]
        return _ReplayStream(self.conn.stream, replay)

    async def accept_websocket(
        self, request: Request, nursery: trio.Nursery, *, max_message_size: int
    ) -> WebSocketConnection:
        """Hand the connection to trio-websocket, which answers the upgrade itself."""
        ws_request = await wrap_server_stream(
            nursery, self.take_over(request), max_message_size=max_message_size
        )
        return await ws_request.accept()


class _ReplayStream(trio.abc.Stream):
    """``stream`` with ``head`` put back in front of what it will receive."""

    def __init__(self, stream: trio.abc.Stream, head: bytes) -> None:
        self.stream = stream
        self.head = head

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self.head:
            size = len(self.head) if max_bytes is None else max_bytes
            data, self.head = self.head[:size], self.head[size:]
            return data
        return bytes(await self.stream.receive_some(max_bytes))

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.stream.aclose()


Handler = Callable[[Exchange, Request], Awaitable[None]]
"""A route handler: answers ``Request`` through ``Exchange`` (raise ``PeerGone`` when the
client went away and nothing more can be said)."""


def _head_size(request: h11.Request) -> int:
    size = len(request.method) + len(request.target) + 12
    return size + sum(len(k) + len(v) + 4 for k, v in request.headers)


class HttpServer:
    """One HTTP/1.1 server loop around ``handler``; ``handle_connection`` per connection.

    Args:
        handler: answers each request.
        limits: sizes and timeouts.
        headers: sent with every response, the loop's own errors included (``Server``,
            the pages' security headers).
        name: for the log ("A2A", "pages", ...).
        takes_over: when it returns True for a request's head, the body is not read and
            the handler takes the connection over (a WebSocket upgrade); the loop then
            ends with the handler.
    """

    def __init__(
        self,
        handler: Handler,
        *,
        limits: HttpLimits | None = None,
        headers: Headers = (),
        name: str = "HTTP",
        takes_over: Callable[[h11.Request], bool] | None = None,
    ) -> None:
        self.handler = handler
        self.limits = limits or HttpLimits()
        self.headers = tuple(headers)
        self.name = name
        self.takes_over = takes_over

    async def handle_connection(self, stream: trio.abc.Stream) -> None:
        """Serve requests on ``stream`` until the peer leaves or a limit trips.

        Never raises (except Cancelled); always closes ``stream``.
        """
        conn = H11Stream(stream, h11.SERVER, max_incomplete_event_size=self.limits.max_header)
        try:
            await self._serve(conn)
        except* (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError, PeerGone):
            pass  # the client went away or stopped reading
        except* Exception:  # the connection boundary: log, drop this connection only
            log.exception("%s connection failed", self.name)
        finally:
            await conn.aclose()

    async def _serve(self, conn: H11Stream) -> None:
        limits = self.limits
        exchange = Exchange(conn, limits, self.headers)
        h = conn.conn
        while True:
            if conn.buffered == 0 and not conn.eof:
                with trio.CancelScope(deadline=trio.current_time() + limits.idle_timeout):
                    if not await conn.receive():
                        return
                if conn.buffered == 0 and not conn.eof:
                    return  # idle keep-alive connection: close quietly
            try:
                # Only the request itself is timed: its answer (a stream, a WebSocket) is not.
                with trio.fail_after(limits.request_timeout):
                    head = await conn.next_event()
                    if isinstance(head, h11.ConnectionClosed):
                        return
                    assert isinstance(head, h11.Request)
                    if _head_size(head) > limits.max_header:
                        # h11 only limits an *incomplete* head; one that arrives whole in a
                        # single read can be bigger.
                        await self._error(exchange, 431, "request header too large")
                        return
                    taken_over = self.takes_over is not None and self.takes_over(head)
                    body = b"" if taken_over else await conn.read_body(head, limits.max_body)
            except trio.TooSlowError:
                await self._error(exchange, 408, "request timeout")
                return
            except h11.RemoteProtocolError as exc:
                status = exc.error_status_hint
                if conn.eof and status == 400:
                    return  # peer closed mid-request: nobody to answer
                await self._error(exchange, status, str(exc))
                return
            except BodyTooLarge:
                await self._error(exchange, 413, "request body too large")
                await self._drain(conn)
                return
            await self._call(exchange, Request(head, body))
            if taken_over:
                return  # the handler had the connection (a WebSocket), for as long as it lasts
            if h.our_state is not h11.DONE or h.their_state is not h11.DONE:
                return
            h.start_next_cycle()

    async def _call(self, exchange: Exchange, request: Request) -> None:
        try:
            await self.handler(exchange, request)
        except (PeerGone, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError):
            raise  # the client is gone: nobody to answer
        except Exception:  # the request boundary: answer if we still can, then close
            log.exception("%s: %s %s failed", self.name, request.method, request.path)
            await self._error(exchange, 500, "internal error")
            raise PeerGone from None

    async def _error(self, exchange: Exchange, status: int, reason: str) -> None:
        """The loop's own error answer (one shape for every server); then the loop closes."""
        if exchange.conn.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        with contextlib.suppress(h11.LocalProtocolError, trio.TooSlowError):
            await exchange.respond(status, error_body(reason), close=True)

    @staticmethod
    async def _drain(conn: H11Stream) -> None:
        # Closing with unread data makes the kernel send RST, which can destroy the error
        # response in flight; read (and drop) a little first.
        with trio.move_on_after(1):
            for _ in range(64):
                data = await conn.stream.receive_some(64 * 1024)
                if not data:
                    break
