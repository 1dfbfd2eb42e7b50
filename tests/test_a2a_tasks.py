"""ListTasks, SubscribeToTask and SendMessage ``returnImmediately`` (A2A 1.0 §3.1.4-3.1.6).

Our server over real sockets on 127.0.0.1; a2a-sdk's own client against it for interop.
The tests that wait run on virtual time (``autojump_clock``): the server and the client are
tasks of this process, so nothing outside trio's clock is waited for. The a2a-sdk client
runs asyncio in a thread and keeps the wall clock.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
import pytest
import trio
import trio.testing
from a2a.types.a2a_pb2 import ListTasksResponse, StreamResponse
from google.protobuf.json_format import ParseDict

from agentcade.a2a.handler import ReplySink
from agentcade.core.protocol import GameInput, GameReply
from tests.a2a_peers import game_input, http_request, rpc_body, send_params, start_server


class Gated:
    """A game that says "稍等", then waits for ``release`` before its final reply."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.started = trio.Event()
        self.inputs: list[GameInput] = []

    async def handle(self, context_id: str, game_input: GameInput, emit: ReplySink) -> None:
        self.inputs.append(game_input)
        await emit(GameReply(text="稍等"), final=False)
        self.started.set()
        await self.release.wait()
        await emit(GameReply(text=f"好的：{game_input.text}"), final=True)


async def rpc(port: int, method: str, params: object, rid: object = "r1") -> Any:
    resp = await http_request(port, "POST", "/", body=rpc_body(method, params, rid))
    assert resp.headers["content-type"] == "application/json"
    return resp.json()


async def play(port: int, text: str, context_id: str = "ctx-1") -> str:
    """One finished SendMessage; its task id."""
    payload = await rpc(
        port, "SendMessage", send_params(game_input(text=text), context_id=context_id)
    )
    return str(payload["result"]["task"]["id"])


def immediately(text: str, context_id: str = "ctx-1") -> dict[str, Any]:
    params = send_params(game_input(text=text), context_id=context_id)
    params["configuration"] = {"returnImmediately": True}
    return params


# ------------------------------------------------------------------ returnImmediately


