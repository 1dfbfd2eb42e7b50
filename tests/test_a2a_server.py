"""Our A2A server over real sockets on 127.0.0.1 (and memory streams for virtual time)."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import uuid
from typing import Any

import h11
import pytest
import trio
import trio.testing
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.types.a2a_pb2 import StreamResponse
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import ParseDict

from agentcade.a2a.server import FAILED_TEXT, A2AServer, ServerLimits
from agentcade.core.protocol import GameInput, GameReply
from tests.a2a_peers import (
    EchoHandler,
    echo_card,
    game_input,
    http_request,
    rpc_body,
    send_params,
    start_server,
)


async def post(
    port: int,
    method: str,
    params: object,
    *,
    rid: object = "r1",
    version: str | None = "1.0",
    **kw: Any,
):
    return await http_request(
        port, "POST", "/", body=rpc_body(method, params, rid), version=version, **kw
    )


# ------------------------------------------------------------------ agent card


async def test_card_served_compact_with_etag_and_304(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    resp = await http_request(port, "GET", "/.well-known/agent-card.json", version=None)
    assert resp.status == 200
    assert resp.headers["content-type"] == "application/json"
    assert (
        resp.body == json.dumps(echo_card(port), ensure_ascii=False, separators=(",", ":")).encode()
    )
    etag = resp.headers["etag"]
    assert etag.startswith('W/"')
    again = await http_request(
        port, "GET", "/.well-known/agent-card.json", headers=[("if-none-match", etag)]
    )
    assert again.status == 304
    assert again.body == b""
    assert (await http_request(port, "POST", "/.well-known/agent-card.json")).status == 405
    assert (await http_request(port, "GET", "/nope")).status == 404
    assert (await http_request(port, "GET", "/")).status == 405


async def test_card_may_be_cached_and_says_when_it_changed(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    resp = await http_request(port, "GET", "/.well-known/agent-card.json", version=None)
    assert resp.headers["cache-control"] == "public, max-age=300"
    modified = email.utils.parsedate_to_datetime(resp.headers["last-modified"])
    assert abs((dt.datetime.now(dt.UTC) - modified).total_seconds()) < 60
    since = await http_request(
        port,
        "GET",
        "/.well-known/agent-card.json",
        headers=[("if-modified-since", resp.headers["last-modified"])],
    )
    assert since.status == 304
    assert since.headers["etag"] == resp.headers["etag"]
    assert since.headers["cache-control"] == "public, max-age=300"
    older = email.utils.format_datetime(modified - dt.timedelta(days=1), usegmt=True)
    stale = await http_request(
        port, "GET", "/.well-known/agent-card.json", headers=[("if-modified-since", older)]
    )
    assert stale.status == 200
    # the ETag wins over the date (RFC 9110 13.1.3)
    mismatch = await http_request(
        port,
        "GET",
        "/.well-known/agent-card.json",
        headers=[
            ("if-none-match", 'W/"other"'),
            ("if-modified-since", resp.headers["last-modified"]),
        ],
    )
    assert mismatch.status == 200


def test_card_last_modified_moves_only_when_the_card_changes() -> None:
    server = A2AServer(EchoHandler(), echo_card(1))
    first = server._card_modified
    server.set_card(echo_card(1))
    assert server._card_modified == first
    server.set_card(echo_card(2))
    assert server._card_modified > first


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
async def test_a_body_that_is_not_json_is_content_type_not_supported(
    nursery: trio.Nursery, content_type: str
) -> None:
    port, handler = await start_server(nursery)
    body = rpc_body("SendMessage", send_params(game_input()), rid="ct-1")
    resp = await http_request(port, "POST", "/", body=body, content_type=content_type)
    assert resp.status == 200
    error = resp.json()["error"]
    assert error["code"] == -32005
    assert error["data"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"
    assert content_type in error["message"]
    assert resp.json()["id"] == "ct-1"
    assert handler.inputs == []


@pytest.mark.parametrize(
    "content_type", [None, "application/json; charset=utf-8", "application/a2a+json"]
)
async def test_json_content_types_and_none_are_accepted(
    nursery: trio.Nursery, content_type: str | None
) -> None:
    port, _ = await start_server(nursery)
    body = rpc_body("SendMessage", send_params(game_input()))
    resp = await http_request(port, "POST", "/", body=body, content_type=content_type)
    assert resp.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_rpc_path_from_card_and_root(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery, path="/a2a/rpc")
    body = rpc_body("GetTask", {"id": "x"})
    for target in ("/a2a/rpc", "/", "/a2a/rpc?x=1"):
        resp = await http_request(port, "POST", target, body=body)
        assert resp.json()["error"]["code"] == -32001
    assert (await http_request(port, "POST", "/other", body=body)).status == 404


# ------------------------------------------------------------------ JSON-RPC errors table


ERRORS = [
    ("malformed JSON", b'{"jsonrpc": ', "1.0", -32700),
    ("batch", b'[{"jsonrpc":"2.0","method":"GetTask","id":1,"params":{"id":"x"}}]', "1.0", -32600),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","method":"GetTask","id":1}', "1.0", -32600),
    ("v0.3 method", rpc_body("message/stream", send_params(game_input())), "1.0", -32601),
    ("unknown method", rpc_body("Play", {}), "1.0", -32601),
    ("params type", rpc_body("GetTask", {"id": 5}), "1.0", -32602),
    ("missing field", rpc_body("SendMessage", {"message": {"role": "ROLE_USER"}}), "1.0", -32602),
    (
        "0.3 role",
        rpc_body(
            "SendMessage", {"message": {"messageId": "m", "role": "user", "parts": [{"text": "x"}]}}
        ),
        "1.0",
        -32602,
    ),
    ("no version", rpc_body("SendMessage", send_params(game_input())), None, -32009),
    ("version 0.3", rpc_body("SendStreamingMessage", send_params(game_input())), "0.3", -32009),
    ("version 2", rpc_body("GetTask", {"id": "x"}), "2.0", -32009),
    ("task not found", rpc_body("GetTask", {"id": "nope"}), "1.0", -32001),
    ("cancel unknown", rpc_body("CancelTask", {"id": "nope"}), "1.0", -32001),
    ("subscribe unknown", rpc_body("SubscribeToTask", {"id": "nope"}), "1.0", -32001),
    ("list tasks page size 0", rpc_body("ListTasks", {"pageSize": 0}), "1.0", -32602),
    ("list tasks page size 101", rpc_body("ListTasks", {"pageSize": 101}), "1.0", -32602),
    ("list tasks bad token", rpc_body("ListTasks", {"pageToken": "zzz"}), "1.0", -32602),
    ("list tasks history -1", rpc_body("ListTasks", {"historyLength": -1}), "1.0", -32602),
    (
        "only an image part",
        rpc_body(
            "SendMessage",
            send_params(parts=[{"raw": "iVBORw0KGgo=", "mediaType": "image/png"}]),
        ),
        "1.0",
        -32005,
    ),
    (
        "only a file url",
        rpc_body("SendStreamingMessage", send_params(parts=[{"url": "https://x/a.wav"}])),
        "1.0",
        -32005,
    ),
    (
        "data part declared as audio",
        rpc_body("SendMessage", send_params(parts=[{"data": {}, "mediaType": "audio/wav"}])),
        "1.0",
        -32005,
    ),
    ("extended card", rpc_body("GetExtendedAgentCard", {}), "1.0", -32004),
    (
        "push config",
        rpc_body("GetTaskPushNotificationConfig", {"taskId": "x", "id": "y"}),
        "1.0",
        -32003,
    ),
    (
        "unknown taskId",
        rpc_body(
            "SendMessage", {"message": {**send_params(game_input())["message"], "taskId": "t0"}}
        ),
        "1.0",
        -32001,
    ),
]


@pytest.mark.parametrize(("name", "body", "version", "code"), ERRORS, ids=[e[0] for e in ERRORS])
async def test_jsonrpc_error_codes(
    nursery: trio.Nursery, name: str, body: bytes, version: str | None, code: int
) -> None:
    port, handler = await start_server(nursery)
    stream_headers = [("accept", "text/event-stream")]
    resp = await http_request(port, "POST", "/", body=body, version=version, headers=stream_headers)
    assert resp.status == 200
    assert resp.headers["content-type"] == "application/json"  # never SSE for an early error
    payload = resp.json()
    assert payload["jsonrpc"] == "2.0"
    assert payload["error"]["code"] == code, payload
    assert handler.inputs == []


async def test_error_shape_is_the_sdks(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    resp = await post(port, "GetTask", {"id": "nope"}, rid="e1")
    assert resp.json() == build_error_response("e1", TaskNotFoundError())
    parse = await http_request(port, "POST", "/", body=b"{bad")
    assert parse.json() == {
        "error": {
            "code": -32700,
            "message": "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        },
        "id": None,
        "jsonrpc": "2.0",
    }
    version = await post(port, "GetTask", {"id": "x"}, version=None, rid=3)
    err = version.json()["error"]
    assert (
        err["message"]
        == "A2A version '0.3' is not supported by this handler. Expected version '1.0'."
    )
    assert err["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert version.json()["id"] == 3


# ------------------------------------------------------------------ streaming


async def test_streaming_sequence_exact(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    resp = await post(
        port,
        "SendStreamingMessage",
        send_params(game_input("start", "你好"), context_id="ctx-raw-1"),
        rid="req-1",
        headers=[("accept", "text/event-stream")],
    )
    assert resp.status == 200
    assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert resp.headers["cache-control"] == "no-store"
    assert resp.headers["x-accel-buffering"] == "no"
    assert resp.headers["transfer-encoding"] == "chunked"
    # exact framing: three `data: <json>\r\n\r\n` events, sse-starlette JSON separators
    frames = resp.body.split(b"\r\n\r\n")
    assert frames[-1] == b""
    assert len(frames) == 4
    assert all(f.startswith(b'data: {"result": {') for f in frames[:3])
    events = resp.sse()
    assert [e["id"] for e in events] == ["req-1"] * 3
    assert all(e["jsonrpc"] == "2.0" for e in events)
    results = [e["result"] for e in events]
    for r in results:
        ParseDict(r, StreamResponse())  # strict: no unknown fields, no 0.3 spellings
    task = results[0]["task"]
    task_id = task["id"]
    uuid.UUID(task_id)
    assert task["contextId"] == "ctx-raw-1"
    assert task["status"] == {"state": "TASK_STATE_SUBMITTED"}
    assert task["history"] == [
        {
            "messageId": "m-1",
            "contextId": "ctx-raw-1",
            "taskId": task_id,
            "role": "ROLE_USER",
            "parts": [{"data": {"protocol": "agentcade/1", "kind": "start", "text": "你好"}}],
        }
    ]
    states = [r["statusUpdate"]["status"]["state"] for r in results[1:]]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    for r in results[1:]:
        update = r["statusUpdate"]
        assert update["taskId"] == task_id
        assert update["contextId"] == "ctx-raw-1"
        message = update["status"]["message"]
        assert message["role"] == "ROLE_AGENT"
        assert message["taskId"] == task_id
        assert update["status"]["timestamp"].endswith("Z")
    working = results[1]["statusUpdate"]["status"]["message"]["parts"]
    final = results[2]["statusUpdate"]["status"]["message"]["parts"]
    assert working == [
        {"data": {"protocol": "agentcade/1", "text": "稍等", "session": "active"}},
        {"text": "稍等"},
    ]
    assert final == [
        {"data": {"protocol": "agentcade/1", "text": "开始：你好", "session": "active"}},
        {"text": "开始：你好"},
    ]
    assert handler.inputs == [("ctx-raw-1", GameInput(kind="start", text="你好"))]


async def test_reply_protocol_echoes_the_request(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    resp = await post(
        port, "SendStreamingMessage", send_params({**game_input(), "protocol": "desktop-game/5"})
    )
    datas = [
        e["result"]["statusUpdate"]["status"]["message"]["parts"][0]["data"] for e in resp.sse()[1:]
    ]
    assert [d["protocol"] for d in datas] == ["desktop-game/5", "desktop-game/5"]
    assert handler.inputs[0][1].protocol == "desktop-game/5"


async def test_plain_text_door_start_then_message(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    await post(port, "SendStreamingMessage", send_params("开始吧", context_id="c-text"))
    resp = await post(port, "SendStreamingMessage", send_params("水", context_id="c-text"))
    assert [i for _, i in handler.inputs] == [
        GameInput(kind="start", text="开始吧"),
        GameInput(kind="message", text="水"),
    ]
    final = resp.sse()[-1]["result"]["statusUpdate"]["status"]["message"]["parts"]
    assert final[1] == {"text": "你说：水"}


async def test_plain_text_door_without_has_session_is_message(nursery: trio.Nursery) -> None:
    class Plain:
        def __init__(self) -> None:
            self.inputs: list[GameInput] = []

        async def handle(self, context_id: str, game_input: GameInput, emit) -> None:
            self.inputs.append(game_input)
            await emit(GameReply(text="ok"), final=True)

    handler = Plain()
    port, _ = await start_server(nursery, handler)
    await post(port, "SendStreamingMessage", send_params("hi"))
    assert handler.inputs == [GameInput(kind="message", text="hi")]


async def test_missing_context_id_is_generated(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    resp = await post(port, "SendStreamingMessage", send_params("hi", context_id=None))
    ctx = resp.sse()[0]["result"]["task"]["contextId"]
    uuid.UUID(ctx)
    assert handler.inputs[0] == (ctx, GameInput(kind="start", text="hi"))


class Failing:
    def __init__(self, *, before_any: bool = False, no_final: bool = False) -> None:
        self.before_any = before_any
        self.no_final = no_final

    async def handle(self, context_id: str, game_input: GameInput, emit) -> None:
        if not self.before_any:
            await emit(GameReply(text="先说一句"), final=False)
        if self.no_final:
            return
        raise RuntimeError("secret internal detail")


@pytest.mark.parametrize("kind", ["raises", "raises-first", "no-final"])
async def test_handler_failure_ends_failed_with_speakable_text(
    nursery: trio.Nursery, kind: str
) -> None:
    handler = Failing(before_any=kind == "raises-first", no_final=kind == "no-final")
    port, _ = await start_server(nursery, handler)
    resp = await post(port, "SendStreamingMessage", send_params(game_input()))
    last = resp.sse()[-1]["result"]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED"
    assert last["message"]["parts"][1] == {"text": FAILED_TEXT}
    assert b"secret" not in resp.body
    # the server is still fine
    assert (await post(port, "GetTask", {"id": "x"})).json()["error"]["code"] == -32001


# ------------------------------------------------------------------ SendMessage / GetTask / CancelTask


async def test_send_message_blocks_and_returns_the_task(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    resp = await post(port, "SendMessage", send_params(game_input(text="水")))
    assert resp.headers["content-type"] == "application/json"
    task = resp.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"][1] == {"text": "你说：水"}
    assert [m["role"] for m in task["history"]] == ["ROLE_USER", "ROLE_AGENT"]
    got = (await post(port, "GetTask", {"id": task["id"]})).json()["result"]
    assert got == task
    short = (await post(port, "GetTask", {"id": task["id"], "historyLength": 1})).json()["result"]
    assert [m["role"] for m in short["history"]] == ["ROLE_AGENT"]
    none = (await post(port, "GetTask", {"id": task["id"], "historyLength": 0})).json()["result"]
    assert "history" not in none
    # finished -> not cancelable; a new message naming it -> terminal state error
    again = (await post(port, "CancelTask", {"id": task["id"]})).json()["error"]
    assert again["code"] == -32002
    params = send_params(game_input())
    params["message"]["taskId"] = task["id"]
    err = (await post(port, "SendMessage", params)).json()["error"]
    assert err["code"] == -32004
    assert err["message"] == f"Task {task['id']} is in terminal state: TASK_STATE_COMPLETED"


async def test_finished_tasks_window(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery, finished_tasks=2)
    ids = []
    for _ in range(3):
        resp = await post(port, "SendMessage", send_params(game_input()))
        ids.append(resp.json()["result"]["task"]["id"])
    assert (await post(port, "GetTask", {"id": ids[0]})).json()["error"]["code"] == -32001
    assert "result" in (await post(port, "GetTask", {"id": ids[2]})).json()


async def test_cancel_task_cancels_the_running_handler(nursery: trio.Nursery) -> None:
    handler = EchoHandler(delay=30)
    port, _ = await start_server(nursery, handler)
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    body = rpc_body("SendStreamingMessage", send_params(game_input()))
    conn = h11.Connection(h11.CLIENT)
    await stream.send_all(
        conn.send(
            h11.Request(
                method="POST",
                target="/",
                headers=[("host", "x"), ("a2a-version", "1.0"), ("content-length", str(len(body)))],
            )
        )
        + conn.send(h11.Data(data=body))
        + conn.send(h11.EndOfMessage())
    )
    received = b""
    with trio.fail_after(5):
        while received.count(b"\r\n\r\n") < 3:  # head + task + working
            received += await stream.receive_some(65536)
    task_id = json.loads(received.split(b"data: ", 1)[1].split(b"\r\n", 1)[0])["result"]["task"][
        "id"
    ]
    with trio.fail_after(5):
        resp = await post(port, "CancelTask", {"id": task_id})
    assert resp.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    with trio.fail_after(5):
        while not received.endswith(b"0\r\n\r\n"):
            received += await stream.receive_some(65536)
    assert b'"state": "TASK_STATE_CANCELED"' in received
    assert handler.cancelled == 1
    await stream.aclose()


async def test_keep_alive_several_requests_on_one_connection(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    card = await http_request(port, "GET", "/.well-known/agent-card.json", stream=stream)
    first = await post(port, "SendStreamingMessage", send_params(game_input()), stream=stream)
    second = await post(port, "SendMessage", send_params(game_input()), stream=stream)
    error = await http_request(port, "POST", "/", body=b"{", stream=stream)
    assert card.status == 200
    assert len(first.sse()) == 3
    assert second.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert error.json()["error"]["code"] == -32700
    await stream.aclose()


# ------------------------------------------------------------------ disconnect, pings, shutdown


async def test_client_disconnect_mid_stream_cancels_the_handler(nursery: trio.Nursery) -> None:
    handler = EchoHandler(delay=30)
    port, _ = await start_server(nursery, handler)
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    body = rpc_body("SendStreamingMessage", send_params(game_input()), rid="d1")
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
    await stream.send_all(head.encode() + body)
    received = b""
    with trio.fail_after(5):
        while b"TASK_STATE_WORKING" not in received:
            received += await stream.receive_some(65536)
    task_id = json.loads(received.split(b"data: ", 1)[1].split(b"\r\n", 1)[0])["result"]["task"][
        "id"
    ]
    await stream.aclose()
    with trio.fail_after(5):
        await handler.cancelled_event.wait()
    got = (await post(port, "GetTask", {"id": task_id})).json()["result"]
    assert got["status"]["state"] == "TASK_STATE_CANCELED"


async def _read_until(stream: trio.abc.Stream, needle: bytes, buf: bytes = b"") -> bytes:
    while needle not in buf:
        data = await stream.receive_some(65536)
        assert data, f"EOF before {needle!r}"
        buf += data
    return buf


async def test_pings_while_a_turn_is_quiet(autojump_clock: trio.testing.MockClock) -> None:
    server = A2AServer(EchoHandler(delay=40), echo_card(1))
    client, server_stream = trio.testing.memory_stream_pair()
    body = rpc_body("SendStreamingMessage", send_params(game_input()))
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_connection, server_stream)
        await client.send_all(head.encode() + body)
        t0 = trio.current_time()
        buf = await _read_until(client, b"TASK_STATE_WORKING")
        buf = await _read_until(client, b"TASK_STATE_COMPLETED", buf)
        assert trio.current_time() - t0 == 40
        assert buf.count(b": ping - ") == 2  # at 15 s and 30 s
        buf = await _read_until(client, b"0\r\n\r\n", buf)
        await client.aclose()


async def test_shutdown_cancels_running_turns(nursery: trio.Nursery) -> None:
    handler = EchoHandler(delay=30)
    async with trio.open_nursery() as inner:
        port, _ = await start_server(inner, handler)
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        body = rpc_body("SendStreamingMessage", send_params(game_input()))
        head = (
            f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
        )
        await stream.send_all(head.encode() + body)
        with trio.fail_after(5):
            await _read_until(stream, b"TASK_STATE_WORKING")
        inner.cancel_scope.cancel()
    assert handler.cancelled == 1
    with trio.fail_after(5):
        rest = b""
        while data := await stream.receive_some(65536):
            rest += data
    await stream.aclose()
    with pytest.raises(OSError, match="connect"):
        await trio.open_tcp_stream("127.0.0.1", port)


async def test_a_cancel_racing_the_final_reply_still_ends_the_stream_with_it(
    nursery: trio.Nursery,
) -> None:
    """Regression (review): CancelTask processed in the same scheduling step as the
    handler's final emit dropped the terminal event; the stream ended without it."""
    from a2a.types.a2a_pb2 import CancelTaskRequest

    from agentcade.a2a.client import A2AClient

    go, waiting = trio.Event(), trio.Event()

    class LastStepRaces:
        async def handle(self, context_id: str, game_input: GameInput, emit) -> None:
            await emit(GameReply(text="稍等"), final=False)
            waiting.set()
            await go.wait()  # the last checkpoint before the final reply
            await emit(GameReply(text="好的"), final=True)

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    server = A2AServer(LastStepRaces(), echo_card(port))
    nursery.start_soon(trio.serve_listeners, server.handle_connection, listeners)

    async def cancel_as_the_final_reply_goes_out() -> None:
        await waiting.wait()
        task_id = next(iter(server.tasks._running))
        go.set()  # the handler becomes runnable, and CancelTask runs in the same step:
        await server._cancel_task("r1", CancelTaskRequest(id=task_id))

    nursery.start_soon(cancel_as_the_final_reply_goes_out)
    got = []
    async with A2AClient(reply_timeout=5).stream(
        f"http://127.0.0.1:{port}/", "ctx", GameInput(kind="start")
    ) as replies:
        async for reply, final in replies:
            got.append((reply.text, final))
    assert got == [("稍等", False), ("好的", True)]


