"""The local pages' HTTP server: h11 on trio (``H11Stream``), WebSocket by trio-websocket.

One task per connection runs HTTP/1.1 request cycles. Before anything is routed,
``security.check_request`` refuses a foreign ``Host`` or ``Origin`` and a write without
the page token; heads and bodies are size-limited and must arrive in time.

``GET /live`` with ``Upgrade: websocket`` (only as a connection's first request) turns the
connection into the live view's WebSocket: the bytes of the request, recorded while h11
read them, are replayed to trio-websocket, which answers the handshake itself. The
socket then receives every new trace record as one JSON text message.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import h11
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, wrap_server_stream

from agentcade.core.errors import InputError
from agentcade.core.trace import Trace
from agentcade.main.registry import GameRegistry
from agentcade.net._http import BodyTooLarge, H11Stream, PeerGone
from agentcade.web.app import PagesApp, Response
from agentcade.web.live import LiveLog
from agentcade.web.marks import GuardMarks
from agentcade.web.security import TOKEN_HEADER, check_request, new_token

__all__ = ["DEFAULT_PORT", "Pages", "PagesError", "PagesLimits", "serve_pages"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 8790
_SERVER = (b"server", b"agentcade-pages")


class PagesError(InputError):
    """The pages could not start (the port is taken); the message says what to do."""


@dataclass(frozen=True, slots=True)
class PagesLimits:
    max_body: int = 64 * 1024
    """A settings form or an address is a few KiB at most."""
    max_header: int = 16 * 1024
    request_timeout: float = 20.0
    idle_timeout: float = 30.0
    write_timeout: float = 20.0
    watch_queue: int = 256
    """Records a live-view socket may fall behind before it is dropped (the page reconnects)."""


class _RecordingStream(trio.abc.Stream):
    """A stream that remembers what it received until told to stop (for the WS handover)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.recorded: bytearray | None = bytearray()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self.stream.receive_some(max_bytes)
        if self.recorded is not None:
            self.recorded += data
        return bytes(data)

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.stream.aclose()


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


def _headers(request: h11.Request) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in request.headers:
        out.setdefault(key.decode("latin-1"), value.decode("latin-1"))
    return out