async def test_return_immediately_answers_submitted_while_the_game_plays(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    with trio.fail_after(5):
        payload = await rpc(port, "SendMessage", immediately("水"))
    task = payload["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert task["history"][0]["parts"] == [{"data": game_input(text="水")}]
    with trio.fail_after(5):
        await handler.started.wait()
    running = (await rpc(port, "GetTask", {"id": task["id"]}))["result"]
    assert running["status"]["state"] == "TASK_STATE_WORKING"
    handler.release.set()
    with trio.fail_after(5):
        while True:
            done = (await rpc(port, "GetTask", {"id": task["id"]}))["result"]
            if done["status"]["state"] != "TASK_STATE_WORKING":
                break
            await trio.sleep(0.01)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["status"]["message"]["parts"][1] == {"text": "好的：水"}


async def test_return_immediately_task_can_be_cancelled(nursery: trio.Nursery) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    task_id = (await rpc(port, "SendMessage", immediately("水")))["result"]["task"]["id"]
    with trio.fail_after(5):
        await handler.started.wait()
        cancelled = await rpc(port, "CancelTask", {"id": task_id})
    assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_server_shutdown_cancels_a_return_immediately_task() -> None:
    handler = Gated()
    async with trio.open_nursery() as nursery:
        port, _ = await start_server(nursery, handler)
        await rpc(port, "SendMessage", immediately("水"))
        with trio.fail_after(5):
            await handler.started.wait()
        nursery.cancel_scope.cancel()
    assert not handler.release.is_set()  # ended by the shutdown, not by the game


# ------------------------------------------------------------------ ListTasks


async def test_list_tasks_newest_first_with_running_and_finished(nursery: trio.Nursery) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    handler.release.set()
    first = await play(port, "一")
    second = await play(port, "二")
    handler.release = trio.Event()
    handler.started = trio.Event()
    running = (await rpc(port, "SendMessage", immediately("三")))["result"]["task"]["id"]
    with trio.fail_after(5):
        await handler.started.wait()
    result = (await rpc(port, "ListTasks", {}))["result"]
    ParseDict(result, ListTasksResponse())  # strict: the SDK's shape, no unknown fields
    assert [t["id"] for t in result["tasks"]] == [running, second, first]
    assert [t["status"]["state"] for t in result["tasks"]] == [
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_COMPLETED",
    ]
    assert result["nextPageToken"] == ""
    assert result["pageSize"] == 50
    assert result["totalSize"] == 3
    assert all("artifacts" not in t for t in result["tasks"])
    handler.release.set()


async def test_list_tasks_pages_with_next_page_token(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    ids = [await play(port, str(n)) for n in range(5)]
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        params: dict[str, Any] = {"pageSize": 2}
        if token:
            params["pageToken"] = token
        result = (await rpc(port, "ListTasks", params))["result"]
        pages += 1
        assert result["totalSize"] == 5
        assert result["pageSize"] == 2
        seen += [t["id"] for t in result["tasks"]]
        token = result["nextPageToken"]
        if not token:
            break
    assert pages == 3
    assert seen == ids[::-1]


async def test_list_tasks_filters_by_context_and_status(nursery: trio.Nursery) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    handler.release.set()
    a1 = await play(port, "a1", context_id="ctx-a")
    b1 = await play(port, "b1", context_id="ctx-b")
    a2 = await play(port, "a2", context_id="ctx-a")
    handler.release = trio.Event()
    handler.started = trio.Event()
    running = (await rpc(port, "SendMessage", immediately("a3", "ctx-a")))["result"]["task"]["id"]
    with trio.fail_after(5):
        await handler.started.wait()
    by_context = (await rpc(port, "ListTasks", {"contextId": "ctx-a"}))["result"]
    assert [t["id"] for t in by_context["tasks"]] == [running, a2, a1]
    assert by_context["totalSize"] == 3
    done = (await rpc(port, "ListTasks", {"status": "TASK_STATE_COMPLETED"}))["result"]
    assert [t["id"] for t in done["tasks"]] == [a2, b1, a1]
    working = (await rpc(port, "ListTasks", {"status": "TASK_STATE_WORKING"}))["result"]
    assert [t["id"] for t in working["tasks"]] == [running]
    both = await rpc(port, "ListTasks", {"contextId": "ctx-b", "status": "TASK_STATE_WORKING"})
    assert both["result"] == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}
    handler.release.set()


async def test_list_tasks_artifacts_and_history_only_when_asked(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    await play(port, "水")
    plain = (await rpc(port, "ListTasks", {}))["result"]["tasks"][0]
    assert "artifacts" not in plain
    assert len(plain["history"]) == 2  # the user message, the intermediate reply
    asked = (await rpc(port, "ListTasks", {"includeArtifacts": True, "historyLength": 0}))[
        "result"
    ]["tasks"][0]
    assert asked["artifacts"] == []
    assert "history" not in asked


async def test_sdk_client_lists_our_tasks(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    ids = [await play(port, str(n), context_id="ctx-sdk") for n in range(3)]

    async def run() -> tuple[list[str], str]:
        import httpx
        from a2a.client import ClientConfig, create_client
        from a2a.types.a2a_pb2 import ListTasksRequest

        async with httpx.AsyncClient(timeout=10) as http:
            client = await create_client(
                f"http://127.0.0.1:{port}", client_config=ClientConfig(httpx_client=http)
            )
            page = await client.list_tasks(ListTasksRequest(context_id="ctx-sdk", page_size=2))
            rest = await client.list_tasks(
                ListTasksRequest(context_id="ctx-sdk", page_size=2, page_token=page.next_page_token)
            )
            await client.close()
        return [t.id for t in [*page.tasks, *rest.tasks]], rest.next_page_token

    listed, last_token = await trio.to_thread.run_sync(lambda: asyncio.run(run()))
    assert listed == ids[::-1]
    assert last_token == ""


# ------------------------------------------------------------------ SubscribeToTask


async def _open_sse(port: int, body: bytes) -> tuple[trio.SocketStream, h11.Connection]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    conn = h11.Connection(h11.CLIENT)
    head = h11.Request(
        method="POST",
        target="/",
        headers=[
            ("host", "x"),
            ("a2a-version", "1.0"),
            ("content-type", "application/json"),
            ("accept", "text/event-stream"),
            ("content-length", str(len(body))),
        ],
    )
    await stream.send_all(
        conn.send(head) + conn.send(h11.Data(data=body)) + conn.send(h11.EndOfMessage())
    )
    return stream, conn


async def _events_until_end(stream: trio.SocketStream, conn: h11.Connection) -> list[dict]:
    from agentcade.a2a.sse import SSEDecoder

    decoder = SSEDecoder()
    events: list[dict] = []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Response):
            assert event.headers  # checked by the caller through content
            assert (b"content-type", b"text/event-stream; charset=utf-8") in list(event.headers)
        elif isinstance(event, h11.Data):
            events += [json.loads(e.data) for e in decoder.feed(bytes(event.data))]
        elif isinstance(event, h11.EndOfMessage):
            return events


async def test_subscribe_streams_the_remaining_events_of_a_running_task(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    task_id = (await rpc(port, "SendMessage", immediately("水")))["result"]["task"]["id"]
    with trio.fail_after(5):
        await handler.started.wait()
    stream, conn = await _open_sse(port, rpc_body("SubscribeToTask", {"id": task_id}, "sub-1"))
    received: list[dict] = []

    async def read() -> None:
        received.extend(await _events_until_end(stream, conn))

    with trio.fail_after(5):
        async with trio.open_nursery() as inner:
            inner.start_soon(read)
            await trio.testing.wait_all_tasks_blocked()  # the reader waits for events
            handler.release.set()
    await stream.aclose()
    assert all(e["id"] == "sub-1" for e in received)
    results = [e["result"] for e in received]
    for result in results:
        ParseDict(result, StreamResponse())
    assert results[0]["task"]["id"] == task_id
    assert results[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert [r["statusUpdate"]["status"]["state"] for r in results[1:]] == ["TASK_STATE_COMPLETED"]
    assert results[-1]["statusUpdate"]["status"]["message"]["parts"][1] == {"text": "好的：水"}


async def test_leaving_a_subscription_does_not_cancel_the_task(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    task_id = (await rpc(port, "SendMessage", immediately("水")))["result"]["task"]["id"]
    with trio.fail_after(5):
        await handler.started.wait()
    stream, _conn = await _open_sse(port, rpc_body("SubscribeToTask", {"id": task_id}))
    received = b""
    with trio.fail_after(5):
        while b"data: " not in received:
            received += await stream.receive_some(65536)
    await stream.aclose()
    await trio.testing.wait_all_tasks_blocked()  # the server saw the subscriber leave
    handler.release.set()
    with trio.fail_after(5):
        while True:
            task = (await rpc(port, "GetTask", {"id": task_id}))["result"]
            if task["status"]["state"] != "TASK_STATE_WORKING":
                break
            await trio.sleep(0.01)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_subscribe_to_a_finished_task_is_refused(nursery: trio.Nursery) -> None:
    port, _ = await start_server(nursery)
    task_id = await play(port, "水")
    resp = await http_request(
        port,
        "POST",
        "/",
        body=rpc_body("SubscribeToTask", {"id": task_id}),
        headers=[("accept", "text/event-stream")],
    )
    error = resp.json()["error"]
    assert error["code"] == -32004
    assert error["message"] == f"Task {task_id} is in terminal state: TASK_STATE_COMPLETED"


async def test_sdk_client_subscribes_to_our_running_task(nursery: trio.Nursery) -> None:
    handler = Gated()
    port, _ = await start_server(nursery, handler)
    task_id = (await rpc(port, "SendMessage", immediately("水")))["result"]["task"]["id"]
    with trio.fail_after(5):
        await handler.started.wait()

    async def run() -> list[str]:
        import httpx
        from a2a.client import ClientConfig, create_client
        from a2a.types.a2a_pb2 import SubscribeToTaskRequest

        kinds = []
        async with httpx.AsyncClient(timeout=10) as http:
            client = await create_client(
                f"http://127.0.0.1:{port}", client_config=ClientConfig(httpx_client=http)
            )
            async for event in client.subscribe(SubscribeToTaskRequest(id=task_id)):
                kinds.append(str(event.WhichOneof("payload")))
                trio.from_thread.run_sync(handler.release.set)
            await client.close()
        return kinds

    kinds = await trio.to_thread.run_sync(lambda: asyncio.run(run()))
    assert kinds == ["task", "status_update"]


@pytest.mark.parametrize("method", ["SubscribeToTask", "GetTask", "CancelTask"])
async def test_unknown_task_id_is_task_not_found(nursery: trio.Nursery, method: str) -> None:
    port, _ = await start_server(nursery)
    assert (await rpc(port, method, {"id": "nope"}))["error"]["code"] == -32001
