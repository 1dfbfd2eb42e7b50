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
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from agentcade.commands._pages import add_pages_options, pages_from_args
from agentcade.commands._trace import add_trace_options, trace_from_args
from agentcade.commands.chat import ConsoleTrace, LineReader
from agentcade.device.robots import Robot, open_robot
from agentcade.llm import ChatModel, make_model, offline_notice
from agentcade.main.agent import MainAgent, OfflineMainModel
from agentcade.main.output import OutputQueue
from agentcade.main.registry import GameRegistry, open_registry
from agentcade.settings import AgentSettings, SettingsError, load_game_settings
from agentcade.trace import NULL_TRACE, Trace
from agentcade.web import Pages


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
        help="console (default), sim (simulated robot), or the robot Daemon's ws:// URL",
    )
    add_trace_options(p, "the trace")
    add_pages_options(p)


def run(args: argparse.Namespace) -> int:
    """Play until /quit or end of input."""
    try:
        with trace_from_args(args, ConsoleTrace(), _main_trace_printer) as trace:
            trio.run(_play, args, trace)
    except SettingsError as exc:
        print(f"agentcade play: {exc}", file=sys.stderr)
        return 1
    return 0


def main_model(registry: GameRegistry, trace: Trace) -> tuple[ChatModel, bool]:
    """The main agent's model from ``LLM_*`` settings; the offline router when none."""
    settings = load_game_settings(AgentSettings, None)
    if settings.llm.offline:
        return OfflineMainModel(registry), True
    if settings.llm.api_key is not None:
        trace.add_secret(settings.llm.api_key.get_secret_value())
    return make_model(settings.llm), False


@asynccontextmanager
async def open_pipeline(
    robot: Robot,
    *,
    games: Sequence[str] = (),
    trace: Trace = NULL_TRACE,
    builtin_dir: Path | None = None,
    remote: Sequence[str] | None = None,
    model: Callable[[GameRegistry], ChatModel] | None = None,
) -> AsyncIterator[tuple[MainAgent, GameRegistry]]:
    """Registry, output queue and main agent, all living in one nursery.

    ``builtin_dir``, ``remote`` and ``model`` replace the defaults (``games/``, the
    installed remote games, the configured model) — for tests and embedding.
    """
    async with open_registry(
        extra=games, remote=remote, builtin_dir=builtin_dir, trace=trace
    ) as registry:
        if model is None:
            chat_model, offline = main_model(registry, trace)
        else:
            chat_model, offline = model(registry), False
        if offline:
            print(offline_notice(), file=sys.stderr)
        for problem in registry.problems:
            print(f"游戏没能加载：{problem}", file=sys.stderr)
        async with trio.open_nursery() as nursery:
            output = OutputQueue(robot, trace=trace)
            await nursery.start(output.run)
            agent = MainAgent(registry, output, chat_model, nursery, trace=trace)
            try:
                yield agent, registry
            finally:
                with trio.CancelScope(shield=True), trio.move_on_after(15):
                    await agent.shutdown()
                    close = getattr(chat_model, "aclose", None)
                    if close is not None:
                        await close()
                nursery.cancel_scope.cancel()


async def _play(args: argparse.Namespace, trace: Trace) -> None:
    async with open_robot(args.robot, trace=trace) as robot, open_pipeline(
        robot, games=args.game, trace=trace
    ) as (agent, registry):

        async def settings_saved(keys: frozenset[str]) -> None:
            # The main agent's model follows the settings page too (the games read theirs
            # at every new session).
            if any(key.startswith("LLM_") for key in keys):
                old = agent.model
                agent.model, offline = main_model(registry, trace)
                if offline:
                    print(offline_notice(), file=sys.stderr, flush=True)
                close = getattr(old, "aclose", None)
                if close is not None:
                    await close()

        async with pages_from_args(args, registry, trace, on_saved=settings_saved) as pages:
            try:
                await _play_lines(agent, registry, robot, pages)
            finally:
                close = getattr(agent.model, "aclose", None)
                if close is not None:
                    with trio.CancelScope(shield=True):
                        await close()


async def _play_lines(agent: MainAgent, registry: GameRegistry, robot: Robot, pages: Pages | None) -> None:
    if pages is not None:
        print(f"—— 设置、安装游戏和实时面板：{pages.url}", flush=True)
        if registry.failed:
            print(f"—— 有游戏还缺设置，打开 {pages.settings_url} 填好就能玩，不用重启。", flush=True)
    names = "、".join(g.name for g in registry.games) or "（没有）"
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
    return rendered


def _main_trace_printer(rec: dict[str, object]) -> None:
    kind = rec["type"]
    if kind == "main_tool_call":
        print(f"[trace] 主 Agent 调用 {rec['tool']}({rec.get('arguments')})", file=sys.stderr, flush=True)
    elif kind == "directive_executed":
        print(f"[trace] 机器人 {rec.get('directive')} → {rec.get('outcome')}", file=sys.stderr, flush=True)
    elif kind in ("a2a_request", "directive_skipped", "game_error", "busy"):
        shown = {k: v for k, v in rec.items() if k not in ("type", "ts")}
        print(f"[trace] {kind} {shown}", file=sys.stderr, flush=True)
