"""Issue 12: every fault gets a spoken answer in bounded time; no traceback ever reaches
a family or an author. One test per probed fault (the issue's item number in the name's
docstring); the storm test at the end runs them together."""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from agentcade.core.dotenv import read_dotenv
from agentcade.core.host_settings import Budgets
from agentcade.core.protocol import GameReply
from agentcade.core.settings import LLMSettings, SettingsError, load_settings_spec
from agentcade.core.speech import MAX_INPUT
from agentcade.device.robots import ConsoleRobot
from agentcade.game import worker
from agentcade.game.host import GAME_BROKE, SHUTTING_DOWN, GameHost
from agentcade.game.loader import builtin_games_dir, load_game
from agentcade.llm import ModelError, OpenAIChatModel
from agentcade.main.agent import MAX_INTERMEDIATE, MODEL_DOWN, REMOTE_SLOW, WAIT_TEXT
from agentcade.testing.fake_openai import Fail, FakeOpenAI, Hang, Reply, serve_fake_openai
from agentcade.wiring.registry import START_WAIT, open_registry
from tests.a2a_peers import echo_card
from tests.test_main_agent import Heard, Scripted, pipeline, remote_pipeline
from tests.test_skill_agent import ask

MESSAGES = [{"role": "user", "content": "你好"}]
GBK = "LLM_MODEL=通义千问\n".encode("gbk")


@pytest.fixture
def offline_games(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The built-in games on the offline model, in a home of their own."""
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


@pytest.fixture
async def fake_model(nursery: trio.Nursery) -> AsyncIterator[tuple[FakeOpenAI, OpenAIChatModel]]:
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    model = OpenAIChatModel(fake.settings(timeout=1.0), max_retries=1)
    yield fake, model
    await model.aclose()


# ------------------------------------------------------------------ item 2: files


def test_a_dotenv_that_is_not_utf8_is_a_settings_error_naming_the_file(tmp_path: Path) -> None:
    """Item 2: a GBK ``.env`` is one line that names the file and the fix."""
    env = tmp_path / ".env"
    env.write_bytes(GBK)
    with pytest.raises(SettingsError, match=r"\.env:1: 不是 UTF-8"):
        read_dotenv(env)


def test_a_settings_yaml_that_is_not_utf8_is_a_settings_error(tmp_path: Path) -> None:
    """Item 2: the same for a game's ``settings.yaml``."""
    spec = tmp_path / "settings.yaml"
    spec.write_bytes(b"settings:\n  - key: A\n    description: " + "说明".encode("gbk") + b"\n")
    with pytest.raises(SettingsError, match=r"settings\.yaml:3: 不是 UTF-8"):
        load_settings_spec(spec)


# ------------------------------------------------------------------ item 9: the model


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "0", "301"])
def test_llm_timeout_outside_1_to_300_seconds_is_refused(raw: str) -> None:
    """Item 9: ``LLM_TIMEOUT=inf`` would never answer."""
    with pytest.raises(SettingsError, match="LLM_TIMEOUT 应该在 1 到 300 之间"):
        LLMSettings.from_values({"LLM_TIMEOUT": raw})


async def test_a_hanging_model_costs_one_timeout_not_one_per_retry(fake_model) -> None:
    """Item 9: the timeout is the budget of the whole call, retries included."""
    fake, model = fake_model
    fake.default = Hang()
    start = trio.current_time()
    with pytest.raises(ModelError, match="timed out after 1s"):
        await model.complete(MESSAGES, [])
    assert trio.current_time() - start < 1.8


async def test_retry_after_is_capped_and_the_retry_still_answers(fake_model) -> None:
    """Item 9: ``Retry-After: 60`` is not obeyed in full; the retry gets its chance."""
    fake, _ = fake_model
    model_settings = fake.settings(timeout=10.0)
    capped = OpenAIChatModel(model_settings, max_retries=1)
    try:
        fake.push(Fail(429, headers=(("retry-after", "60"),)))
        start = trio.current_time()
        reply = await capped.complete(MESSAGES, [])
        assert reply.text  # the fake's default reply, on the retry
        assert trio.current_time() - start < 4
        assert len(fake.requests) == 2
    finally:
        await capped.aclose()


