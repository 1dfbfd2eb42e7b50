"""The main agent through the whole pipeline: registry, main model, games, output queue, robot.

Games run in-process (the probe game on the fake model, the built-in games on the offline
model) or remotely over our A2A server; the robot is the console or the simulated device.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from agentcade.a2a.card import build_card
from agentcade.a2a.client import A2AClient
from agentcade.a2a.server import serve_a2a
from agentcade.allowlist import FRONT_PAN, FRONT_TILT
from agentcade.device.robots import ConsoleRobot, Robot
from agentcade.device.sim import open_sim_robot
from agentcade.game.loader import builtin_games_dir
from agentcade.llm import ChatModel, OpenAIChatModel
from agentcade.main.agent import BUSY_TEXT, REMOTE_FAILED, MainAgent, OfflineMainModel
from agentcade.main.registry import GameRegistry
from agentcade.protocol import GameInput, GameReply
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.remote import open_remote_game
from tests.a2a_peers import FakeSkill
from tests.fake_openai import FakeOpenAI, Reply, serve_fake_openai
from tests.sim_device import Records, recording_trace

GAMES = Path(__file__).parent / "data" / "games"
PROBE_CLOSED = "closed_count"


@pytest.fixture
async def game_model(nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeOpenAI:
    """The fake model the in-process games talk to (through the environment, as in `play`)."""
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    fake.default = Reply("好的。")
    monkeypatch.setenv("LLM_BASE_URL", fake.url)
    monkeypatch.setenv("LLM_API_KEY", "sk-games-secret")
    monkeypatch.setenv("LLM_MODEL", "fake-model")
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))
    return fake


@pytest.fixture
def offline_games(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The built-in games on the offline model."""
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


class Heard:
    """What the robot said and did, read from the console robot's output."""

    def __init__(self) -> None:
        self.out = io.StringIO()

    @property
    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()

    @property
    def speech(self) -> list[str]:
        return [line.removeprefix("小懒：") for line in self.lines if line.startswith("小懒：")]


@asynccontextmanager
async def pipeline(
    builtin_dir: Path,
    model: Callable[[GameRegistry], ChatModel] = OfflineMainModel,
    *,
    robot: Robot | None = None,
    heard: Heard | None = None,
) -> AsyncIterator[tuple[MainAgent, Records]]:
    trace, records = recording_trace()
    robot = robot or ConsoleRobot((heard or Heard()).out)
    async with open_pipeline(robot, builtin_dir=builtin_dir, remote=[], model=model, trace=trace) as (
        agent,
        _,
    ):
        yield agent, records


def main_model(fake: FakeOpenAI) -> Callable[[GameRegistry], ChatModel]:
    return lambda _registry: OpenAIChatModel(fake.settings(), max_retries=0)


async def test_start_by_name_forwards_the_users_words_and_speaks_the_games_reply(game_model) -> None:
    game_model.push(Reply("开局口令，开始吧。"))
    heard = Heard()
    async with pipeline(GAMES, heard=heard) as (agent, _):
        await agent.on_user("我们玩探针吧")
        assert agent.current is not None
        assert agent.current.info.id == "probe"
    assert heard.speech[0] == "开局口令，开始吧。"
    event = json.loads(game_model.requests[0]["messages"][-1]["content"])
    assert event["event"] == "start"
    assert event["user_text"] == "我们玩探针吧"


@pytest.mark.parametrize("words", ["玩谜语", "来玩猜谜吧", "我想玩猜迷语", "玩猜谜语"])
async def test_start_by_alias_and_misheard_names(offline_games, words: str) -> None:
    async with pipeline(builtin_games_dir()) as (agent, _):
        await agent.on_user(words)
        assert agent.current is not None
        assert agent.current.info.id == "riddle"


