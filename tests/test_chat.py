"""``agentcade chat``: the text simulator, run as a real process on the offline model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trio

from agentcade.wiring.games import open_local_game
from agentcade.wiring.serve import serve_game
from tests.processes import run_agentcade

GAMES = Path(__file__).resolve().parents[1] / "games"
BAD_ROBOT = Path(__file__).resolve().parent / "data" / "games" / "bad_robot"


async def chat(env: dict[str, str], *args: str, lines: str) -> subprocess.CompletedProcess[bytes]:
    return await run_agentcade(env, "chat", *args, lines=lines)


async def test_plays_a_scripted_session_from_stdin_and_says_it_is_offline(cli_env) -> None:
    done = await chat(cli_env, "riddle", lines="是水吗\n给个提示\n/quit\n")
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "使用离线模型" in err
    assert out.splitlines()[0] == "—— 猜谜语（riddle）。输入 /end 结束这一局，/quit 退出。"
    assert "你：是水吗" in out
    assert "  [机器人] motion.move_to(" in out  # the wrong guess shakes the head
    # opening, wrong, hint; then /quit: the answer and the summary, as the game wrote them
    assert out.count("小懒：") == 4
    assert "—— 这一局结束了" in out


async def test_end_closes_the_round_and_the_next_line_starts_a_new_one(cli_env, tmp_path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = await chat(
        cli_env, "guess_number", "--start", "来猜数字", "--trace-file", str(trace), lines="/end\n再来\n/quit\n"
    )
    assert done.returncode == 0, done.stderr.decode()
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    starts = [r for r in records if r["type"] == "hook" and r["hook"] == "on_start"]
    ends = [r for r in records if r["type"] == "hook" and r["hook"] == "on_end"]
    assert (len(starts), len(ends)) == (2, 2)
    # the opening is the whole answer: spoken by code, the model is not asked
    direct = [r for r in records if r["type"] == "direct_reply"]
    assert direct[0] == {**direct[0], "source": "hook", "text": starts[0]["result"]["message"]}


async def test_trace_prints_the_prompt_once_then_state_and_tool_calls(cli_env) -> None:
    # Two lines the model answers: the prompt is printed for the first, the state for the next.
    done = await chat(cli_env, "riddle", "--trace", lines="不是水吧\n不是火吧\n给个提示\n/quit\n")
    err = done.stderr.decode()
    assert err.count("[trace] 系统提示词：") == 1
    assert "[trace] 状态：" in err
    assert "[trace] 工具 check_answer(" in err
    assert "[trace] → 模型 user:" in err


async def test_trace_file_has_one_json_record_per_event(cli_env, tmp_path) -> None:
    trace = tmp_path / "t.jsonl"
    done = await chat(cli_env, "riddle", "--trace-file", str(trace), lines="不是水吧\n/quit\n")
    assert done.returncode == 0
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    kinds = {r["type"] for r in records}
    assert {"game_prompt", "model_request", "tool_call", "hook", "game_reply"} <= kinds
    assert all("ts" in r for r in records)


async def test_a_folder_that_is_not_a_game_is_a_clear_error(cli_env, tmp_path) -> None:
    done = await chat(cli_env, str(tmp_path), lines="")
    assert done.returncode == 1
    assert "SKILL.md: missing" in done.stderr.decode()


async def test_chat_plays_a_remote_game_by_url(cli_env, nursery, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))
    async with open_local_game(str(GAMES / "riddle")) as local:
        port, _ = await nursery.start(
            lambda task_status: serve_game(local, port=0, host="127.0.0.1", url=None, task_status=task_status)
        )
        done = await chat(cli_env, f"http://127.0.0.1:{port}", lines="是水吗\n/quit\n")
        out = done.stdout.decode()
        assert done.returncode == 0, done.stderr.decode()
        assert out.startswith("—— 猜谜语（riddle）")
        assert out.count("小懒：") == 3  # opening, wrong, the answer with the summary
        assert local.host.session_count == 0  # /quit ended the remote session
        nursery.cancel_scope.cancel()


async def test_chat_with_an_openai_compatible_endpoint_and_no_key_in_the_trace(cli_env, nursery, tmp_path) -> None:
    from agentcade.testing.fake_openai import Reply, serve_fake_openai

    fake = await nursery.start(serve_fake_openai)
    fake.push(Reply("你好呀，我们接着猜吧。"))
    cli_env.update(LLM_BASE_URL=fake.url, LLM_API_KEY="sk-very-secret-key", LLM_MODEL="fake-model")
    trace = tmp_path / "trace.jsonl"
    done = await chat(cli_env, "riddle", "--trace", "--trace-file", str(trace), lines="是水吗\n你好呀\n/quit\n")
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "使用离线模型" not in err
    speech = [line for line in out.splitlines() if line.startswith("小懒：")]
    assert speech[0].startswith("小懒：好呀，我们来猜谜语！")  # the opening is code's
    assert speech[1] == "小懒：不对哦，再想想，也可以要个提示。"  # judged wrong in code
    assert speech[2] == "小懒：你好呀，我们接着猜吧。"  # chat: the model's words
    assert "谜底是" in speech[3]  # the unrevealed answer and the summary, as the game wrote them
    assert [r["model"] for r in fake.requests] == ["fake-model"]
    assert "sk-very-secret-key" not in trace.read_text(encoding="utf-8") + out + err


async def test_robot_calls_the_game_may_not_make_are_shown(cli_env) -> None:
    done = await chat(cli_env, str(BAD_ROBOT), lines="我说一句话\n/quit\n")
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "  [机器人] motion.play_action('nod')" in out  # the valid call of on_start
    assert "  [机器人] 没执行 lights.set_color('#00FF00')（cheer）：it needs the capability 'light'" in out
    assert "  [机器人] 没执行 motion.move_to(pan_deg=999, tilt_deg=115, duration_ms=400)（cheer）" in out


async def test_a_folder_with_its_own_games_package_still_finds_the_built_in_games(cli_env, tmp_path) -> None:
    """Issue 22: in a game author's repository (its own ``games/`` package in the current
    folder), ``python -m agentcade chat riddle`` answered "no built-in game with that id"."""
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "__init__.py").write_text("", encoding="utf-8")
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, "-m", "agentcade", "chat", "riddle"],
            stdin=b"/quit\n",
            capture_stdout=True,
            capture_stderr=True,
            env=cli_env,
            cwd=tmp_path,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    assert "猜谜语（riddle）" in done.stdout.decode()