def test_budgets_have_defaults_and_refuse_values_out_of_range() -> None:
    """The time budgets are settings with validated ranges."""
    assert Budgets.from_values({}) == Budgets()
    assert Budgets.from_values({"AGENTCADE_PATIENCE": "2.5"}).patience == 2.5
    with pytest.raises(SettingsError, match="AGENTCADE_LINE_BUDGET"):
        Budgets.from_values({"AGENTCADE_LINE_BUDGET": "inf"})
    with pytest.raises(SettingsError, match="AGENTCADE_GAME_TIMEOUT"):
        Budgets.from_values({"AGENTCADE_GAME_TIMEOUT": "601"})


# ------------------------------------------------------------------ item 15: game code

UNRULY = Path(__file__).parent / "data" / "games" / "unruly"
PROBE = Path(__file__).parent / "data" / "games" / "probe"


@pytest.fixture
async def hosts_over() -> AsyncIterator[Callable[..., GameHost]]:
    made: list[GameHost] = []

    def make(fake: FakeOpenAI, folder: Path) -> GameHost:
        game = load_game(folder)
        settings = game.agent_cls.config(llm=fake.settings(timeout=5.0))
        made.append(GameHost(lambda: game.new_agent(settings)))
        return made[-1]

    yield make
    for host in made:
        await host.aclose()


@pytest.mark.parametrize("tool_name", ["leave", "interrupt"], ids=["SystemExit", "KeyboardInterrupt"])
async def test_a_tool_that_tries_to_end_the_process_fails_its_session_only(
    fake, hosts_over, tool_name: str
) -> None:
    """Item 15: ``sys.exit()`` / ``KeyboardInterrupt`` in a tool ended the whole server."""
    host = hosts_over(fake, UNRULY)
    await ask(host, "a", "start")
    await ask(host, "b", "start")
    fake.push(Reply(tool_calls=[(tool_name, {})]))
    replies = await ask(host, "a", "message", "捣乱吧")
    assert replies[-1].text == GAME_BROKE
    assert replies[-1].session == "ended"
    assert not host.has_session("a")
    assert (await ask(host, "b", "message", "数一个"))[-1].session == "active"


async def test_a_blocking_sync_tool_does_not_freeze_other_sessions(
    fake, hosts_over, monkeypatch
) -> None:
    """Item 15: ``time.sleep(20)`` in one game's tool froze every session for 20 s.

    Wall-clock time: the nap is ``time.sleep`` in a worker thread, which a mock clock would
    jump past."""
    monkeypatch.setattr(worker, "SYNC_TOOL_BUDGET", 1.5)
    host = hosts_over(fake, UNRULY)
    await ask(host, "a", "start")
    await ask(host, "b", "start")
    fake.push(Reply(tool_calls=[("nap", {})]), Reply("b 的回答"), Reply("a 睡完了"))
    napped: list[GameReply] = []
    async with trio.open_nursery() as nursery:

        async def sleepy() -> None:
            napped.extend(await ask(host, "a", "message", "睡吧"))

        nursery.start_soon(sleepy)
        await fake.wait_requests(3)  # a's model asked for the nap
        await trio.testing.wait_all_tasks_blocked()  # and the nap is in its thread
        started = time.monotonic()
        other = await ask(host, "b", "message", "我还在")
        assert time.monotonic() - started < 1.0
        assert other[-1].text == "b 的回答"
    assert napped[-1].text == "a 睡完了"  # the turn went on without the tool
    told = json.loads(fake.requests[-1]["messages"][-1]["content"])
    assert "nap" in told["error"]


