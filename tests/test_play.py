"""``agentcade play`` as a real process: a scenario file on stdin, offline, console or sim."""

from __future__ import annotations

import subprocess

from tests.processes import run_agentcade


async def play(env: dict[str, str], *args: str, lines: str) -> subprocess.CompletedProcess[bytes]:
    return await run_agentcade(env, "play", *args, lines=lines, limit=90)


async def test_a_scenario_file_plays_through_and_the_game_ends_at_end_of_input(cli_env) -> None:
    done = await play(cli_env, lines="有什么游戏\n玩猜谜语\n是水吗\n")
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    speech = [line for line in out.splitlines() if line.startswith("小懒：")]
    assert speech[0].startswith("小懒：我会玩")
    assert speech[2] == "小懒：不对哦，再想想，也可以要个提示。"
    assert any("谜底是" in line for line in speech[-2:])  # end of input: answer revealed
    assert out.rstrip().endswith("  [机器人] motion.move_to(pan_deg=90, tilt_deg=115, duration_ms=600)")


async def test_screen_shows_the_simulated_robots_drawing(cli_env) -> None:
    done = await play(cli_env, "--robot", "sim", lines="玩你画我猜\n/wait\n/screen\n/quit\n")
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "screen: expression preset=standby accessory=custom_vector" in out
    assert "+----------------------------------------+" in out
    assert out.count("#") > 20  # the drawing itself


async def test_trace_prints_how_each_line_was_routed_when_code_routed_it(cli_env) -> None:
    """Issue 23: the guide says --trace prints which tool the main agent called; most lines
    are routed in code (no model, so no main_tool_call) and printed nothing."""
    done = await play(cli_env, "--trace", "--no-pages", lines="玩猜谜语\n是水吗\n结束游戏\n")
    err = done.stderr.decode()
    assert done.returncode == 0, err
    routed = [line for line in err.splitlines() if line.startswith("[trace] 主 Agent 路由")]
    assert routed == [
        "[trace] 主 Agent 路由（代码）：start_game(game_id='riddle')（a game named with a play cue）",
        "[trace] 主 Agent 路由（代码）：send_message(原话)（a line for the game）",
        "[trace] 主 Agent 路由（代码）：end_game()（end phrase）",
    ]


async def test_screen_also_draws_the_simulated_screen_as_the_live_view_does(cli_env) -> None:
    """Issue 23: an author without a robot sees the picture a family sees on the live page."""
    from pathlib import Path

    import trio

    done = await play(cli_env, "--robot", "sim", "--no-pages", lines="玩你画我猜\n/wait\n/screen\n/quit\n")
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    where = out.split("屏幕的图（和实时面板里的一样）：", 1)[1].splitlines()[0]
    svg = await trio.Path(where).read_text(encoding="utf-8")
    assert Path(where).parent == Path(cli_env["AGENTCADE_HOME"])
    assert svg.startswith('<svg class="screen"')
    assert svg.count("<polyline") >= 3  # the finished drawing, not the eyes


async def test_screen_without_the_simulated_robot_says_why(cli_env) -> None:
    done = await play(cli_env, lines="/screen\n")
    assert "只在 --robot sim 时可用" in done.stdout.decode()


# --- the robot: one line and a documented exit code, never a traceback ----------------------
#
# The error paths run the real CLI in this process (``agentcade.cli.main``; no process start
# to pay for); the Daemon is a simulated one on real sockets.

import pytest  # noqa: E402
import trio  # noqa: E402

from agentcade.cli import main  # noqa: E402
from agentcade.commands.play import BAD_ROBOT, ROBOT_UNAVAILABLE  # noqa: E402
from agentcade.sim import SimDevice  # noqa: E402


@pytest.fixture
def no_app(monkeypatch) -> None:
    """No Application environment; the Daemon's control port on a closed port (9)."""
    for name in ("WATCHER_APP_DESKTOP_WS_URL", "WATCHER_APP_DEVICE_WS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WATCHER_RUNTIME_CONTROL_PORT", "9")


