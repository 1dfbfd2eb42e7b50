"""Issue 23: what the guide promises the author of a remote game.

"超过 210 秒没有任何回复，小懒会当成连接超时": a remote game has 210 s (the
``AGENTCADE_GAME_TIMEOUT`` setting) without any reply before the host gives up; the family
hears "稍等" once meanwhile and can still say "结束游戏". And every request ends with
something spoken, even when the game's final reply has nothing to say.

The games are served over our A2A server on 127.0.0.1 and opened the way ``play`` opens an
installed game (``open_pipeline(remote=[url])``), so the A2A client's own timeout is the
one the setting gives it. Time is virtual (``autojump_clock``): minutes of waiting cost
nothing.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from agentcade.a2a.card import build_card
from agentcade.a2a.client import message_id
from agentcade.a2a.server import serve_a2a
from agentcade.core.host_settings import Budgets
from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.trace import current_request_id, request_scope
from agentcade.device.robots import ConsoleRobot
from agentcade.main.agent import (
    REMOTE_CUT_SHORT,
    REMOTE_SAID_NOTHING,
    REMOTE_SLOW,
    WAIT_TEXT,
    MainAgent,
    OfflineMainModel,
)
from agentcade.testing.timed_robot import Records, recording_trace
from agentcade.wiring.pipeline import open_pipeline
from tests.a2a_peers import ECHO_WORKING, FakeSkill, SDKServerThread
from tests.test_main_agent import Heard

PATIENCE = 4.0


class SlowGame:
    """A remote game that thinks ``delay`` seconds about a message before it answers."""

    def __init__(self, delay: float, answer: str = "猜对了，是小猫！") -> None:
        self.delay = delay
        self.answer = answer
        self.inputs: list[GameInput] = []

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        self.inputs.append(game_input)
        if game_input.kind == "message":
            await trio.sleep(self.delay)
            await emit(GameReply(text=self.answer), final=True)
            return
        ended = game_input.kind == "end"
        await emit(GameReply(text=f"远程{game_input.kind}", session="ended" if ended else "active"), final=True)


@asynccontextmanager
async def played(
    nursery: trio.Nursery, game: Any, tmp_path: Path, budgets: Budgets
) -> AsyncIterator[tuple[MainAgent, Heard, Records]]:
    """``play`` with ``game`` installed as a remote game (served on 127.0.0.1)."""
    listeners = await nursery.start(
        serve_a2a, game, lambda port: build_card(FakeSkill(), f"http://127.0.0.1:{port}/"), 0
    )
    url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"
    heard = Heard()
    trace, records = recording_trace()
    async with open_pipeline(
        ConsoleRobot(heard.out), builtin_dir=tmp_path, remote=[url], model=OfflineMainModel,
        trace=trace, budgets=budgets,
    ) as (agent, _):
        yield agent, heard, records


def test_a_game_gets_the_guides_210_seconds_by_default() -> None:
    assert Budgets().game == 210
    assert Budgets.from_values({"AGENTCADE_GAME_TIMEOUT": "300"}).game == 300


async def test_a_remote_game_answering_a_guess_after_60_s_has_its_answer_played(
    nursery: trio.Nursery, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """It was cut at 45 s (the line budget): 稍等, then 太久没有回应, and the answer lost."""
    game = SlowGame(delay=60)
    async with played(nursery, game, tmp_path, Budgets(patience=PATIENCE)) as (agent, heard, records):
        await agent.on_user("玩回声")
        asked = trio.current_time()
        await agent.on_user("是小猫吗")
        assert trio.current_time() - asked == PATIENCE  # the turn ends with 稍等
        await agent.wait_idle()
        assert trio.current_time() - asked >= 60
        assert agent.current is not None
    assert heard.speech[:3] == ["远程start", WAIT_TEXT, "猜对了，是小猫！"]
    assert not [r for r in records if r["type"] in ("game_timeout", "game_error")]


async def test_a_remote_game_silent_for_210_s_is_told_as_not_answering_and_kept(
    nursery: trio.Nursery, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with played(nursery, SlowGame(delay=10_000), tmp_path, Budgets(patience=PATIENCE)) as (
        agent, heard, records,
    ):
        await agent.on_user("玩回声")
        asked = trio.current_time()
        await agent.on_user("是小猫吗")
        await agent.wait_idle()
        waited = trio.current_time() - asked
        assert 210 <= waited < 211
        assert agent.current is not None  # a message that timed out keeps the session
    assert heard.speech[:3] == ["远程start", WAIT_TEXT, REMOTE_SLOW.format(name="回声")]
    assert [r["kind"] for r in records if r["type"] == "game_timeout"] == ["message"]
    assert not [r for r in records if r["type"] == "game_error"]


async def test_the_game_timeout_setting_governs_the_wait(
    nursery: trio.Nursery, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """One setting: the main agent's wait and the A2A client's both follow it."""
    budgets = Budgets(patience=PATIENCE, game=300)
    async with played(nursery, SlowGame(delay=250), tmp_path, budgets) as (agent, heard, _):
        await agent.on_user("玩回声")
        await agent.on_user("是小猫吗")
        await agent.wait_idle()
    assert heard.speech[:3] == ["远程start", WAIT_TEXT, "猜对了，是小猫！"]


async def test_while_a_remote_game_thinks_the_patience_line_is_said_once_and_end_game_ends_at_once(
    nursery: trio.Nursery, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    game = SlowGame(delay=200)
    async with played(nursery, game, tmp_path, Budgets(patience=PATIENCE)) as (agent, heard, _):
        await agent.on_user("玩回声")
        await agent.on_user("是小猫吗")
        await trio.sleep(100)
        said = trio.current_time()
        await agent.on_user("结束游戏")
        await agent.wait_idle()
        assert trio.current_time() - said < PATIENCE
        assert agent.current is None
    assert heard.speech == ["远程start", WAIT_TEXT, "远程end"]
    assert [i.kind for i in game.inputs] == ["start", "message", "end"]


ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_the_guide_and_the_templates_docs_give_the_same_game_timeout() -> None:
    seconds = f"{Budgets().game:g}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"| `AGENTCADE_GAME_TIMEOUT` | {seconds} s | 5–600 |" in readme
    guide = (ROOT / "docs" / "guide.zh-CN.md").read_text(encoding="utf-8")
    assert f"超过 {seconds} 秒没有任何回复" in guide
    assert "`AGENTCADE_GAME_TIMEOUT`" in guide
    template = (ROOT / "games" / "riddle" / "README.md").read_text(encoding="utf-8")
    assert f"最长可以 {seconds} 秒没有回复" in template
    nginx = (ROOT / "games" / "riddle" / "deploy" / "nginx-sticky.conf").read_text(encoding="utf-8")
    assert f"silent for {seconds} s" in nginx
    read_timeout = re.search(r"proxy_read_timeout (\d+)s;", nginx)
    assert read_timeout is not None
    assert int(read_timeout.group(1)) > Budgets().game


# ------------------------------------------------------------------ every request is answered


class MuteGame:
    """A remote game whose final reply to a message carries ``final`` as its text."""

    def __init__(self, final: str, *, before: str = "") -> None:
        self.final = final
        self.before = before

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        if game_input.kind != "message":
            ended = game_input.kind == "end"
            await emit(GameReply(text=f"远程{game_input.kind}", session="ended" if ended else "active"), final=True)
            return
        if self.before:
            await emit(GameReply(text=self.before), final=False)
        await emit(GameReply(text=self.final), final=True)


@pytest.mark.parametrize(
    ("final", "reason"),
    [("", "empty"), ("   ", "empty"), ('```json\n{"outcome": "wrong"}\n```', "unspeakable"),
     ("<tool_call>check_answer(1)</tool_call>", "unspeakable")],
    ids=["empty", "blank", "a code block", "a tool call"],
)
async def test_a_remote_final_reply_with_nothing_to_say_is_replaced_by_a_spoken_line(
    nursery: trio.Nursery, tmp_path: Path, final: str, reason: str
) -> None:
    """It was silence: the family waited for an answer that never came."""
    async with played(nursery, MuteGame(final), tmp_path, Budgets()) as (agent, heard, records):
        await agent.on_user("玩回声")
        await agent.on_user("是小猫吗")
        await agent.wait_idle()
    spoken = REMOTE_SAID_NOTHING["message"].format(name="回声")
    assert heard.speech[:2] == ["远程start", spoken]
    fallbacks = [r for r in records if r["type"] == "reply_fallback"]
    assert [(r["kind"], r["reason"], r["text"]) for r in fallbacks] == [("message", reason, spoken)]


async def test_a_remote_final_reply_that_is_empty_after_stalling_says_the_game_stopped_short(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    """The last thing heard must not be the game's "稍等"."""
    async with played(nursery, MuteGame("", before="稍等，我想想"), tmp_path, Budgets()) as (agent, heard, _):
        await agent.on_user("玩回声")
        await agent.on_user("是小猫吗")
        await agent.wait_idle()
    assert heard.speech[:3] == ["远程start", "稍等，我想想", REMOTE_CUT_SHORT.format(name="回声")]


