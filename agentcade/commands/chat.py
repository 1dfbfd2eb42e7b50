"""``agentcade chat <dir|id|url>``: the text simulator — type lines, read replies.

Replies and device directives print as readable text, so a game can be tried without a
robot. ``/end`` ends the round's game, ``/quit`` leaves (ending a running game first).
After a game ends, the next line starts a new one. Lines come from stdin, so
``agentcade chat games/riddle < lines.txt`` plays a scripted session.

Errors: a game that cannot be opened (a folder with a mistake, a URL that does not answer
or serves a card we cannot play) is one line and exit code 1; a reply that goes wrong
mid-session is one line, and the session goes on. A line longer than ``MAX_INPUT``
characters is cut to it; when the game has said nothing for a while, "（还在等游戏回应……）"
is printed so a hang is not mistaken for a crash.

``--trace`` prints, per game, the composed system prompt once and then the state each
round, the messages sent to the model and every tool call with its arguments and result;
``--trace-file PATH`` writes the same records as JSON lines. A robot call the game may not
make (undeclared capability: skipped; not open or invalid: the tool fails) is always shown,
``[机器人] 没执行 ...``, since the author would otherwise never learn of it; so is a line the
speech guard would not let the robot say (``[安全] ...``, ``agentcade.core.guard``).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from typing import Any, BinaryIO, TextIO

import trio

from agentcade.commands._trace import add_trace_options, trace_from_args
from agentcade.core import guard
from agentcade.core.errors import PeerError
from agentcade.core.host_settings import load_budgets
from agentcade.core.protocol import DEFAULT_START, GameInput, GameReply
from agentcade.core.settings import SettingsError
from agentcade.core.speech import clip_input
from agentcade.core.trace import Trace
from agentcade.game.client import GameClient
from agentcade.game.loader import GameLoadError
from agentcade.llm import offline_notice
from agentcade.wiring.games import is_url, open_game, open_local_game


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade chat``."""
    p.add_argument("game", help="game folder, built-in game id, or https:// URL of a remote game")
    p.add_argument("--start", default=DEFAULT_START, help="the opening line (default: %(default)s)")
    add_trace_options(p, "prompts, model messages and tool calls")


def run(args: argparse.Namespace) -> int:
    """Run the simulator; exit code 0, or 1 when the game cannot be opened."""
    try:
        with trace_from_args(args, ConsoleTrace()) as trace:
            trace.add_sink(print_skipped)
            return trio.run(_chat, args, trace)
    except (GameLoadError, SettingsError) as exc:
        print(f"agentcade chat: {exc}", file=sys.stderr)
        return 1



async def _chat(args: argparse.Namespace, trace: Trace) -> int:
    global _patience
    budgets = load_budgets()
    _patience = budgets.patience
    if is_url(args.game):
        async with open_game(args.game, trace=trace, game_timeout=budgets.game) as client:
            return await _session(client, args)
    async with open_local_game(args.game, trace=trace) as local:
        if local.settings.llm.offline:
            print(offline_notice(), file=sys.stderr)
        return await _session(local.client, args)


async def _session(client: GameClient, args: argparse.Namespace) -> int:
    print(f"—— {client.info.name}（{client.info.id}）。输入 /end 结束这一局，/quit 退出。", flush=True)
    lines = LineReader()
    context: str | None = None
    pending_start: str | None = args.start
    while True:
        if pending_start is not None:
            context = uuid.uuid4().hex
            text, pending_start = pending_start, None
            if await _request(client, context, GameInput(kind="start", text=text)):
                context = None
            continue
        line = await lines.read()
        if line is None or line.strip() == "/quit":
            if context is not None:
                await _request(client, context, GameInput(kind="end", text="", reason="shutdown"))
            return 0
        line = clip_input(line.strip())
        if not line:
            continue
        if line == "/end":
            if context is not None:
                await _request(client, context, GameInput(kind="end", text="结束游戏"))
                context = None
            continue
        if context is None:
            pending_start = line
            continue
        if await _request(client, context, GameInput(kind="message", text=line)):
            context = None