def only_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("robot", "code", "line"),
    [
        (
            "ws://127.0.0.1:1",
            ROBOT_UNAVAILABLE,
            "agentcade play: 连不上机器人的 Daemon（ws://127.0.0.1:1）：先启动它"
            "（watcherobot daemon start），或检查 --robot 的地址",
        ),
        (
            "bogus",
            BAD_ROBOT,
            "agentcade play: 不认识的机器人 'bogus'：用 console、sim、app（作为 WatcheRobot 应用运行时）"
            "或 Daemon 的地址 ws://主机:端口（默认 ws://127.0.0.1:8765）",
        ),
        (
            "app",
            ROBOT_UNAVAILABLE,
            "agentcade play: 没有在 WatcheRobot 应用里运行（WATCHER_APP_DESKTOP_WS_URL 和 "
            "WATCHER_APP_DEVICE_WS_URL 没有设置）：用 watcherobot app run 启动，"
            "或用 --robot ws://127.0.0.1:8765 连桌面 Daemon",
        ),
    ],
    ids=["unreachable", "bogus", "app-without-environment"],
)
def test_a_robot_that_cannot_be_used_is_one_line_and_an_exit_code(
    no_app, capsys, robot: str, code: int, line: str
) -> None:
    assert main(["play", "--no-pages", "--robot", robot]) == code
    out, err = capsys.readouterr()
    assert (out, only_line(err)) == ("", line)


async def play_in_a_thread(*args: str) -> int:
    """``agentcade play`` in a worker thread (its own trio run) while this run serves."""
    return await trio.to_thread.run_sync(main, ["play", "--no-pages", *args])


async def test_a_handshake_slower_than_5_s_is_one_line(
    no_app, capsys, monkeypatch, nursery
) -> None:
    device = SimDevice(hello_delay=6.0)
    url = await nursery.start(device.serve)
    assert device.control_url is not None
    monkeypatch.setenv("WATCHER_RUNTIME_CONTROL_PORT", device.control_url.rsplit(":", 1)[1])
    assert await play_in_a_thread("--robot", url) == ROBOT_UNAVAILABLE
    assert only_line(capsys.readouterr().err) == (
        f"agentcade play: 机器人的 Daemon（{url}）5 秒内没有完成握手："
        "看看 Daemon 是否卡住（watcherobot daemon status），再试"
    )


async def test_a_robot_another_application_holds_is_refused_in_one_line(
    no_app, capsys, monkeypatch, nursery
) -> None:
    device = SimDevice()
    device.holder = "com.example.other"
    url = await nursery.start(device.serve)
    assert device.control_url is not None
    monkeypatch.setenv("WATCHER_RUNTIME_CONTROL_PORT", device.control_url.rsplit(":", 1)[1])
    assert await play_in_a_thread("--robot", url) == ROBOT_UNAVAILABLE
    assert only_line(capsys.readouterr().err) == (
        "agentcade play: 机器人正被应用 com.example.other 占用：先运行 watcherobot app stop，再试"
    )
    assert device.sessions == 0


async def test_play_on_a_daemon_whose_robot_is_offline_talks_and_skips_the_robot(
    cli_env, nursery
) -> None:
    """Before: a command timeout (5 s) per directive, for every directive of the game."""
    device = SimDevice()
    device.drop_device()
    url = await nursery.start(device.serve)
    env = {k: v for k, v in cli_env.items() if not k.startswith("WATCHER_APP_")}
    assert device.control_url is not None
    env["WATCHER_RUNTIME_CONTROL_PORT"] = device.control_url.rsplit(":", 1)[1]
    done = await play(env, "--robot", url, "--trace", lines="玩你画我猜\n/wait\n")
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert f"[机器人] 已连上 {url}，但 Daemon 说机器人没连上：先只说话" in err
    assert "[trace] 机器人不在，跳过 expression_runtime.start" in err
    assert "小懒：" in done.stdout.decode()
    assert "Traceback" not in err
    assert [t for t in device.dropped if not t.startswith("sys.")] == []
