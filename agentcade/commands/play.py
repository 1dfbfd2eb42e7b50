"""``agentcade play``: the whole pipeline in text — main agent, every game, the output queue.

Typed lines stand in for speech recognition; the robot is the console (default), the
simulated robot (``--robot sim``) or a real robot's Daemon URL. Like the robot, the next
line is read only after the first reply to the previous one has been played, so a line
typed while a game still works gets "我还在准备呢". ``/wait`` waits for pending replies,
``/screen`` prints what the simulated robot's screen shows (``--robot sim``),
``/quit`` ends a running game (``end`` with reason ``shutdown``) and leaves. Lines can come
from a file: ``agentcade play < scenario.txt`` (at the end of input, pending replies are
played before the game is ended).

The main agent's model is configured like the games' (``LLM_*`` in the environment or
``<user config dir>/.env``); with none, the offline router plays.

Before a real robot is used, its Daemon is asked whether a robot is online and whether
another Application holds it; one line says so. Exit codes: 0 done, 1 settings to fix,
:data:`BAD_ROBOT` (2) a ``--robot`` value that names no robot, :data:`ROBOT_UNAVAILABLE` (3)
the robot cannot be used (Daemon unreachable or too slow to answer, another Application
holds the robot, ``app`` outside an Application) — each with one line saying what to do.

Ctrl-C and SIGTERM stop play within a moment, even while a model or a game hangs: the
game is ended (reason ``shutdown``) and the robot reset, within 3 seconds in all; exit
code 130 / 143.
"""

from __future__ import annotations

import argparse
import os
import sys

import trio

from agentcade.commands._pages import add_pages_options, pages_from_args
from agentcade.commands._signals import Stopped, exit_code, stop_on_signals
from agentcade.commands._trace import add_trace_options, trace_from_args
from agentcade.commands.chat import ConsoleTrace, LineReader
from agentcade.core.settings import SettingsError, user_config_dir
from agentcade.core.trace import Trace
from agentcade.device.robots import DeviceError, Robot, robot_spec_problem
from agentcade.game.client import GameInfo
from agentcade.main.agent import MainAgent
from agentcade.web.screen import STANDBY_EYES, svg_of
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.robot import open_robot

BAD_ROBOT = 2
"""Exit code: ``--robot`` names no robot (like argparse's usage errors)."""
ROBOT_UNAVAILABLE = 3
"""Exit code: the robot cannot be used; the line printed says why and what to do."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade play``."""
    p.add_argument(
        "--game",
        action="append",
        default=[],
        metavar="DIR|URL",
        help="also offer this game (replaces one with the same id); may repeat",
    )
    p.add_argument(
        "--robot",
        default="console",
        help="console (default), sim (simulated robot), app (inside a WatcheRobot Application), "
        "or the robot Daemon's ws:// URL",
    )
    add_trace_options(p, "the trace")
    add_pages_options(p)


STOP_GRACE = 1.5
"""Seconds the game's goodbye may take after Ctrl-C / SIGTERM (the reset follows)."""


def run(args: argparse.Namespace) -> int:
    """Play until /quit, end of input, Ctrl-C or SIGTERM."""
    problem = robot_spec_problem(args.robot)
    if problem is not None:
        print(f"agentcade play: {problem}", file=sys.stderr)
        return BAD_ROBOT
    try:
        with trace_from_args(args, ConsoleTrace(), _main_trace_printer) as trace:
            stopped: Stopped = trio.run(_play, args, trace)
    except SettingsError as exc:
        print(f"agentcade play: {exc}", file=sys.stderr)
        return 1
    except DeviceError as exc:  # only connecting raises it: during play the queue keeps them
        print(f"agentcade play: {exc.reason}", file=sys.stderr)
        return ROBOT_UNAVAILABLE
    if stopped.signal is not None:
        # The line reader's thread is still blocked reading stdin, and the interpreter's
        # exit would wait seconds for stdin's lock: everything is closed, so leave now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_code(stopped))
    return exit_code(stopped)