class PagesServer:
    """Serves ``PagesApp`` on connections handed to ``handle_connection``."""

    def __init__(self, app: PagesApp, port: int, *, limits: PagesLimits | None = None) -> None:
        self.app = app
        self.port = port
        self.limits = limits or PagesLimits()
        self.csp = (
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; "
            "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        ).encode()

    async def handle_connection(self, stream: trio.abc.Stream) -> None:
        """Serve requests until the peer leaves; never raises (except Cancelled)."""
        recording = _RecordingStream(stream)
        conn = H11Stream(recording, h11.SERVER, max_incomplete_event_size=self.limits.max_header)
        try:
            await self._serve(conn, recording)
        except* (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError, PeerGone):
            pass
        except* Exception:  # the connection boundary: one broken request never stops the pages
            log.exception("pages connection failed")
        finally:
            await conn.aclose()

    async def _serve(self, conn: H11Stream, recording: _RecordingStream) -> None:
        limits = self.limits
        first = True
        while True:
            if conn.buffered == 0 and not conn.eof:
                with trio.move_on_after(limits.idle_timeout):
                    if not await conn.receive():
                        return
                if conn.buffered == 0 and not conn.eof:
                    return
            try:
                with trio.fail_after(limits.request_timeout):
                    request = await conn.next_event()
                    if isinstance(request, h11.ConnectionClosed):
                        return
                    assert isinstance(request, h11.Request)
                    headers = _headers(request)
                    if first and headers.get("upgrade", "").lower() == "websocket":
                        head = bytes(recording.recorded or b"")
                        recording.recorded = None
                        await self._websocket(conn, request, headers, head)
                        return
                    recording.recorded = None
                    body = await conn.read_body(request, self.limits.max_body)
            except trio.TooSlowError:
                await self._send(conn, Response.json({"errors": {"": "request timeout"}}, 408), close=True)
                return
            except h11.RemoteProtocolError as exc:
                if not conn.eof:
                    await self._send(conn, Response.json({"errors": {"": str(exc)}}, exc.error_status_hint), close=True)
                return
            except BodyTooLarge:
                await self._send(conn, Response.json({"errors": {"": "内容太大了"}}, 413), close=True)
                return
            first = False
            response = await self._respond(request, headers, body)
            await self._send(conn, response)
            if conn.conn.our_state is not h11.DONE or conn.conn.their_state is not h11.DONE:
                return
            conn.conn.start_next_cycle()

    def _refusal(self, request: h11.Request, headers: Mapping[str, str], write: bool) -> Response | None:
        refusal = check_request(
            method=request.method.decode("latin-1"),
            host=headers.get("host"),
            origin=headers.get("origin"),
            token=headers.get(TOKEN_HEADER),
            expected_token=self.app.token,
            port=self.port,
            write=write,
        )
        if refusal is None:
            return None
        log.warning("pages: %s", refusal.reason)
        return Response.json({"errors": {"": refusal.reason}}, refusal.status)

    async def _respond(self, request: h11.Request, headers: Mapping[str, str], body: bytes) -> Response:
        method = request.method.decode("latin-1")
        path, _, query = request.target.decode("latin-1").partition("?")
        write = method != "GET"
        if (refused := self._refusal(request, headers, write)) is not None:
            return refused
        if write and not headers.get("content-type", "").startswith("application/json"):
            return Response.json({"errors": {"": "changes are sent as application/json"}}, 415)
        try:
            if method == "GET":
                found = await self.app.get_async(path)
                return found if found is not None else self.app.get(path, query)
            return await self.app.handle(method, path, body)
        except Exception:  # the request boundary: the family sees one line, the log the rest
            log.exception("pages: %s %s failed", method, path)
            return Response.json({"errors": {"": "出错了，这一步没有完成。再试一次，或者重启 agentcade。"}}, 500)

    async def _send(self, conn: H11Stream, response: Response, *, close: bool = False) -> None:
        if conn.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        headers = [
            (b"content-type", response.content_type.encode()),
            (b"content-length", str(len(response.body)).encode()),
            (b"cache-control", b"no-store"),
            (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"no-referrer"),
            (b"content-security-policy", self.csp),
            _SERVER,
        ]
        if response.location is not None:
            headers.append((b"location", response.location.encode()))
        if close or conn.conn.their_state is not h11.DONE:
            headers.append((b"connection", b"close"))
        with trio.fail_after(self.limits.write_timeout):
            try:
                await conn.send(h11.Response(status_code=response.status, headers=headers))
                await conn.send(h11.Data(data=response.body))
                await conn.send(h11.EndOfMessage())
            except h11.LocalProtocolError:
                return

    # ---------------------------------------------------------------- live view

    async def _websocket(
        self, conn: H11Stream, request: h11.Request, headers: Mapping[str, str], head: bytes
    ) -> None:
        path = request.target.decode("latin-1").split("?", 1)[0]
        refused = self._refusal(request, headers, write=False)
        if refused is None and headers.get("origin") is None:
            refused = Response.json({"errors": {"": "refused: a WebSocket without Origin"}}, 403)
        if refused is None and path != "/live":
            refused = Response.json({"errors": {"": "没有这个页面"}}, 404)
        if refused is not None:
            await self._send(conn, refused, close=True)
            return
        async with trio.open_nursery() as nursery:
            # The page never sends anything but control frames: a small message limit.
            ws_request = await wrap_server_stream(
                nursery, _ReplayStream(conn.stream, head), max_message_size=4096
            )
            ws = await ws_request.accept()
            await self._watch(ws)
            nursery.cancel_scope.cancel()

    async def _watch(self, ws: WebSocketConnection) -> None:
        send, receive = trio.open_memory_channel[dict[str, Any]](self.limits.watch_queue)

        def push(record: dict[str, Any]) -> None:
            try:
                send.send_nowait(record)
            except trio.WouldBlock:
                send.close()  # fell behind: end, the page reconnects and reloads
            except trio.ClosedResourceError:
                pass

        stop = self.app.live.watch(push)
        try:
            async with trio.open_nursery() as nursery:

                async def reader() -> None:
                    # The page never sends; reading notices a close and answers pings.
                    try:
                        while True:
                            await ws.get_message()
                    except ConnectionClosed:
                        nursery.cancel_scope.cancel()

                nursery.start_soon(reader)
                try:
                    async with receive:
                        async for record in receive:
                            with trio.fail_after(self.limits.write_timeout):
                                await ws.send_message(json.dumps(record, ensure_ascii=False, default=str))
                except ConnectionClosed:
                    pass
                nursery.cancel_scope.cancel()
        finally:
            stop()
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                await ws.aclose()


@dataclass
class Pages:
    """The running pages: where they are and what they do."""

    url: str
    port: int
    app: PagesApp

    @property
    def settings_url(self) -> str:
        return self.url + "settings"


@asynccontextmanager
async def serve_pages(
    *,
    registry: GameRegistry,
    trace: Trace,
    port: int = DEFAULT_PORT,
    environ: Mapping[str, str] | None = None,
    catalog_url: str | None = None,
    on_saved: Callable[[frozenset[str]], Awaitable[None]] | None = None,
    limits: PagesLimits | None = None,
    voice_required: bool = False,
) -> AsyncIterator[Pages]:
    """Serve the local pages on ``127.0.0.1:port`` while the block runs.

    One function for every command that plays (``play``, ``run``): the pages show the
    ``registry``'s games (and install into it), record ``trace`` for the live view and
    write the settings the CLI reads. ``port=0`` picks a free port (tests).

    Raises:
        PagesError: the port cannot be bound (taken by another program).
    """
    live = LiveLog()
    marks = GuardMarks()
    app = PagesApp(registry=registry, live=live, marks=marks, token=new_token(),
                   environ=os.environ if environ is None else environ,
                   catalog_url=catalog_url, on_saved=on_saved, voice_required=voice_required)
    try:
        listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
    except OSError as exc:
        raise PagesError(
            f"设置页面没能打开：127.0.0.1:{port} 用不了（{exc.strerror or exc}）。"
            "换一个端口（--pages-port），或者不要页面（--no-pages）"
        ) from None
    bound = listeners[0].socket.getsockname()[1]
    server = PagesServer(app, bound, limits=limits)
    trace.add_sink(live)
    trace.add_sink(marks)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(trio.serve_listeners, server.handle_connection, listeners)
            try:
                yield Pages(url=f"http://127.0.0.1:{bound}/", port=bound, app=app)
            finally:
                nursery.cancel_scope.cancel()
    finally:
        trace.remove_sink(live)
        trace.remove_sink(marks)