async def test_a_remote_games_markup_is_not_read_out(nursery: trio.Nursery, tmp_path: Path) -> None:
    game = MuteGame('不对哦，再猜猜。{"outcome": "wrong", "score": 0}')
    async with played(nursery, game, tmp_path, Budgets()) as (agent, heard, records):
        await agent.on_user("玩回声")
        await agent.on_user("是小狗吗")
        await agent.wait_idle()
    assert heard.speech[1] == "不对哦，再猜猜。"
    assert not [r for r in records if r["type"] == "reply_fallback"]


async def test_a_game_written_on_a2a_sdk_whose_final_replies_are_empty_is_answered(tmp_path: Path) -> None:
    """The issue's author wrote the game directly on a2a-sdk (its DefaultRequestHandler)."""
    with SDKServerThread(final_text="") as sdk:
        heard = Heard()
        trace, records = recording_trace()
        async with open_pipeline(
            ConsoleRobot(heard.out), builtin_dir=tmp_path, remote=[sdk.url], model=OfflineMainModel,
            trace=trace, budgets=Budgets(),
        ) as (agent, _):
            await agent.on_user("玩回声")
            await agent.wait_idle()  # its first reply ends the turn; the final one follows
            await agent.on_user("是小猫吗")
            await agent.wait_idle()
    cut_short = REMOTE_CUT_SHORT.format(name="回声")
    assert heard.speech[:4] == [ECHO_WORKING, cut_short, ECHO_WORKING, cut_short]
    assert [r["kind"] for r in records if r["type"] == "reply_fallback"][:2] == ["start", "message"]


