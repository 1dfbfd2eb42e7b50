"""Issue 12 through the real ``agentcade`` process: every error path of every subcommand is
one line and a documented exit code, never a traceback; signals act within seconds."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from agentcade.a2a.client import A2AClient
from agentcade.core.protocol import GameInput, GameReply
from agentcade.testing.fake_openai import FakeOpenAI, Hang, serve_fake_openai
from agentcade.testing.process import AgentcadeProcess
from tests.processes import run_agentcade

PROBE = Path(__file__).parent / "data" / "games" / "probe"


def one_line_error(done: subprocess.CompletedProcess[bytes], code: int) -> str:
    """The process failed with ``code`` and said why in exactly one line, no traceback."""
    err = done.stderr.decode()
    assert done.returncode == code, err
    assert "Traceback" not in err + done.stdout.decode()
    lines = [line for line in err.splitlines() if line.strip() and "离线模型" not in line]
    assert len(lines) == 1, err
    return lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------ item 2: non-UTF-8 files


@pytest.mark.parametrize("command", [["chat", "riddle"], ["play", "--no-pages"]])
async def test_a_non_utf8_user_env_file_is_one_line_and_exit_1(cli_env, tmp_path, command) -> None:
    env_file = tmp_path / "config" / ".env"
    env_file.parent.mkdir(parents=True)
    env_file.write_bytes("LLM_MODEL=通义千问\n".encode("gbk"))
    line = one_line_error(await run_agentcade(cli_env, *command, lines="/quit\n"), 1)
    assert "不是 UTF-8" in line
    assert str(env_file) in line


async def test_serve_with_a_non_utf8_settings_yaml_is_one_line(cli_env, tmp_path) -> None:
    game = tmp_path / "game"
    subprocess.run(["cp", "-r", str(PROBE), str(game)], check=True)  # noqa: ASYNC221
    (game / "settings.yaml").write_bytes("settings:\n  - key: LLM_MODEL\n    description: 名字\n".encode("gbk"))
    line = one_line_error(await run_agentcade(cli_env, "serve", str(game), "--port", "0", lines=""), 1)
    assert "不是 UTF-8" in line


# ------------------------------------------------------------------ item 3: the trace file


async def test_trace_file_on_a_directory_is_one_line_and_exit_1(cli_env, tmp_path) -> None:
    done = await run_agentcade(cli_env, "chat", "riddle", "--trace-file", str(tmp_path), lines="/quit\n")
    assert "--trace-file" in one_line_error(done, 1)


async def test_trace_file_in_a_missing_folder_is_created(cli_env, tmp_path) -> None:
    path = tmp_path / "new" / "folder" / "trace.jsonl"
    done = await run_agentcade(cli_env, "chat", "riddle", "--trace-file", str(path), lines="是水吗\n/quit\n")
    assert done.returncode == 0, done.stderr.decode()
    assert path.read_text(encoding="utf-8").count("\n") > 3


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a disk that is always full)")
async def test_a_trace_file_whose_disk_fills_up_costs_the_trace_not_the_game(cli_env) -> None:
    done = await run_agentcade(cli_env, "play", "--no-pages", "--trace-file", "/dev/full",
                               lines="玩猜谜语\n是水吗\n/quit\n")
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "Traceback" not in err
    assert err.count("写不进去了") == 1
    assert done.stdout.decode().count("小懒：") >= 3  # the game went on


# ------------------------------------------------------------------ item 6: chat URL


async def test_chat_with_an_unreachable_url_is_one_line_and_exit_1(cli_env) -> None:
    done = await run_agentcade(cli_env, "chat", f"http://127.0.0.1:{free_port()}/", lines="/quit\n")
    assert "agentcade chat:" in one_line_error(done, 1)


async def test_chat_with_a_garbage_card_is_one_line_and_exit_1(cli_env, nursery) -> None:
    async def garbage(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        body = b"{not a card"
        await stream.send_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        await stream.aclose()

    listeners = await nursery.start(trio.serve_tcp, garbage, 0)
    port = listeners[0].socket.getsockname()[1]
    done = await run_agentcade(cli_env, "chat", f"http://127.0.0.1:{port}/", lines="/quit\n")
    assert "agentcade chat:" in one_line_error(done, 1)


async def test_chat_goes_on_after_one_garbage_reply(cli_env, nursery) -> None:
    from agentcade.a2a.card import build_card
    from agentcade.a2a.server import serve_a2a
    from tests.a2a_peers import FakeSkill

    class Flaky:
        async def handle(self, context_id: str, game_input: GameInput, emit) -> None:
            if game_input.text == "坏":
                raise RuntimeError("broken reply")
            await emit(GameReply(text=f"收到{game_input.text}"), final=True)

    listeners = await nursery.start(
        serve_a2a, Flaky(), lambda port: build_card(FakeSkill(), f"http://127.0.0.1:{port}/"), 0
    )
    port = listeners[0].socket.getsockname()[1]
    done = await run_agentcade(cli_env, "chat", f"http://127.0.0.1:{port}/", lines="坏\n好\n/quit\n")
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "Traceback" not in out + done.stderr.decode()
    assert "—— 游戏出错了" in out
    assert "小懒：收到好" in out


# ------------------------------------------------------------------ items 7, 16: serve's address


async def test_serve_on_a_port_in_use_is_one_line_and_exit_1(cli_env) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = await run_agentcade(cli_env, "serve", str(PROBE), "--host", "127.0.0.1", "--port", str(port), lines="")
    line = one_line_error(done, 1)
    assert f"127.0.0.1:{port}" in line
    assert "正在退出" not in done.stdout.decode()


async def test_serve_on_an_unresolvable_host_is_one_line_and_exit_1(cli_env) -> None:
    done = await run_agentcade(cli_env, "serve", str(PROBE), "--host", "no-such-host.invalid", "--port", "0", lines="")
    assert "no-such-host.invalid" in one_line_error(done, 1)


@pytest.mark.parametrize(
    "flags", [["--port", "99999"], ["--port", "-1"], ["--max-sessions", "0"], ["--max-sessions", "-5"]]
)
async def test_serve_refuses_a_port_or_session_limit_out_of_range(cli_env, flags) -> None:
    done = await run_agentcade(cli_env, "serve", str(PROBE), *flags, lines="")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr.decode()
    assert flags[0] in done.stderr.decode()


# ------------------------------------------------------------------ items 13, 14: serve running


async def _serving(nursery: trio.Nursery, env: dict[str, str]) -> tuple[AgentcadeProcess, str]:
    proc = await AgentcadeProcess.start(nursery, env, "serve", str(PROBE), "--port", "0", "--host", "127.0.0.1")
    found = await proc.expect(r"http://127\.0\.0\.1:(\d+)/ ")
    return proc, f"http://127.0.0.1:{found.group(1)}/"


def model_env(env: dict[str, str], fake: FakeOpenAI) -> dict[str, str]:
    return {**env, "LLM_BASE_URL": fake.url, "LLM_API_KEY": "sk-serve-secret", "LLM_TIMEOUT": "1"}


async def test_serve_logs_each_model_error_in_one_line_without_the_key(cli_env, nursery) -> None:
    """Item 13: an operator could not see why every reply was a fallback."""
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    fake.default = Hang()
    proc, url = await _serving(nursery, model_env(cli_env, fake))
    try:
        replies = await A2AClient().send(url, "c", GameInput(kind="start", text="开始"))
        assert replies[-1].text.strip()
        found = await proc.expect(r"agentcade serve: model_error [^\n]*\n")
        assert "timed out" in found.group(0)
        assert "sk-serve-secret" not in proc.output
        assert "Traceback" not in proc.output
    finally:
        await proc.stop()


async def test_sigterm_on_serve_gives_every_turn_in_flight_a_final_ended_reply(cli_env, nursery) -> None:
    """Item 14: every client saw its stream cut with no final reply."""
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    proc, url = await _serving(nursery, {**model_env(cli_env, fake), "LLM_TIMEOUT": "60"})
    try:
        client = A2AClient()
        for ctx in ("a", "b", "c"):
            await client.send(url, ctx, GameInput(kind="start", text="开始"))
        fake.default = Hang()
        finals: list[GameReply] = []
        async with trio.open_nursery() as inner:
            for ctx in ("a", "b", "c"):

                async def hang(ctx: str = ctx) -> None:
                    finals.append((await client.send(url, ctx, GameInput(kind="message", text="嗯")))[-1])

                inner.start_soon(hang)
            await fake.wait_requests(6)
            proc.proc.send_signal(signal.SIGTERM)
            with trio.fail_after(8):
                await proc.proc.wait()
        assert proc.proc.returncode == 0
        assert len(finals) == 3
        assert all(f.session == "ended" and "暂停" in f.text for f in finals)
        assert "Traceback" not in proc.output
    finally:
        await proc.stop()


# ------------------------------------------------------------------ item 14: play and signals


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM cannot be sent to a console process")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
async def test_a_signal_on_play_during_a_hang_ends_the_game_within_3_seconds(
    cli_env, nursery, tmp_path, sig
) -> None:
    """Item 14: SIGTERM killed play without ending the game; Ctrl-C in a hang took 15 s."""
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    trace = tmp_path / "trace.jsonl"
    env = {**model_env(cli_env, fake), "LLM_TIMEOUT": "60", "AGENTCADE_PATIENCE": "0.5"}
    proc = await AgentcadeProcess.start(
        nursery, env, "play", "--no-pages", "--game", str(PROBE), "--trace-file", str(trace)
    )
    try:
        await proc.expect("小懒在听")
        fake.default = Hang()
        await proc.say("玩探针")  # its start's required text is spoken at once, then its model hangs
        await proc.expect("开局口令")
        await fake.wait_requests(1)
        started = trio.current_time()
        proc.proc.send_signal(sig)
        with trio.fail_after(6):
            await proc.proc.wait()
        assert trio.current_time() - started < 3.5
        assert proc.proc.returncode == 128 + sig
        assert "Traceback" not in proc.output
    finally:
        await proc.stop()
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert any(r["type"] == "game_cleared" for r in records)
    assert re.search(r"收到退出信号", proc.output)


# ------------------------------------------------------------------ the storm


class Storm:
    """A remote game that misbehaves by what it is told."""

    async def handle(self, context_id: str, game_input: GameInput, emit) -> None:
        text = game_input.text
        if game_input.kind == "message" and text == "挂":
            await trio.sleep_forever()
        if game_input.kind == "message" and text == "吵":
            for n in range(1000):
                await emit(GameReply(text=f"吵{n}"), final=False)
        if game_input.kind == "message" and text == "坏":
            raise RuntimeError("the storm broke the game")
        ended = game_input.kind == "end"
        await emit(GameReply(text=f"回声：{text[:20]}", session="ended" if ended else "active"), final=True)


def storm_model(fake: FakeOpenAI) -> None:
    """The main model fails in turn: hangs, 500, garbage, Retry-After 60, 600 characters."""
    from agentcade.testing.fake_openai import Fail, Garbage, Reply

    faults: list[Reply | Fail | Garbage | Hang] = [
        Hang(), Fail(500, headers=(("x-should-retry", "false"),)), Garbage(b"<html>"),
        Fail(429, headers=(("retry-after", "60"),)), Reply("很长的话。" * 120),
    ]
    fake.default = lambda _request: faults.pop(0) if faults else Hang()


async def test_storm_every_line_is_answered_within_its_budget_and_nothing_crashes(
    cli_env, nursery
) -> None:
    """Done when: a misbehaving model and a misbehaving remote game leave the process alive,
    answering every line within its budget, with no traceback on stdout or stderr."""
    from agentcade.a2a.card import build_card
    from agentcade.a2a.server import serve_a2a
    from tests.a2a_peers import FakeSkill

    listeners = await nursery.start(
        serve_a2a, Storm(), lambda port: build_card(FakeSkill(), f"http://127.0.0.1:{port}/"), 0
    )
    game_url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    storm_model(fake)
    budget = 5.0
    env = {**model_env(cli_env, fake), "LLM_TIMEOUT": "2", "AGENTCADE_PATIENCE": "0.5",
           "AGENTCADE_LINE_BUDGET": str(budget), "AGENTCADE_GAME_TIMEOUT": str(budget)}
    proc = await AgentcadeProcess.start(nursery, env, "play", "--no-pages", "--game", game_url)
    lines = [
        "你好", "今天天气怎么样", "讲个笑话", "再讲一个", "你会什么",  # the model's faults
        "玩回声", "挂", "结束游戏",  # a hanging game, ended while it hangs
        "玩回声", "吵", "坏", "长" * 20_000, "结束游戏",  # chatter, a failure, a pasted page
    ]
    try:
        await proc.expect("小懒在听")
        for line in lines:
            after = len(proc.output)
            await proc.say(line)
            await proc.expect("小懒：", after=after, limit=budget + 3)
        await proc.say("/quit")
        with trio.fail_after(15):
            await proc.proc.wait()
        assert proc.proc.returncode == 0, proc.output
    finally:
        await proc.stop()
    assert "Traceback" not in proc.output
    assert proc.output.count("吵") < 40  # 1,000 intermediate replies were capped