class _Answers:
    """A game that answers with one final reply, after ``delay`` seconds."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def has_session(self, context_id: str) -> bool:
        return True

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        await trio.sleep(self.delay)
        await emit(GameReply(text="好的"), final=True)


async def _stream_writes(handler: _Answers, limits: ServerLimits | None = None) -> list[tuple[float, bytes]]:
    """One streamed request on a memory stream: each write of the server, with its time."""
    server = A2AServer(handler, echo_card(1), limits=limits)
    client, server_stream = trio.testing.memory_stream_pair()
    writes: list[tuple[float, bytes]] = []
    send_all = server_stream.send_stream.send_all
    t0 = trio.current_time()

    async def recording(data: bytes | bytearray | memoryview) -> None:
        writes.append((trio.current_time() - t0, bytes(data)))
        await send_all(data)

    server_stream.send_stream.send_all = recording  # type: ignore[method-assign]
    body = rpc_body("SendStreamingMessage", send_params(game_input()))
    head = f"POST / HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\ncontent-length: {len(body)}\r\n\r\n"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server.handle_connection, server_stream)
        await client.send_all(head.encode() + body)
        await _read_until(client, b"0\r\n\r\n")
        await client.aclose()
    return writes


async def test_a_game_that_answers_at_once_is_streamed_in_one_write(
    autojump_clock: trio.testing.MockClock,
) -> None:
    writes = await _stream_writes(_Answers())
    assert len(writes) == 1  # head, SUBMITTED, the final reply and the stream's end together
    body = writes[0][1]
    assert body.index(b"TASK_STATE_SUBMITTED") < body.index(b"TASK_STATE_COMPLETED")


async def test_a_game_that_thinks_gets_its_task_sent_after_the_head_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limits = ServerLimits()
    writes = await _stream_writes(_Answers(delay=10), limits)
    (first_at, first), (last_at, _last) = writes
    assert first_at == limits.head_wait
    assert b"TASK_STATE_SUBMITTED" in first
    assert b"TASK_STATE_COMPLETED" not in first
    assert last_at == 10
