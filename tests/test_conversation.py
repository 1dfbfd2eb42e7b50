"""The conversation with the current game (``agentcade.main.conversation``), on its own.

A ``GameConversation`` talks to a scripted game (the peer: what it says to each request,
and when) through the real output queue and console robot; its owner's hooks (the host's
words, "稍等", the history) are recorded. Time is virtual (``autojump_clock``), so every
budget is checked to the second.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio
import trio.testing

from agentcade.core.host_settings import Budgets
from agentcade.core.protocol import GameInput, GameReply
from agentcade.device.robots import ConsoleRobot
from agentcade.game.client import GameInfo, ReplyStream
from agentcade.main.conversation import (
    BUSY_TEXT,
    MAX_INTERMEDIATE,
    NO_GAME,
    REMOTE_FAILED,
    REMOTE_SAID_NOTHING,
    REMOTE_SLOW,
    GameConversation,
)
from agentcade.main.output import OutputQueue
from tests.a2a_peers import FakeSkill

BUDGETS = Budgets(patience=2, line=10, game=20)
Step = Callable[[GameInput], AsyncIterator[tuple[GameReply, bool]]]


def says(*texts: str, after: float = 0, session: str = "active") -> Step:
    """A step: wait ``after`` seconds, then the texts, the last one final."""

    async def step(_game_input: GameInput) -> AsyncIterator[tuple[GameReply, bool]]:
        await trio.sleep(after)
        for index, text in enumerate(texts):
            final = index == len(texts) - 1
            yield GameReply(text=text, session=session if final else "active"), final  # type: ignore[arg-type]

    return step


def fails(after: float = 0) -> Step:
    async def step(_game_input: GameInput) -> AsyncIterator[tuple[GameReply, bool]]:
        await trio.sleep(after)
        raise ConnectionError("the game is gone")
        yield  # pragma: no cover - an async generator that never yields

    return step


class ScriptedGame:
    """A game peer: ``steps[kind]`` is what it does for each request of that kind."""

    protocol = "agentcade/1"

    def __init__(self, location: str = "/games/echo", **steps: Step) -> None:
        self.info = GameInfo.of(FakeSkill(), location)
        self.steps = {"start": says("开始了"), "message": says("收到"), "end": says("再见", session="ended"), **steps}
        self.asked: list[GameInput] = []

    @asynccontextmanager
    async def stream(self, context_id: str, game_input: GameInput) -> AsyncIterator[ReplyStream]:
        self.asked.append(game_input)
        yield self.steps[game_input.kind](game_input)

    async def aclose(self) -> None:
        """Nothing to release."""


@dataclass
class Owner:
    """What the conversation told its owner, and what the robot said."""

    out: io.StringIO = field(default_factory=io.StringIO)
    waits: list[float] = field(default_factory=list)
    notes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    history: list[tuple[str, str]] = field(default_factory=list)

    @property
    def speech(self) -> list[str]:
        return [line.removeprefix("小懒：") for line in self.out.getvalue().splitlines() if line.startswith("小懒：")]


@pytest.fixture
async def talk(nursery: trio.Nursery) -> tuple[GameConversation, Owner]:
    owner = Owner()
    output = OutputQueue(ConsoleRobot(owner.out))
    await nursery.start(output.run)

    async def say(text: str) -> None:
        await output.put(GameReply(text=text), game=None)
        await output.drain()

    def remember(text: str, game: str) -> Callable[[], None]:
        return lambda: owner.history.append((game, text))

    conversation = GameConversation(
        output, nursery, say=say, say_wait=lambda: owner.waits.append(trio.current_time()),
        remember=remember, note=lambda tool, args: owner.notes.append((tool, args)), budgets=BUDGETS,
    )
    return conversation, owner


async def settled(conversation: GameConversation) -> None:
    """No request in flight, and all that was queued played."""
    await conversation.wait_idle()
    await conversation.output.drain()


async def timed(action: Awaitable[None]) -> float:
    start = trio.current_time()
    await action
    return trio.current_time() - start


async def test_start_returns_once_the_first_reply_was_played_and_remembers_both_sides(talk, autojump_clock) -> None:
    conversation, owner = talk
    game = ScriptedGame(start=says("第一句", "第二句", after=1))
    assert await timed(conversation.start(game, "玩回声")) == 1
    assert owner.notes == [("start_game", {"game_id": "echo"})]
    await settled(conversation)
    assert owner.speech == ["第一句", "第二句"]
    assert owner.history == [("回声", "第一句"), ("回声", "第二句")]
    assert conversation.playing == "echo"
    assert game.asked[0].text == "玩回声"


async def test_a_slow_game_gets_one_patience_line_and_the_next_line_is_heard_meanwhile(talk, autojump_clock) -> None:
    conversation, owner = talk
    await conversation.start(ScriptedGame(message=says("想好了", after=5)), "玩")
    assert await timed(conversation.forward("我猜三")) == BUDGETS.patience
    assert len(owner.waits) == 1
    assert await timed(conversation.forward("快点")) == 0  # still working on the last line
    assert owner.speech[-1] == BUSY_TEXT
    await settled(conversation)
    assert owner.speech[-1] == "想好了"


async def test_a_game_silent_past_its_timeout_is_told_and_a_start_is_cleared(talk, autojump_clock) -> None:
    conversation, owner = talk
    await conversation.start(ScriptedGame(start=says("太晚了", after=BUDGETS.game + 5)), "玩")
    await settled(conversation)
    assert trio.current_time() == BUDGETS.game
    assert owner.speech == [REMOTE_SLOW.format(name="回声")]
    assert conversation.current is None


async def test_a_failed_message_is_told_and_keeps_the_game_a_failed_start_clears_it(talk, autojump_clock) -> None:
    conversation, owner = talk
    await conversation.start(ScriptedGame(message=fails()), "玩")
    await conversation.forward("你好")
    await settled(conversation)
    assert owner.speech[-1] == REMOTE_FAILED.format(name="回声")
    assert conversation.playing == "echo"
    await conversation.start(ScriptedGame(start=fails()), "再玩")
    await settled(conversation)
    assert conversation.current is None


async def test_end_cancels_the_pending_request_and_the_goodbye_clears_the_game(talk, autojump_clock) -> None:
    conversation, owner = talk
    game = ScriptedGame(message=says("不会说出来", after=100))
    await conversation.start(game, "玩")
    await conversation.forward("想一想")  # returns after the patience
    current = conversation.current
    assert current is not None
    assert current.busy
    await conversation.end("结束游戏", asked=True)
    await settled(conversation)
    assert [g.kind for g in game.asked] == ["start", "message", "end"]
    assert "不会说出来" not in owner.speech
    assert owner.speech[-1] == "再见"
    assert conversation.current is None
    assert current.ended.is_set()
    assert [tool for tool, _ in owner.notes] == ["start_game", "send_message", "end_game"]


async def test_forward_without_a_game_sends_nothing_and_says_there_is_none(talk) -> None:
    conversation, owner = talk
    assert await conversation.forward("你好") is False
    assert owner.notes == []
    assert owner.speech == [NO_GAME]


async def test_a_remote_game_final_reply_with_nothing_speakable_gets_a_fallback(talk, autojump_clock) -> None:
    conversation, owner = talk
    await conversation.start(ScriptedGame("http://127.0.0.1:1/", start=says("```json\n{}\n```")), "玩")
    await settled(conversation)
    assert owner.speech == [REMOTE_SAID_NOTHING["start"].format(name="回声")]


async def test_intermediate_replies_past_the_cap_are_dropped_and_the_final_one_plays(talk, autojump_clock) -> None:
    conversation, owner = talk
    lines = [f"第{i}句" for i in range(MAX_INTERMEDIATE + 5)]
    await conversation.start(ScriptedGame(start=says(*lines, "最后")), "玩")
    await settled(conversation)
    assert owner.speech == [*lines[:MAX_INTERMEDIATE], "最后"]


async def test_a_new_game_waits_for_the_old_goodbye_at_most_the_switch_grace(talk, autojump_clock) -> None:
    conversation, owner = talk
    old = ScriptedGame(end=says("答案是回声", after=1000, session="ended"))
    await conversation.start(old, "玩")
    new = ScriptedGame(start=says("新游戏"))
    assert await timed(conversation.start(new, "换一个")) == conversation.switch_grace
    assert owner.speech[-1] == "新游戏"
    assert "答案是回声" not in owner.speech
    assert [g.kind for g in old.asked] == ["start", "end"]