async def test_real_model_may_name_the_game_by_alias(nursery, offline_games) -> None:
    main: FakeOpenAI = await nursery.start(serve_fake_openai)
    main.push(Reply(tool_calls=[("start_game", {"game_id": "猜谜"})]))
    async with pipeline(builtin_games_dir(), main_model(main)) as (agent, records):
        await agent.on_user("来猜谜吧")
        assert agent.current is not None
        assert agent.current.info.id == "riddle"
    request = main.requests[0]
    assert {t["function"]["name"] for t in request["tools"]} == {
        "list_games", "start_game", "end_game", "send_message",
    }
    assert "riddle：猜谜语" in request["messages"][0]["content"]
    assert any(r["type"] == "main_tool_call" and r["tool"] == "start_game" for r in records)


async def test_chat_during_a_game_is_answered_and_keeps_the_game(nursery, game_model) -> None:
    main: FakeOpenAI = await nursery.start(serve_fake_openai)
    main.push(Reply(tool_calls=[("start_game", {"game_id": "probe"})]), Reply("今天是晴天。"))
    game_model.push(Reply("开局口令"))
    heard = Heard()
    async with pipeline(GAMES, main_model(main), heard=heard) as (agent, _):
        await agent.on_user("玩探针")
        await agent.on_user("今天天气怎么样")
        assert agent.current is not None
        assert len(game_model.requests) == 1  # the game never saw the chat
    assert heard.speech[:2] == ["开局口令", "今天是晴天。"]


async def test_history_keeps_game_replies_with_role_game_agent(game_model) -> None:
    game_model.push(Reply("开局口令"))
    async with pipeline(GAMES) as (agent, _):
        await agent.on_user("玩探针")
        assert agent.history[-1] == {"role": "game_agent", "content": "开局口令", "game": "探针"}


async def test_busy_game_gets_still_preparing_then_end_cancels_the_slow_turn(game_model) -> None:
    game_model.push(Reply("开局口令"), Reply(tool_calls=[("slow", {})]), Reply("再见。"))
    heard = Heard()
    async with pipeline(GAMES, heard=heard) as (agent, records):
        await agent.on_user("玩探针")
        with trio.fail_after(5):
            await agent.on_user("慢慢来")  # returns after the first reply, "稍等"
        assert agent.current is not None
        assert agent.current.busy
        with trio.fail_after(5):
            await agent.on_user("好了吗")
        assert len(game_model.requests) == 2  # the game never got "好了吗"
        with trio.fail_after(5):
            await agent.on_user("结束游戏")
            await agent.wait_idle()
        assert agent.current is None
    assert heard.speech == ["开局口令", "稍等", BUSY_TEXT, "再见。"]
    end = json.loads(game_model.requests[-1]["messages"][-1]["content"])
    assert end["event"] == "end"
    assert any(r["type"] == "busy" for r in records)


async def test_shutdown_with_a_game_running_ends_it_and_leaves_no_task(game_model) -> None:
    from agentcade.game.loader import load_game

    probe = load_game(GAMES / "probe").agent_cls
    before = getattr(probe, PROBE_CLOSED)
    game_model.push(Reply("开局口令"), Reply(tool_calls=[("slow", {})]), Reply("再见。"))
    tasks_before = descendants(trio.lowlevel.current_task())
    with trio.fail_after(10):
        async with pipeline(GAMES) as (agent, _):
            await agent.on_user("玩探针")
            await agent.on_user("慢慢来")
    assert getattr(probe, PROBE_CLOSED) == before + 1
    assert descendants(trio.lowlevel.current_task()) == tasks_before
    assert json.loads(game_model.requests[-1]["messages"][-1]["content"])["event"] == "end"


def descendants(task: trio.lowlevel.Task) -> int:
    """How many tasks run under ``task`` (its nurseries, recursively)."""
    return sum(1 + descendants(child) for n in task.child_nurseries for child in n.child_tasks)