# ------------------------------------------------------------------ item 14: shutdown


async def test_shutting_down_gives_every_request_in_flight_a_final_ended_reply(
    fake, hosts_over
) -> None:
    """Item 14: SIGTERM on ``serve`` cut every stream with no final reply."""
    host = hosts_over(fake, PROBE)
    fake.push(Reply("开局口令"), Reply("开局口令"))
    await ask(host, "a", "start")
    await ask(host, "b", "start")
    fake.default = Hang()
    got: dict[str, list[GameReply]] = {}
    async with trio.open_nursery() as nursery:
        for ctx in ("a", "b"):

            async def hang(ctx: str = ctx) -> None:
                got[ctx] = await ask(host, ctx, "message", "说点什么")

            nursery.start_soon(hang)
        await fake.wait_requests(4)
        with trio.fail_after(3):
            await host.shut_down()
    assert {ctx: replies[-1].text for ctx, replies in got.items()} == {
        "a": SHUTTING_DOWN, "b": SHUTTING_DOWN
    }
    assert all(replies[-1].session == "ended" for replies in got.values())
    assert (await ask(host, "c", "start"))[-1].text == SHUTTING_DOWN


# ------------------------------------------------------------------ item 17: long input


async def test_a_20000_character_line_reaches_the_game_cut_to_the_input_limit(
    fake, hosts_over
) -> None:
    """Item 17: a pasted page cost seconds of CPU per line; the line is bounded."""
    host = hosts_over(fake, PROBE)
    await ask(host, "a", "start")
    await ask(host, "a", "message", "我" * 20_000)
    event = json.loads(fake.requests[-1]["messages"][-1]["content"])
    assert len(event["user_text"]) == MAX_INPUT


# ------------------------------------------------------------------ items 8, 9, 10: the main agent

QUICK = Budgets(patience=0.3, line=1.5, game=1.5)


async def test_a_remote_games_thousand_intermediate_replies_are_capped(
    nursery, tmp_path, autojump_clock
) -> None:
    """Item 8: all 1,000 were spoken; now at most MAX_INTERMEDIATE, then the final one."""
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(message="chatter"), heard, tmp_path) as (agent, records, _):
        await agent.on_user("玩回声")
        await agent.on_user("说吧")
        await agent.wait_idle()
        assert len(heard.speech) == 1 + MAX_INTERMEDIATE + 1
        assert heard.speech[-1] == "远程message"
    assert [r["limit"] for r in records if r["type"] == "reply_cap"] == [MAX_INTERMEDIATE]


async def test_a_hanging_main_model_says_wait_then_falls_back_within_the_line_budget(
    nursery, offline_games
) -> None:
    """Item 9: a hanging model meant 121 s of silence per line.

    Wall clock: the model is a real socket that never answers, and the HTTP client's
    shielded clean-up waits on it; a jumping clock would run past the budget meanwhile."""
    main: FakeOpenAI = await nursery.start(serve_fake_openai)
    main.default = Hang()
    heard = Heard()
    slow = lambda _registry: OpenAIChatModel(main.settings(timeout=60), max_retries=0)  # noqa: E731
    async with pipeline(builtin_games_dir(), slow, heard=heard) as (agent, _):
        agent.budgets = QUICK
        started = trio.current_time()
        with trio.fail_after(QUICK.line + 2):
            await agent.on_user("你好")
        assert trio.current_time() - started < QUICK.line + 1
    assert heard.speech == [WAIT_TEXT, MODEL_DOWN]


class SlowSpeaker(ConsoleRobot):
    """A robot whose sentences take real time to say, like speech on the robot."""

    async def speak(self, text: str) -> None:
        await trio.sleep(0.4)
        await super().speak(text)


