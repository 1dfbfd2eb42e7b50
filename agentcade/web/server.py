"""The local pages' HTTP server: a route handler over the one loop (``agentcade.net.server``).

The loop runs HTTP/1.1 request cycles (heads and bodies size-limited and in time, one
error shape). Before anything is routed, ``security.check_request`` refuses a foreign
``Host`` or ``Origin`` and a write without the page token; every response (the loop's own
errors too) carries the security headers.

``GET /live`` with ``Upgrade: websocket`` turns the connection into the live view's
WebSocket: the loop replays the request to trio-websocket, which answers the handshake
itself. The socket then receives every new trace record as one JSON text message.
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
from trio_websocket import ConnectionClosed, WebSocketConnection

from agentcade.core.errors import InputError
from agentcade.core.trace import Trace
from agentcade.main.registry import GameRegistry
from agentcade.net.server import Exchange, HttpLimits, HttpServer, Request
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
class PagesLimits(HttpLimits):
    """The HTTP loop's limits, tighter for a page on this computer, and the live view's."""

    max_body: int = 64 * 1024
    """A settings form or an address is a few KiB at most."""
    request_timeout: float = 20.0
    idle_timeout: float = 30.0
    write_timeout: float = 20.0
    watch_queue: int = 256
    """Records a live-view socket may fall behind before it is dropped (the page reconnects)."""


def _headers(request: Request) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in request.head.headers:
        out.setdefault(key.decode("latin-1"), value.decode("latin-1"))
    return out


def _is_upgrade(head: h11.Request) -> bool:
    return any(k == b"upgrade" and v.lower() == b"websocket" for k, v in head.headers)


class PagesServer:
    """Serves ``PagesApp`` on connections handed to ``handle_connection``."""

    def __init__(self, app: PagesApp, port: int, *, limits: PagesLimits | None = None) -> None:
        self.app = app
        self.port = port
        self.limits = limits or PagesLimits()
        csp = (
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; "
            "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
        ).encode()
        self._http = HttpServer(
            self._route,
            limits=self.limits,
            headers=[
                (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff"),
                (b"x-frame-options", b"DENY"),
                (b"referrer-policy", b"no-referrer"),
                (b"content-security-policy", csp),
                _SERVER,
            ],
            name="pages",
            takes_over=_is_upgrade,
        )

    async def handle_connection(self, stream: trio.abc.Stream) -> None:
        """Serve requests until the peer leaves (the one loop, ``agentcade.net.server``);
        never raises (except Cancelled)."""
        await self._http.handle_connection(stream)

    async def _route(self, http: Exchange, request: Request) -> None:
        headers = _headers(request)
        if _is_upgrade(request.head):
            await self._websocket(http, request, headers)
            return
        await self._send(http, await self._respond(request, headers))

    def _refusal(self, request: Request, headers: Mapping[str, str], write: bool) -> Response | None:
        refusal = check_request(
            method=request.method,
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

    async def _respond(self, request: Request, headers: Mapping[str, str]) -> Response:
        method, path, query, body = request.method, request.path, request.query, request.body
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

    @staticmethod
    async def _send(http: Exchange, response: Response, *, close: bool = False) -> None:
        location = [] if response.location is None else [(b"location", response.location.encode())]
        await http.respond(
            response.status,
            response.body,
            content_type=response.content_type.encode(),
            headers=location,
            close=close,
        )

    # ---------------------------------------------------------------- live view

    async def _websocket(self, http: Exchange, request: Request, headers: Mapping[str, str]) -> None:
        path = request.path
        refused = self._refusal(request, headers, write=False)
        if refused is None and headers.get("origin") is None:
            refused = Response.json({"errors": {"": "refused: a WebSocket without Origin"}}, 403)
        if refused is None and path != "/live":
            refused = Response.json({"errors": {"": "没有这个页面"}}, 404)
        if refused is not None:
            await self._send(http, refused, close=True)
            return
        async with trio.open_nursery() as nursery:
            # The page never sends anything but control frames: a small message limit.
            ws = await http.accept_websocket(request, nursery, max_message_size=4096)
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
    server: PagesServer

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
    voice_required: bool | Callable[[], bool] = False,
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
                yield Pages(url=f"http://127.0.0.1:{bound}/", port=bound, app=app, server=server)
            finally:
                nursery.cancel_scope.cancel()
    finally:
        trace.remove_sink(live)
        trace.remove_sink(marks)