async def _play(args: argparse.Namespace, trace: Trace) -> Stopped:
    lines_scope = trio.CancelScope()
    async with stop_on_signals(lines_scope) as stopped, open_robot(
        args.robot, trace=trace
    ) as robot, open_pipeline(robot, games=args.game, trace=trace) as (
        agent, registry
    ), pages_from_args(args, agent, registry, trace):
        with lines_scope:
            await _lines(agent, robot, registry.games)
        if stopped.signal is not None:
            print("—— 收到退出信号，正在结束游戏。", flush=True)
            agent.shutdown_grace = STOP_GRACE
    return stopped


async def _lines(agent: MainAgent, robot: Robot, games: list[GameInfo]) -> None:
    names = "、".join(g.name for g in games) or "（没有）"
    print(f"—— 小懒在听。可以玩：{names}。/wait 等游戏说完，/screen 看屏幕，/quit 退出。", flush=True)
    lines = LineReader()
    while True:
        line = await lines.read()
        if line is None:  # end of input: let pending replies play, then end the game
            await agent.wait_idle()
            return
        line = line.strip()
        if not line:
            continue
        if line == "/quit":
            return
        if line == "/wait":
            await agent.wait_idle()
            continue
        if line == "/screen":
            print(_screen(robot), flush=True)
            continue
        await agent.on_user(line)


def _screen(robot: Robot) -> str:
    """What the simulated robot shows now (text, with the drawing as ASCII)."""
    device = getattr(robot, "device", None)
    if device is None:
        return "（/screen 只在 --robot sim 时可用：模拟机器人能把屏幕画成文字）"
    rendered: str = device.render_text()
    svg = _screen_svg(device)
    if svg is None:
        return rendered
    path = user_config_dir().parent / "screen.svg"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
    except OSError as exc:
        return rendered + f"\n（屏幕的图没能写出来：{exc.strerror or exc}）"
    return rendered + f"\n屏幕的图（和实时面板里的一样）：{path}"


def _screen_svg(device: object) -> str | None:
    """The simulated screen drawn by the live view's renderer: the drawing, or the eyes."""
    state = getattr(device, "state", None)
    if state is None:
        return None
    if state.screen == "expression" and (strokes := state.expression.strokes()):
        return svg_of(strokes)
    if state.screen in ("standby", "expression"):
        return svg_of(STANDBY_EYES)
    return None


_ROUTED_TOOLS = {
    "start": "start_game(game_id={game!r})",
    "end": "end_game()",
    "change": "end_game()，再问想玩哪个",
    "list": "list_games()",
    "forward": "send_message(原话)",
    "no_game": "没有游戏在玩，告诉用户",
}
"""What a line routed in code does, in the main agent's tools (the guide: ``--trace`` prints
which tool the main agent called; for most lines code, not the model, calls it)."""


def route_line(rec: dict[str, object]) -> str:
    """The ``--trace`` line of a ``main_route`` record: how this line was routed."""
    route = str(rec.get("route", ""))
    why = f"（{rec['why']}）" if rec.get("why") else ""
    if route == "model":
        return f"[trace] 主 Agent 路由：交给大模型{why}"
    tool = _ROUTED_TOOLS.get(route, route).format(game=rec.get("game", ""))
    return f"[trace] 主 Agent 路由（代码）：{tool}{why}"


def _main_trace_printer(rec: dict[str, object]) -> None:
    kind = rec["type"]
    if kind == "main_route":
        print(route_line(rec), file=sys.stderr, flush=True)
    elif kind == "main_tool_call":
        print(f"[trace] 主 Agent 调用 {rec['tool']}({rec.get('arguments')})", file=sys.stderr, flush=True)
    elif kind == "directive_executed":
        print(f"[trace] 机器人 {rec.get('directive')} → {rec.get('outcome')}", file=sys.stderr, flush=True)
    elif kind == "directive_skipped" and rec.get("kind") == "robot_away":
        print(f"[trace] 机器人不在，跳过 {rec.get('directive')}", file=sys.stderr, flush=True)
    elif kind in ("a2a_request", "directive_skipped", "game_error", "busy"):
        shown = {k: v for k, v in rec.items() if k not in ("type", "ts")}
        print(f"[trace] {kind} {shown}", file=sys.stderr, flush=True)