async def test_a_reply_that_arrived_in_time_is_not_followed_by_wait_while_it_is_spoken(
    autojump_clock
) -> None:
    """Patience is about the game's answer: with speech slower than the patience (seconds
    per sentence on the robot), every answer was followed by a spurious "稍等"."""
    heard = Heard()
    async with pipeline(builtin_games_dir(), robot=SlowSpeaker(heard.out), heard=heard) as (agent, _):
        agent.budgets = Budgets(patience=0.2, line=5)
        await agent.on_user("玩猜谜语")
        await agent.on_user("不知道")
        await agent.wait_idle()
    assert len(heard.speech) >= 2
    assert WAIT_TEXT not in heard.speech


async def test_end_game_is_acted_on_while_a_remote_game_hangs(
    nursery, tmp_path, autojump_clock
) -> None:
    """Item 10: "结束游戏" was not heard while the game hung (210 s of silence)."""
    heard = Heard()
    game = Scripted(message="hang")
    async with remote_pipeline(nursery, game, heard, tmp_path) as (agent, _, _s):
        agent.budgets = Budgets(patience=0.3, line=30)
        await agent.on_user("玩回声")
        with trio.fail_after(2):
            await agent.on_user("你在吗")  # the turn ends with "稍等": the next line is heard
        assert heard.speech[-1] == WAIT_TEXT
        with trio.fail_after(2):
            await agent.on_user("结束游戏")
            await agent.wait_idle()
        assert agent.current is None
    assert [i.kind for i in game.inputs] == ["start", "message", "end"]
    assert heard.speech[-1] == "远程end"


async def test_a_remote_game_that_never_answers_is_told_within_the_game_timeout(
    nursery, tmp_path, autojump_clock
) -> None:
    """Items 9/10: the wait for a game's reply is bounded (``AGENTCADE_GAME_TIMEOUT``)."""
    heard = Heard()
    async with remote_pipeline(nursery, Scripted(message="hang"), heard, tmp_path, reply_timeout=600) as (agent, records, _):
        agent.budgets = QUICK
        await agent.on_user("玩回声")
        with trio.fail_after(QUICK.game + 2):
            await agent.on_user("你在吗")
            await agent.wait_idle()
        assert heard.speech[-2:] == [WAIT_TEXT, REMOTE_SLOW.format(name="回声")]
        assert agent.current is not None  # a message that timed out keeps the session
    assert any(r["type"] == "game_timeout" for r in records)


# ------------------------------------------------------------------ item 11: remote cards at start-up


