"""A2A 1.0 JSON-RPC + SSE server on trio + h11, serving one ``GameHandler``.

Theory of operation
-------------------
HTTP/1.1 is the one server loop (``agentcade.net.server``: keep-alive, timeouts, head and
body limits, the error answers to malformed requests); this module is its route handler:

1. route: ``GET /.well-known/agent-card.json`` or ``POST`` to the JSON-RPC path (the card
   URL's path, and ``/``);
2. JSON-RPC errors are ``200 application/json`` bodies (``jsonrpc.py``), as the SDK does;
   a body declared as something else than JSON is ``ContentTypeNotSupportedError``.

The card is cached by its ETag and ``Last-Modified`` (``card_cache.py``). A SendMessage /
SendStreamingMessage request is one task (``tasks.py``), played by a ``TaskRun``
(``task_run.py``). Its handler runs in a cancel scope owned by the request: a CancelTask, a
client that goes away (EOF or a failed write, watched while the task runs) or server
shutdown cancels it. A unary SendMessage with ``returnImmediately`` is answered with the
SUBMITTED task at once; the task then runs in the server's task nursery (``serve_a2a``),
owned by no connection, until it ends, a CancelTask or shutdown. ``SubscribeToTask`` streams
a running task's remaining events (first a Task snapshot) without owning it; ``ListTasks``
pages over the store. The handler's replies pass through a zero-buffer channel to the
writer, so a slow client slows the game instead of growing a queue; a client that stops
reading for ``write_timeout`` is dropped.

Errors never leave a connection task: the one ``except Exception`` per request turns a
bug into a JSON-RPC InternalError (or a FAILED task) and the connection is closed; other
connections are untouched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlsplit

import trio
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE, MAX_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict

from agentcade.a2a import wire
from agentcade.a2a.card_cache import (
    CARD_MAX_AGE,
    card_etag,
    etag_hits,
    http_date,
    not_modified_since,
)
from agentcade.a2a.handler import GameHandler, SessionAware, TellsUnrevealed
from agentcade.a2a.jsonrpc import (
    RpcCall,
    RpcError,
    RpcId,
    check_version,
    encode_error,
    encode_result,
    parse_call,
)
from agentcade.a2a.sse import encode_data, encode_ping
from agentcade.a2a.task_run import FAILED_TEXT, TaskRun
from agentcade.a2a.tasks import BadPageToken, TaskRecord, TaskStore
from agentcade.core import under_test
from agentcade.core.protocol import ProtocolError
from agentcade.net.server import Exchange, HttpLimits, HttpServer, PeerGone, Request, error_body

__all__ = ["CARD_PATH", "FAILED_TEXT", "A2AServer", "ServerLimits", "serve_a2a"]

log = logging.getLogger(__name__)

CARD_PATH = "/.well-known/agent-card.json"

_SERVER_HEADER = (b"server", b"agentcade")
_METHOD_NOT_ALLOWED = error_body("method not allowed")

@dataclass(frozen=True, slots=True)
class ServerLimits(HttpLimits):
    """Protocol policy knobs (the tests shrink the timeouts): the HTTP loop's (its
    defaults: a GameInput is a few KiB, a 10 MiB body is generous) and the A2A ones."""

    ping_interval: float = 15.0
    """SSE comment interval while a turn is quiet (sse-starlette's default)."""
    head_wait: float = 0.05
    """How long a stream's head (and its SUBMITTED event) waits for the game's first reply,
    to go out in the same write: a game that answers from code answers well within it, and
    the write (a syscall, a wake-up of the client) was the serving path's largest cost."""
    finished_tasks: int = 64
    """Finished tasks kept for GetTask."""
    watch_buffer: int = 64 * 1024
    """While a task runs, read ahead at most this much of the next (pipelined) request."""
    card_max_age: int = CARD_MAX_AGE
    """``Cache-Control: max-age`` of the agent card."""


def _is_json_content_type(value: str | None) -> bool:
    """A missing Content-Type is accepted (the SDK ignores it); a present one must be JSON."""
    if value is None:
        return True
    media = value.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _request_id(body: bytes) -> RpcId:
    """The JSON-RPC id of a body we will not otherwise parse (None when there is none)."""
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        data = json.loads(body)
        if isinstance(data, dict):
            rid = data.get("id")
            if isinstance(rid, str | int) and not isinstance(rid, bool):
                return rid
    return None


class A2AServer:
    """Serves one game over A2A; ``handle_connection`` is the per-connection entry point.

    Args:
        handler: plays the game.
        card: the agent card JSON (``build_card``); its JSONRPC interface URL's path is the
            POST route (``/`` is always accepted too).
        limits: timeouts and sizes.
        test_mode: also answer the test extension's method (``agentcade.core.under_test``:
            what the game keeps unrevealed, for a test runner); never in a family's game.
    """

    def __init__(
        self,
        handler: GameHandler,
        card: dict[str, Any],
        *,
        limits: ServerLimits | None = None,
        test_mode: bool = False,
    ) -> None:
        self.handler = handler
        self.limits = limits or ServerLimits()
        self._extensions = (under_test.UNREVEALED_METHOD,) if test_mode else ()
        self.tasks = TaskStore(self.limits.finished_tasks)
        self.set_card(card)
        self._http = HttpServer(
            self._respond, limits=self.limits, headers=[_SERVER_HEADER], name="A2A"
        )

    task_nursery: trio.Nursery | None = None
    """Where ``returnImmediately`` tasks run (set by ``serve_a2a``); without one such a task
    runs on in its connection after the reply."""

    def set_card(self, card: dict[str, Any]) -> None:
        """Replace the served card (and the JSON-RPC path taken from it)."""
        etag = card_etag(card)
        if etag != getattr(self, "_card_etag", None):
            self._card_modified = dt.datetime.now(dt.UTC)
        self.card = card
        self._card_body = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
        self._card_etag = etag
        paths = {"/"}
        for interface in card.get("supportedInterfaces", []):
            if interface.get("protocolBinding") == "JSONRPC":
                paths.add(urlsplit(interface.get("url", "")).path or "/")
        self._rpc_paths = frozenset(paths)

    # ---------------------------------------------------------------- connection loop

    async def handle_connection(self, stream: trio.abc.Stream) -> None:
        """Serve HTTP/1.1 requests on ``stream`` (the one loop, ``agentcade.net.server``).

        Never raises (except Cancelled); always closes ``stream``.
        """
        await self._http.handle_connection(stream)

    async def _respond(self, http: Exchange, request: Request) -> None:
        path = request.path
        method = request.method
        if path == CARD_PATH:
            if method != "GET":
                await http.respond(405, _METHOD_NOT_ALLOWED, headers=[(b"allow", b"GET")])
                return
            await self._send_card(http, request)
            return
        if path in self._rpc_paths:
            if method != "POST":
                await http.respond(405, _METHOD_NOT_ALLOWED, headers=[(b"allow", b"POST")])
                return
            await self._rpc(http, request)
            return
        await http.respond(404, error_body("not found"))

    async def _send_card(self, http: Exchange, request: Request) -> None:
        validators = [
            (b"etag", self._card_etag.encode()),
            (b"last-modified", http_date(self._card_modified).encode()),
            (b"cache-control", f"public, max-age={self.limits.card_max_age}".encode()),
        ]
        if_none_match = request.header(b"if-none-match")
        if_modified_since = request.header(b"if-modified-since")
        if if_none_match is not None:  # RFC 9110 §13.1.3: the ETag wins when both are sent
            fresh = etag_hits(if_none_match, self._card_etag)
        else:
            fresh = bool(if_modified_since) and not_modified_since(
                if_modified_since or "", self._card_modified
            )
        if fresh:
            await http.respond_empty(304, validators)
            return
        await http.respond(200, self._card_body, headers=validators)

    # ---------------------------------------------------------------- JSON-RPC

    async def _rpc(self, http: Exchange, request: Request) -> None:
        try:
            content_type = request.header(b"content-type")
            if not _is_json_content_type(content_type):
                raise RpcError(
                    _request_id(request.body),
                    ContentTypeNotSupportedError(
                        message=f"Content-Type {content_type!r} is not supported; "
                        "send the JSON-RPC request as application/json"
                    ),
                )
            call = parse_call(request.body, extensions=self._extensions)
            check_version(call, request.header(b"a2a-version"))
            match call.method:
                case "SendStreamingMessage" | "SendMessage":
                    run = self._start(call)
                    if call.method == "SendStreamingMessage":
                        await self._stream(http, call.id, run)
                        return
                    await self._blocking(http, call, run)
                    return
                case "SubscribeToTask":
                    assert isinstance(call.params, SubscribeToTaskRequest)
                    await self._subscribe(http, call.id, self._subscription(call.id, call.params))
                    return
                case "GetTask":
                    assert isinstance(call.params, GetTaskRequest)
                    result = self._get_task(call.id, call.params)
                case "ListTasks":
                    assert isinstance(call.params, ListTasksRequest)
                    result = self._list_tasks(call.id, call.params)
                case "CancelTask":
                    assert isinstance(call.params, CancelTaskRequest)
                    result = await self._cancel_task(call.id, call.params)
                case under_test.UNREVEALED_METHOD:  # known only in test mode
                    result = self._unrevealed(call, request.header(b"a2a-extensions"))
                case (
                    "CreateTaskPushNotificationConfig"
                    | "GetTaskPushNotificationConfig"
                    | ("ListTaskPushNotificationConfigs" | "DeleteTaskPushNotificationConfig")
                ):
                    raise RpcError(call.id, PushNotificationNotSupportedError())
                case "GetExtendedAgentCard":
                    raise RpcError(
                        call.id,
                        UnsupportedOperationError(
                            message="The agent does not support authenticated extended cards"
                        ),
                    )
                case _:
                    raise RpcError(
                        call.id,
                        UnsupportedOperationError(
                            message=f"{call.method} is not supported by this agent"
                        ),
                    )
        except RpcError as exc:
            await http.respond(200, encode_error(exc.request_id, exc.error))
            return
        except (PeerGone, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError):
            raise  # the client is gone: nobody to answer
        except Exception:  # the request boundary: answer, then drop the connection
            log.exception("A2A request failed")
            if not http.started:
                await http.respond(200, encode_error(None, InternalError()), close=True)
            raise PeerGone from None
        await http.respond(200, encode_result(call.id, result))

    def _start(self, call: RpcCall) -> TaskRun:
        """Decode a send request into a registered task (errors before any byte is sent)."""
        params = call.params
        assert isinstance(params, SendMessageRequest)
        message = params.message
        if message.task_id:
            known = self.tasks.get(message.task_id)
            if known is None:
                raise RpcError(
                    call.id, TaskNotFoundError(message=f"Task {message.task_id} not found")
                )
            if known.finished:
                raise RpcError(
                    call.id,
                    UnsupportedOperationError(
                        message=f"Task {message.task_id} is in terminal state: {known.state}"
                    ),
                )
            raise RpcError(
                call.id,
                UnsupportedOperationError(
                    message=f"Task {message.task_id} is still running; a game request is a new task"
                ),
            )
        raw_message = call.raw_params.get("message") if isinstance(call.raw_params, dict) else None
        raw_parts = raw_message.get("parts") if isinstance(raw_message, dict) else None
        context_id = message.context_id or str(uuid.uuid4())
        # Plain-text door: a new session starts with "start"; without has_session we
        # cannot tell, and "message" is the safe guess.
        new_session = isinstance(self.handler, SessionAware) and not self.handler.has_session(
            context_id
        )
        try:
            game_input = wire.input_from_parts(raw_parts or [], new_session=new_session)
        except wire.UnsupportedContent as exc:
            raise RpcError(call.id, ContentTypeNotSupportedError(message=str(exc))) from None
        except ProtocolError as exc:
            raise RpcError(call.id, InvalidParamsError(message=str(exc))) from None
        task_id = str(uuid.uuid4())
        message.context_id = context_id
        message.task_id = task_id
        user_message = MessageToDict(message)
        if raw_parts:
            user_message["parts"] = raw_parts  # keep the sender's numbers as sent
        record = TaskRecord(id=task_id, context_id=context_id, history=[user_message])
        self.tasks.add(record)
        return TaskRun(self.handler, self.tasks, record, game_input, message.message_id or None)

    def _unrevealed(self, call: RpcCall, activated: str | None) -> dict[str, Any]:
        """The test extension: what the game of ``params.contextId`` keeps unrevealed."""
        if under_test.UNREVEALED_EXTENSION not in {u.strip() for u in (activated or "").split(",")}:
            raise RpcError(call.id, UnsupportedOperationError(
                message=f"{call.method} needs the extension {under_test.UNREVEALED_EXTENSION} "
                        "activated (A2A-Extensions header)"))
        params = call.raw_params
        context = params.get("contextId") if isinstance(params, dict) else None
        if not isinstance(context, str) or not context:
            raise RpcError(call.id, InvalidParamsError(message="params.contextId is required"))
        handler = self.handler
        hidden = handler.unrevealed(context) if isinstance(handler, TellsUnrevealed) else None
        return {"unrevealed": hidden}

    def _get_task(self, request_id: RpcId, params: GetTaskRequest) -> dict[str, Any]:
        record = self.tasks.get(params.id)
        if record is None:
            raise RpcError(request_id, TaskNotFoundError())
        length = params.history_length if params.HasField("history_length") else None
        return record.to_dict(length)

    def _list_tasks(self, request_id: RpcId, params: ListTasksRequest) -> dict[str, Any]:
        """ListTasks (A2A §3.1.4), shaped like the SDK's (``nextPageToken`` "" at the end)."""
        if params.HasField("history_length") and params.history_length < 0:
            raise RpcError(
                request_id, InvalidParamsError(message="history length must be non-negative")
            )
        page_size = DEFAULT_LIST_TASKS_PAGE_SIZE
        if params.HasField("page_size"):
            if not 1 <= params.page_size <= MAX_LIST_TASKS_PAGE_SIZE:
                raise RpcError(
                    request_id,
                    InvalidParamsError(
                        message=f"page size must be 1 to {MAX_LIST_TASKS_PAGE_SIZE}, "
                        f"not {params.page_size}"
                    ),
                )
            page_size = params.page_size
        after = (
            params.status_timestamp_after.ToDatetime(dt.UTC)
            if params.HasField("status_timestamp_after")
            else None
        )
        try:
            page = self.tasks.page(
                page_size=page_size,
                page_token=params.page_token,
                context_id=params.context_id,
                state=TaskState.Name(params.status) if params.status else "",
                updated_after=after,
            )
        except BadPageToken as exc:
            raise RpcError(request_id, InvalidParamsError(message=str(exc))) from None
        length = params.history_length if params.HasField("history_length") else None
        artifacts = params.HasField("include_artifacts") and params.include_artifacts
        return {
            "tasks": [t.to_dict(length, artifacts=artifacts) for t in page.tasks],
            "nextPageToken": page.next_page_token,
            "pageSize": page_size,
            "totalSize": page.total_size,
        }

    def _subscription(
        self, request_id: RpcId, params: SubscribeToTaskRequest
    ) -> tuple[dict[str, Any], trio.MemoryReceiveChannel[dict[str, Any]]]:
        """SubscribeToTask's checks (before any byte is sent): snapshot + event channel."""
        record = self.tasks.get(params.id)
        if record is None:
            raise RpcError(request_id, TaskNotFoundError())
        if record.finished:  # A2A §3.1.6: nothing further to stream; the SDK refuses too
            raise RpcError(
                request_id,
                UnsupportedOperationError(
                    message=f"Task {record.id} is in terminal state: {record.state}"
                ),
            )
        return {"task": record.to_dict()}, record.subscribe()

    async def _subscribe(
        self,
        http: Exchange,
        request_id: RpcId,
        subscription: tuple[dict[str, Any], trio.MemoryReceiveChannel[dict[str, Any]]],
    ) -> None:
        """Stream a running task's remaining events; leaving does not cancel the task."""
        first, receive = subscription
        pump = trio.CancelScope()
        gone = False
        async with receive:
            try:
                await http.start_stream(200, _SSE_HEADERS, _frame(first, request_id))
                async with trio.open_nursery() as nursery:
                    watch = trio.CancelScope()
                    nursery.start_soon(
                        http.watch_peer, pump.cancel, watch, self.limits.watch_buffer
                    )
                    with pump:
                        await self._pump(http, receive, request_id)
                    watch.cancel()
            except (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError):
                gone = True  # raised outside the nursery: callers see PeerGone, not a group
        if gone or pump.cancelled_caught:
            raise PeerGone

    async def _cancel_task(self, request_id: RpcId, params: CancelTaskRequest) -> dict[str, Any]:
        record = self.tasks.get(params.id)
        if record is None:
            raise RpcError(request_id, TaskNotFoundError())
        if record.finished:
            raise RpcError(request_id, TaskNotCancelableError())
        record.cancel()
        await record.done.wait()
        return record.to_dict()

    async def _blocking(self, http: Exchange, call: RpcCall, run: TaskRun) -> None:
        params = call.params
        assert isinstance(params, SendMessageRequest)
        if params.configuration.return_immediately:
            await self._return_immediately(http, call.id, run)
            return
        send, receive = trio.open_memory_channel[dict[str, Any]](0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run.execute, send)
            watch = trio.CancelScope()
            nursery.start_soon(http.watch_peer, run.record.cancel, watch, self.limits.watch_buffer)
            async with receive:
                async for _event in receive:
                    pass  # the final Task is read from the record below
            watch.cancel()
        length = (
            params.configuration.history_length
            if params.configuration.HasField("history_length")
            else None
        )
        if http.eof and run.record.state == wire.CANCELED:
            raise PeerGone
        await http.respond(200, encode_result(call.id, {"task": run.record.to_dict(length)}))

    async def _return_immediately(self, http: Exchange, request_id: RpcId, run: TaskRun) -> None:
        """``returnImmediately``: answer with the SUBMITTED task, then let it run unowned."""
        snapshot = run.record.to_dict()
        send, receive = trio.open_memory_channel[dict[str, Any]](0)
        receive.close()  # nobody streams this task; subscribers get its events
        if self.task_nursery is not None:
            self.task_nursery.start_soon(run.execute, send)
            await http.respond(200, encode_result(request_id, {"task": snapshot}))
            return
        try:
            await http.respond(200, encode_result(request_id, {"task": snapshot}))
        finally:
            await run.execute(send)  # no task nursery: run on in this connection

    async def _stream(self, http: Exchange, request_id: RpcId, run: TaskRun) -> None:
        headers = _SSE_HEADERS
        record = run.record
        # The SDK's first event: SUBMITTED (no timestamp) with the user message.
        first = {
            "task": {
                "id": record.id,
                "contextId": record.context_id,
                "status": {"state": wire.SUBMITTED},
                "history": list(record.history),
            }
        }
        send, receive = trio.open_memory_channel[dict[str, Any]](0)
        gone = False
        try:
            http.hold_stream(200, headers, _frame(first, request_id))  # written by _pump
            async with trio.open_nursery() as nursery:
                watch = trio.CancelScope()
                nursery.start_soon(run.execute, send)
                nursery.start_soon(
                    http.watch_peer, run.record.cancel, watch, self.limits.watch_buffer
                )
                async with receive:
                    try:
                        await self._pump(http, receive, request_id)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError):
                        # The client is gone or stopped reading. Raised below, outside the
                        # nursery, so callers see PeerGone and not an ExceptionGroup.
                        gone = True
                        record.cancel()
                    except BaseException:
                        record.cancel()
                        raise
                watch.cancel()
        finally:
            if not record.done.is_set():  # failed before execute ran
                send.close()
                record.cancel()
                record.set_status(wire.CANCELED, None)
                self.tasks.finish(record)
        if gone:
            raise PeerGone

    async def _pump(
        self, http: Exchange, receive: trio.MemoryReceiveChannel[dict[str, Any]], rid: RpcId
    ) -> None:
        interval = self.limits.ping_interval
        wait = min(self.limits.head_wait, interval)  # the held head waits this long at most
        while True:
            with trio.CancelScope(deadline=trio.current_time() + wait) as quiet:
                try:
                    event = await receive.receive()
                except trio.EndOfChannel:
                    await http.end_stream()
                    return
            wait = interval
            if quiet.cancelled_caught:
                if http.holding:
                    await http.flush()  # the game thinks: the client gets its task meanwhile
                else:
                    await http.send_data(encode_ping())
                continue
            update = event.get("statusUpdate")
            if update is not None and update["status"]["state"] in wire.TERMINAL:
                await http.end_stream(_frame(event, rid))
                return
            await http.send_data(_frame(event, rid))