class Scripted:
    """A remote game whose behaviour per request kind is chosen by the test."""

    def __init__(self, **behaviour: str) -> None:
        self.behaviour = behaviour
        self.inputs: list[GameInput] = []

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        self.inputs.append(game_input)
        what = self.behaviour.get(game_input.kind, "ok")
        if what == "hang":
            await trio.sleep_forever()
        if what == "fail":
            raise RuntimeError("the remote game broke")
        if what == "slow_goodbye":
            await emit(GameReply(text="好的，我来公布答案，稍等。"), False)
            await trio.sleep(0.2)
            await emit(GameReply(text="答案是小猫。", session="ended"), True)
            return
        if what == "light":
            light = {"call": "lights.set_color", "args": ["#00FF00"]}
            await emit(GameReply(text="亮灯了", directives=[light]), True)  # type: ignore[list-item]
            return
        if what == "undeclared":
            await emit(
                GameReply(text="亮灯", directives=[{"call": "lights.set_color", "args": ["#FF0000"]}]),  # type: ignore[list-item]
                True,
            )
            return
        ended = game_input.kind == "end"
        await emit(GameReply(text=f"远程{game_input.kind}", session="ended" if ended else "active"), True)


@asynccontextmanager
async def remote_pipeline(
    nursery: trio.Nursery,
    game: Scripted,
    heard: Heard,
    builtin_dir: Path,
    *,
    reply_timeout: float = 5.0,
    capabilities: tuple[str, ...] = (),
) -> AsyncIterator[tuple[MainAgent, Records, trio.CancelScope]]:
    """A pipeline with ``game`` served over A2A on 127.0.0.1 (plus ``builtin_dir``'s games)."""
    server_scope = trio.CancelScope()
    skill = FakeSkill(required_capabilities=capabilities)

    async def serve(task_status: trio.TaskStatus[int]) -> None:
        with server_scope:
            async with trio.open_nursery() as inner:
                listeners = await inner.start(
                    serve_a2a, game, lambda port: build_card(skill, f"http://127.0.0.1:{port}/"), 0
                )
                task_status.started(listeners[0].socket.getsockname()[1])

    port = await nursery.start(serve)
    client = A2AClient(reply_timeout=reply_timeout)
    async with (
        open_remote_game(f"http://127.0.0.1:{port}", client=client) as remote,
        pipeline(builtin_dir, heard=heard) as (agent, records),
    ):
        agent.registry.add(remote)
        yield agent, records, server_scope


async def test_remote_game_down_is_told_and_message_failure_keeps_the_session(nursery, tmp_path) -> None:
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(), heard, tmp_path) as (agent, records, server):
        await agent.on_user("玩回声")
        assert heard.speech == ["远程start"]
        server.cancel()
        await trio.sleep(0.05)
        await agent.on_user("你好")
        assert heard.speech[-1] == REMOTE_FAILED.format(name="回声")
        assert agent.current is not None  # a failed message keeps the session
        await agent.on_user("结束游戏")
        assert agent.current is None  # a failed end clears it
    assert any(r["type"] == "game_error" for r in records)


async def test_remote_game_that_hangs_times_out_and_is_told(nursery, tmp_path) -> None:
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(message="hang"), heard, tmp_path, reply_timeout=0.3) as (agent, _, _s):
        await agent.on_user("玩回声")
        with trio.fail_after(5):
            await agent.on_user("你在吗")
        assert heard.speech[-1] == REMOTE_FAILED.format(name="回声")
        assert agent.current is not None


async def test_remote_start_failure_clears_the_session(nursery, tmp_path) -> None:
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(start="fail"), heard, tmp_path) as (agent, _, _s):
        await agent.on_user("玩回声")
        assert heard.speech == [REMOTE_FAILED.format(name="回声")]
        assert agent.current is None