async def _request(client: GameClient, context: str, game_input: GameInput) -> bool:
    """Send one request, print its replies; returns whether the session ended.

    A request that fails (a remote game's garbage, a dropped connection) is told in one
    line; a failed ``start`` or ``end`` counts as the end of the session.
    """
    ended = False
    waiting = trio.CancelScope()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_still_waiting, waiting)
            async with client.stream(context, game_input) as replies:
                async for reply, is_final in replies:
                    waiting.cancel()
                    print_reply(reply)
                    if is_final:
                        ended = reply.session == "ended"
            waiting.cancel()
    except* PeerError as group:
        print(f"—— 游戏出错了：{group.exceptions[0]}。可以再说一遍，或者 /quit 退出。", flush=True)
        ended = game_input.kind != "message"
    if ended:
        print("—— 这一局结束了。输入一句话开始新的一局，/quit 退出。", flush=True)
    return ended


_patience = 4.0
"""Seconds of silence before "still waiting" is printed (``AGENTCADE_PATIENCE``)."""


async def _still_waiting(scope: trio.CancelScope) -> None:
    with scope:
        await trio.sleep(_patience)
        print("（还在等游戏回应……）", flush=True)


def print_reply(reply: GameReply) -> None:
    """Directives first (the robot does them before speaking), then the speech."""
    for directive in reply.directives:
        print(f"  [机器人] {directive.describe()}", flush=True)
    if reply.text:
        print(f"小懒：{reply.text}", flush=True)
        hit = guard.screen(reply.text)
        if hit is not None:  # the author learns what the robot would do with it
            print(f"  [安全] 在机器人上不会念这句话（它{guard.TOPIC_WORDS.get(hit.topic, hit.reason)}），"
                  f"会换成：{guard.neutral_line(in_game=True)}", flush=True)


def print_skipped(rec: dict[str, Any]) -> None:
    """A robot call the game may not make, where its directives would have printed."""
    if rec.get("type") == "directive_skipped":
        where = f"（{rec['tool']}）" if rec.get("tool") else ""
        print(f"  [机器人] 没执行 {rec.get('directive') or rec.get('call')}{where}：{rec.get('reason')}",
              flush=True)


class LineReader:
    """Reads stdin lines in a worker thread (a blocking read must not stall trio).

    Piped input (``agentcade play < scenario.txt``) is read as UTF-8 whatever the console's
    code page (a Chinese Windows decodes stdin as GBK, and a UTF-8 file would arrive
    garbled), with a byte-order mark at the start tolerated (Notepad writes one); bytes
    that are not UTF-8 become U+FFFD instead of an error. Typed input keeps the console's
    own decoding, which is right for what the console sends.
    """

    def __init__(self, stdin: TextIO | None = None) -> None:
        self._stdin = stdin or sys.stdin
        self._tty = self._stdin.isatty()
        buffer = getattr(self._stdin, "buffer", None)
        self._bytes: BinaryIO | None = None if self._tty else buffer
        self._first = True

    def _readline(self) -> str:
        if self._bytes is None:
            return self._stdin.readline()
        raw = self._bytes.readline()
        line = raw.decode("utf-8", errors="replace")
        if self._first:
            self._first = False
            line = line.removeprefix("\ufeff")
        return line.replace("\r\n", "\n")

    async def read(self) -> str | None:
        """The next line, or None at end of input."""
        if self._tty:
            print("你：", end="", flush=True)
        line: str = await trio.to_thread.run_sync(self._readline, abandon_on_cancel=True)
        if not line:
            return None
        if not self._tty:
            print(f"你：{line.rstrip()}", flush=True)
        return line


class ConsoleTrace:
    """Prints trace records readably: the full prompt once per game, then state only."""

    def __init__(self) -> None:
        self._prompted: set[str] = set()

    def __call__(self, rec: dict[str, Any]) -> None:
        kind = rec["type"]
        if kind == "game_prompt":
            key = rec.get("game", "")
            if key not in self._prompted:
                self._prompted.add(key)
                _err(f"[trace] 系统提示词：\n{rec['system']}")
            else:
                _err(f"[trace] 状态：{_json(rec.get('state'))}")
        elif kind == "model_request":
            for message in rec.get("messages", [])[-2:]:
                _err(f"[trace] → 模型 {message.get('role')}: {_json(message.get('content') or message.get('tool_calls'))}")
        elif kind == "tool_call":
            _err(f"[trace] 工具 {rec['tool']}({rec.get('arguments')}) → {_json(rec.get('result'))}")
        elif kind == "hook":
            _err(f"[trace] {rec['hook']} → {_json(rec.get('result'))}")
        elif kind in ("model_error", "hook_error"):
            _err(f"[trace] 出错：{rec.get('error')}")


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
