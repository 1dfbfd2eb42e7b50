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
    assert any("这个谜语的谜底是" in line for line in speech[-2:])  # end of input: answer revealed
    assert out.rstrip().endswith("  [机器人] motion.move_to(pan_deg=90, tilt_deg=115, duration_ms=600)")


async def test_screen_shows_the_simulated_robots_drawing(cli_env) -> None:
    done = await play(cli_env, "--robot", "sim", lines="玩你画我猜\n/wait\n/screen\n/quit\n")
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "screen: expression preset=standby accessory=custom_vector" in out
    assert "+----------------------------------------+" in out
    assert out.count("#") > 20  # the drawing itself


async def test_screen_without_the_simulated_robot_says_why(cli_env) -> None:
    done = await play(cli_env, lines="/screen\n")
    assert "只在 --robot sim 时可用" in done.stdout.decode()