async def _card_server(nursery: trio.Nursery, delay: float) -> str:
    """A remote game's card that takes ``delay`` seconds (``inf``: never comes)."""

    async def handler(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        await trio.sleep(delay)
        body = json.dumps(echo_card(port)).encode()
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        await stream.send_all(head.encode() + body)
        await stream.aclose()

    listeners = await nursery.start(trio.serve_tcp, handler, 0)
    port = listeners[0].socket.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


async def test_hanging_remote_cards_do_not_hold_up_start_up(
    nursery, tmp_path, autojump_clock
) -> None:
    """Item 11: two hanging cards cost 421 s of nothing (fetched one after the other)."""
    hanging = [await _card_server(nursery, math.inf) for _ in range(2)]
    started = trio.current_time()
    async with open_registry(builtin_dir=tmp_path, remote=hanging) as registry:
        assert trio.current_time() - started < START_WAIT + 1
        assert registry.games == []
        assert set(registry.failed) == set(hanging)


async def test_a_slow_remote_game_joins_once_its_card_arrives(
    nursery, tmp_path, autojump_clock
) -> None:
    """Item 11: a slow game joins later instead of holding up the others."""
    slow = await _card_server(nursery, START_WAIT + 0.5)
    async with open_registry(builtin_dir=tmp_path, remote=[slow]) as registry:
        assert registry.games == []
        with trio.fail_after(5):
            while not registry.games:  # noqa: ASYNC110 - the registry has no event to wait on
                await trio.sleep(0.1)
        assert registry.games[0].id == "echo"
        assert slow not in registry.failed


async def test_check_warns_about_a_tool_that_blocks() -> None:
    """Item 15: blocking is reported by ``check`` (a tool should be async or cheap)."""
    from agentcade.check import run_check

    result = await run_check(str(UNRULY), timeout=20)
    blocking = [f for f in result.findings if f.rule == "TOOLS-BLOCKING"]
    assert [f.status for f in blocking] == ["warn"]
    assert "tool nap calls time.sleep()" in blocking[0].message
    assert "trio.sleep" in blocking[0].fix


async def test_a_20000_character_line_to_the_main_agent_is_cut_and_leaves_the_loop_free(
    nursery, offline_games
) -> None:
    """Item 17: 20,000 characters cost ~8 s of CPU on the event loop."""
    heard = Heard()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await trio.sleep(0.05)
            ticks += 1

    async with pipeline(builtin_games_dir(), heard=heard) as (agent, records):
        await agent.on_user("玩猜谜语")
        nursery.start_soon(ticker)
        started = trio.current_time()
        await agent.on_user("是" * 20_000)
        took = trio.current_time() - started
        assert ticks >= took / 0.05 / 3  # the loop kept running while the line was routed
    said = [r["text"] for r in records if r["type"] == "a2a_request" and r["kind"] == "message"]
    assert [len(t) for t in said] == [MAX_INPUT]
    assert any(r["type"] == "input_clipped" and r["chars"] == 20_000 for r in records)


# ------------------------------------------------------------------ the CLI's last boundary


def test_an_internal_error_inside_an_exception_group_is_one_line_and_exit_70(capsys) -> None:
    from agentcade.cli import INTERNAL, failed

    code = failed("play", ExceptionGroup("trio", [ExceptionGroup("inner", [KeyError("x")])]))
    err = capsys.readouterr().err
    assert code == INTERNAL
    assert err.count("\n") == 1
    assert "内部错误：KeyError" in err
    assert "--debug" in err
    assert "Traceback" not in err


def test_debug_shows_the_traceback(capsys) -> None:
    from agentcade.cli import failed

    try:
        raise KeyError("x")
    except KeyError as exc:
        failed("play", exc, debug=True)
    assert "Traceback" in capsys.readouterr().err


def test_an_agentcade_error_inside_an_exception_group_is_its_own_line_and_exit_1(capsys) -> None:
    from agentcade.cli import FAILED, failed
    from agentcade.core.errors import GameRemoteError

    error = GameRemoteError("network", "connecting to http://x/: refused")
    assert failed("chat", ExceptionGroup("trio", [error])) == FAILED
    err = capsys.readouterr().err
    assert err.startswith("agentcade chat: ")
    assert err.endswith("connecting to http://x/: refused\n")
    assert err.count("\n") == 1


def test_a_record_made_in_a_worker_thread_reaches_the_sinks_from_the_loops_thread() -> None:
    """Sync tools run in worker threads; sinks (the live page's trio channel) may not."""
    import threading

    from agentcade.core.trace import Trace

    seen: list[tuple[str, int]] = []
    trace = Trace(lambda rec: seen.append((rec["type"], threading.get_ident())))
    worker_thread = threading.Thread(target=lambda: trace.record("refused_call"))
    worker_thread.start()
    worker_thread.join()
    assert seen == []
    trace.record("tool_call")
    assert seen == [("refused_call", threading.get_ident()), ("tool_call", threading.get_ident())]


def test_a_sink_that_raises_is_dropped_and_the_others_still_get_records() -> None:
    """Item 3: a failing sink never fails the code that made the record."""
    from agentcade.core.trace import Trace

    def broken(rec: dict[str, Any]) -> None:
        raise OSError(28, "No space left on device")

    seen: list[str] = []
    trace = Trace(broken, lambda rec: seen.append(rec["type"]))
    trace.record("one")
    trace.record("two")
    assert seen == ["one", "two"]
