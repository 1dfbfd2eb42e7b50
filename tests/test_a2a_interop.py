"""Interop with a2a-sdk 1.3: its client against our server, our client against its server."""

from __future__ import annotations

from functools import partial

import pytest
import trio

from agentcade.a2a.client import A2AClient, GameRemoteError
from agentcade.core.protocol import GameInput, GameReply
from tests.a2a_peers import SDKServerThread, game_input, sdk_client_events, start_server


def _summary(events: list[dict]) -> list[tuple[str, str, list]]:
    out: list[tuple[str, str, list]] = []
    for ev in events:
        if "task" in ev:
            out.append(("task", ev["task"]["status"]["state"], []))
        else:
            status = ev["statusUpdate"]["status"]
            out.append(("statusUpdate", status["state"], status["message"]["parts"]))
    return out


async def test_sdk_client_plays_our_server(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    events = await trio.to_thread.run_sync(
        partial(
            sdk_client_events,
            f"http://127.0.0.1:{port}",
            game_input("start", "你好"),
            context_id="ctx-i",
        )
    )
    assert _summary(events) == [
        ("task", "TASK_STATE_SUBMITTED", []),
        (
            "statusUpdate",
            "TASK_STATE_WORKING",
            [
                {"data": {"protocol": "agentcade/1", "text": "稍等", "session": "active"}},
                {"text": "稍等"},
            ],
        ),
        (
            "statusUpdate",
            "TASK_STATE_COMPLETED",
            [
                {"data": {"protocol": "agentcade/1", "text": "开始：你好", "session": "active"}},
                {"text": "开始：你好"},
            ],
        ),
    ]
    task_id = events[0]["task"]["id"]
    assert all(ev["statusUpdate"]["taskId"] == task_id for ev in events[1:])
    assert events[0]["task"]["history"][0]["messageId"] == "msg-sdk-1"
    assert handler.inputs == [("ctx-i", GameInput(kind="start", text="你好"))]


async def test_sdk_client_plain_text_door(nursery: trio.Nursery) -> None:
    port, handler = await start_server(nursery)
    events = await trio.to_thread.run_sync(
        partial(sdk_client_events, f"http://127.0.0.1:{port}", "你好")
    )
    assert [s for _, s, _ in _summary(events)][-1] == "TASK_STATE_COMPLETED"
    assert handler.inputs[0][1] == GameInput(kind="start", text="你好")


async def test_sdk_client_sees_our_typed_errors(nursery: trio.Nursery) -> None:
    from a2a.utils.errors import InvalidParamsError

    port, _ = await start_server(nursery)
    bad = {"protocol": "agentcade/9", "kind": "start", "text": "x"}
    with pytest.raises(InvalidParamsError, match="unknown protocol version"):
        await trio.to_thread.run_sync(partial(sdk_client_events, f"http://127.0.0.1:{port}", bad))


async def test_our_client_plays_the_sdk_server() -> None:
    with SDKServerThread() as sdk:
        client = A2AClient()
        _, info = await client.fetch_card(sdk.url)
        assert info.game_id == "echo"
        assert info.protocols == ("agentcade/1", "desktop-game/5")
        async with client.stream(
            info.url, "ctx-s", GameInput(kind="start", text="你好"), protocol="desktop-game/5"
        ) as replies:
            got = [(r, final) async for r, final in replies]
        assert got == [
            (GameReply(protocol="desktop-game/5", text="稍等"), False),
            (GameReply(protocol="desktop-game/5", text="开始：你好"), True),
        ]
        # an SDK-side validation error reaches us as one GameRemoteError
        with pytest.raises(GameRemoteError) as info_err:
            await client.send(
                info.url, "ctx-s", GameInput(kind="message", text="x"), protocol="nope/1"
            )
        assert info_err.value.kind in ("rpc", "failed")