_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
]


def _frame(result: dict[str, Any], request_id: RpcId) -> bytes:
    return encode_data({"result": result, "id": request_id, "jsonrpc": "2.0"})


CardSource = dict[str, Any] | Callable[[int], dict[str, Any]]


async def serve_a2a(
    handler: GameHandler,
    card: CardSource,
    listeners: list[trio.SocketListener] | int,
    *,
    host: str | None = "127.0.0.1",
    limits: ServerLimits | None = None,
    handler_nursery: trio.Nursery | None = None,
    test_mode: bool = False,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> NoReturn:
    """Serve ``handler`` over A2A until cancelled (``trio.serve_listeners`` shape).

    Args:
        handler: plays the game.
        card: the agent card, or ``f(bound_port) -> card`` when listening on port 0.
        listeners: listeners to accept on, or a TCP port (0: any free port) on ``host``.
        host: bind address when ``listeners`` is a port (None: all interfaces).
        limits: timeouts and sizes.
        handler_nursery: where connection tasks run (default: an internal nursery).
        test_mode: answer the test extension's method too (``A2AServer``).
        task_status: ``started(listeners)`` once bound; the port is
            ``listeners[0].socket.getsockname()[1]``.

    Resource handling:
        Each connection is closed when its task ends. Cancelling ``serve_a2a`` (the
        surrounding nursery) cancels every connection and every running game request
        (their tasks end CANCELED), then closes the listeners.

    Error handling:
        A failing request or connection is logged and closes that connection only; accept
        errors are handled by ``trio.serve_listeners`` (EMFILE: retried).
    """
    if isinstance(listeners, int):
        listeners = await trio.open_tcp_listeners(listeners, host=host)
    port = listeners[0].socket.getsockname()[1]
    server = A2AServer(handler, card(port) if callable(card) else card, limits=limits,
                       test_mode=test_mode)
    async with trio.open_nursery() as task_nursery:
        server.task_nursery = task_nursery
        await trio.serve_listeners(
            server.handle_connection,
            listeners,
            handler_nursery=handler_nursery,
            task_status=task_status,
        )
    raise AssertionError("serve_listeners returned")  # pragma: no cover