# ------------------------------------------------------------------ the request id on the wire


class IdRecorder:
    """A remote game that notes the request id its records would carry."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        self.seen.append((game_input.kind, current_request_id()))
        ended = game_input.kind == "end"
        await emit(GameReply(text=f"远程{game_input.kind}", session="ended" if ended else "active"), final=True)


async def test_the_a2a_message_id_carries_the_request_id_of_the_turn(nursery: trio.Nursery, tmp_path: Path) -> None:
    """The communication design: "message_id 是请求 ID". It was a fresh uuid, so a served
    game's trace could not be matched to the turn that caused it."""
    game = IdRecorder()
    async with played(nursery, game, tmp_path, Budgets()) as (agent, _, records):
        await agent.on_user("玩回声")
        await agent.on_user("是小猫吗")
        await agent.wait_idle()
    turns = [r["request_id"] for r in records if r["type"] == "user_input"]
    assert [kind for kind, _ in game.seen[:2]] == ["start", "message"]
    for turn, (_, seen) in zip(turns, game.seen[:2], strict=True):
        assert seen is not None
        assert seen.startswith(f"{turn}.")
    assert game.seen[0][1] != game.seen[1][1]


def test_a_message_id_is_unique_within_one_turn() -> None:
    """One turn may send two messages (switching games: end, then start)."""
    with request_scope("turn-1"):
        first, second = message_id(), message_id()
    assert first != second
    assert first.startswith("turn-1.")
    assert second.startswith("turn-1.")