async def test_remote_games_undeclared_directive_is_skipped_and_traced(nursery, tmp_path) -> None:
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(start="undeclared"), heard, tmp_path) as (agent, records, _s):
        await agent.on_user("玩回声")
    assert heard.speech[0] == "亮灯"
    assert not any("lights.set_color" in line for line in heard.lines)
    skipped = [r for r in records if r["type"] == "directive_skipped"]
    assert skipped
    assert skipped[0]["call"] == "lights.set_color"


async def test_remote_garbage_is_told(nursery, tmp_path) -> None:
    """A server that serves a good card but answers requests with garbage."""

    async def garbage(stream: trio.SocketStream) -> None:
        data = await stream.receive_some(65536)
        if data.startswith(b"GET"):
            from tests.a2a_peers import echo_card

            body = json.dumps(echo_card(port)).encode()
            head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
            await stream.send_all(head.encode() + body)
        else:
            await stream.send_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                b"data: {this is not json\r\n\r\n"
            )
        await stream.aclose()

    listeners = await nursery.start(trio.serve_tcp, garbage, 0)
    port = listeners[0].socket.getsockname()[1]
    heard = Heard()
    async with (
        open_remote_game(f"http://127.0.0.1:{port}") as remote,
        pipeline(tmp_path, heard=heard) as (agent, _),
    ):
        agent.registry.add(remote)
        await agent.on_user("玩回声")
        assert agent.current is None
    assert heard.speech == [REMOTE_FAILED.format(name="回声")]


async def test_sim_robot_is_reset_after_the_game(offline_games) -> None:
    async with open_sim_robot() as robot:
        async with pipeline(builtin_games_dir(), robot=robot) as (agent, records):
            await agent.on_user("玩猜谜语")
            await agent.on_user("是小狗吗")  # wrong: a head shake on the robot
            await agent.wait_idle()
            moved = [r for r in records if r["type"] == "directive_executed" and r["call"] == "motion.move_to"]
            assert moved
            await agent.on_user("结束游戏")
            await agent.wait_idle()
        state = robot.device.state
        assert state.head == (FRONT_PAN, FRONT_TILT)
        assert not state.lights.on
        assert not state.expression.running
        assert any(r["type"] == "session_reset" for r in records)


async def test_the_reset_after_end_follows_the_games_last_sentence(nursery, tmp_path) -> None:
    heard = Heard()
    game = Scripted(start="light", end="slow_goodbye")
    async with remote_pipeline(nursery, game, heard, tmp_path, capabilities=("light",)) as (agent, _, _s):
        await agent.on_user("玩回声")
        await agent.on_user("结束游戏")  # returns after the first goodbye line
        await agent.wait_idle()
        assert agent.current is None
    lines = heard.lines
    assert lines.index("小懒：答案是小猫。") < lines.index("  [机器人] lights.off()")


async def test_switching_games_tells_a_failed_end_of_the_old_one(nursery, game_model, tmp_path) -> None:
    game_model.push(Reply("开局口令"))
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(end="fail"), heard, GAMES) as (agent, _, _s):
        await agent.on_user("玩回声")
        await agent.on_user("玩探针")
        assert agent.current is not None
        assert agent.current.info.id == "probe"
    # then, at shutdown, the probe says its own goodbye
    assert heard.speech[:3] == ["远程start", REMOTE_FAILED.format(name="回声"), "开局口令"]


async def test_switching_away_from_a_hung_game_is_bounded(nursery, game_model, tmp_path, monkeypatch) -> None:
    import agentcade.main.agent as main_agent

    monkeypatch.setattr(main_agent, "SWITCH_GRACE", 0.3)
    game_model.push(Reply("开局口令"))
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(end="hang"), heard, GAMES) as (agent, _, _s):
        await agent.on_user("玩回声")
        with trio.fail_after(3):  # not the client's 210 s
            await agent.on_user("玩探针")
        assert agent.current is not None
        assert agent.current.info.id == "probe"
    assert heard.speech[:2] == ["远程start", "开局口令"]
