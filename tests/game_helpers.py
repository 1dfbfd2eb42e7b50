"""Helpers for the scenario tests of the built-in games (riddle, guess_number).

The same few helpers appear in test_draw_guess.py and test_turtle_soup.py (``ask`` with the
reply contract, ``tool_results``, ``user_events``, ``state_of``, the directives of replies);
this is their shared home for the newer game tests. Each test file keeps its own ``fake``
fixture (``start_fake`` makes it a one-liner) and closes its hosts through ``Hosts``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import trio
import trio.testing

from agentcade.core.protocol import Directive, GameInput, GameReply
from agentcade.device.validate import validate_directive
from agentcade.game.host import GameHost
from agentcade.game.loader import LoadedGame
from agentcade.game.skill_agent import SkillAgent
from agentcade.testing.fake_openai import FakeOpenAI, Hang, Reply, serve_fake_openai

GAMES_DIR = Path(__file__).resolve().parent.parent / "games"


async def start_fake(nursery: trio.Nursery) -> FakeOpenAI:
    """A fake OpenAI server that lives as long as ``nursery`` (the test's)."""
    server: FakeOpenAI = await nursery.start(serve_fake_openai)
    return server


def game_module(game: LoadedGame) -> ModuleType:
    """The game's agent.py module, as the loader imported it (for monkeypatching)."""
    return sys.modules[game.agent_cls.__module__]


class Hosts:
    """Makes ``GameHost``s over one game and closes them all at the end of a test.

    Every host must be closed: a session's model client is only released by ``close()``.
    """

    def __init__(self, game: LoadedGame) -> None:
        self.game = game
        self.agents: list[SkillAgent] = []
        self._hosts: list[GameHost] = []

    def make(self, fake: FakeOpenAI | None = None) -> GameHost:
        """A host over the fake model, or over the offline model when ``fake`` is None."""
        llm = {"llm": fake.settings(timeout=5.0)} if fake is not None else {}
        settings = self.game.agent_cls.config(**llm)

        def new_agent() -> SkillAgent:
            self.agents.append(self.game.new_agent(settings))
            return self.agents[-1]

        self._hosts.append(GameHost(new_agent))
        return self._hosts[-1]

    async def aclose(self) -> None:
        for host in self._hosts:
            await host.aclose()


async def ask(
    host: GameHost,
    kind: str,
    text: str = "",
    *,
    ctx: str = "c",
    into: list[GameReply] | None = None,
) -> list[GameReply]:
    """One request; checks the reply contract and returns every reply in order.

    ``into`` also receives each reply as it arrives (for a request that gets cancelled).
    """
    got: list[tuple[GameReply, bool]] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        got.append((reply, final))
        if into is not None:
            into.append(reply)

    await host.handle(ctx, GameInput(kind=kind, text=text), emit)  # type: ignore[arg-type]
    assert got, "every request gets a reply"
    assert [f for _, f in got] == [False] * (len(got) - 1) + [True]
    assert got[-1][0].text.strip(), "the final reply has speakable text"
    return [r for r, _ in got]


def call(tool: str, **arguments: Any) -> Reply:
    """The model calling one tool."""
    return Reply(tool_calls=[(tool, arguments)])


def directives(replies: Iterable[GameReply]) -> list[Directive]:
    return [d for r in replies for d in r.directives]


def calls(replies: Iterable[GameReply]) -> list[str]:
    return [d.call for d in directives(replies)]


def texts(replies: Iterable[GameReply]) -> str:
    return "\n".join(r.text for r in replies)


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Tool results of this round (after the last user message; history comes before it)."""
    messages = request["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [json.loads(m["content"]) for m in messages[last_user:] if m["role"] == "tool"]


def user_events(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "user"]


def state_of(request: dict[str, Any]) -> dict[str, Any]:
    """The game's ``state()`` as the request's last user message carries it."""
    return user_events(request)[-1]["state"]


def assert_valid_directives(replies: Iterable[GameReply], game: LoadedGame) -> list[Directive]:
    """Every directive passes the robot's validation for the game's declared capabilities."""
    sent = directives(replies)
    for directive in sent:
        validate_directive(directive, game.skill.required_capabilities)
    return sent


def screen(replies: list[GameReply]) -> list[str]:
    """Every picture put on the screen, in order."""
    return [
        str(d.kwargs["custom_vector_path"])
        for d in directives(replies)
        if "custom_vector_path" in d.kwargs
    ]


def moves(replies: list[GameReply]) -> list[tuple[Any, Any]]:
    return [
        (d.kwargs["pan_deg"], d.kwargs["tilt_deg"])
        for d in directives(replies)
        if d.call == "motion.move_to"
    ]


async def end_while_the_model_hangs(
    host: GameHost, fake: FakeOpenAI, said: str
) -> tuple[list[GameReply], list[GameReply]]:
    """Say ``said`` while the model hangs on it, then send ``end`` (the end round's model
    answers "再见。"). Returns (the stuck request's replies, the end request's replies)."""
    fake.push(Hang(), Reply("再见。"))
    hanging = len(fake.requests) + 1
    stuck: list[GameReply] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(ask, host, "message", said, into=stuck))
        with trio.fail_after(5):
            await fake.wait_requests(hanging)  # the model is hanging on the message
            await trio.testing.wait_all_tasks_blocked(cushion=0.01)
            end = await ask(host, "end", "结束游戏")
    return stuck, end
