"""Round control in code (issue 25): "下一个", "再来一局", "再说一遍" and a bare "要" right
after the game offered one are recognised by ``judge.round_request`` and answered by the
game's ``on_round`` hook, without the model; a game without the hook leaves them to the model.

The labelled set is ``tests/data/round_cases.tsv``: what the game offered in its last reply
(``-`` for nothing), the line, the request it is (``-`` for none) and the kind of line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.skill import Skill
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.game.host import GameHost
from agentcade.game.skill_agent import SkillAgent
from agentcade.game.turn import Turn
from agentcade.judge import RoundRequest, round_request
from agentcade.testing.fake_openai import FakeOpenAI, Reply
from tests import labelled

CASES = Path(__file__).parent / "data" / "round_cases.tsv"
PROBE_SKILL = Path(__file__).parent / "data" / "games" / "probe" / "SKILL.md"


class Case(NamedTuple):
    offered: RoundRequest | None
    line: str
    expected: RoundRequest | None
    what: str


def _cases() -> list[Case]:
    rows = []
    for _, (offered, line, expected, what) in labelled.rows(CASES):
        rows.append(Case(None if offered == "-" else offered, line, None if expected == "-" else expected, what))  # type: ignore[arg-type]
    return rows


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c.offered or '-'}:{c.line or '(empty)'}")
def test_a_line_is_the_round_request_it_was_labelled(case: Case) -> None:
    assert round_request(case.line, offered=case.offered) == case.expected, case.what


def test_the_labelled_set_covers_every_request_and_negatives() -> None:
    cases = _cases()
    assert {c.expected for c in cases} == {"next", "again", "repeat", None}
    assert sum(c.expected is None for c in cases) >= 20
    assert {c.line for c in cases if c.offered and c.expected == c.offered} >= {"要", "好", "好的", "来吧"}


# --------------------------------------------------------------------------- the hook


class Plain(SkillAgent):
    """A game without ``on_round``: round-control lines go to the model as before."""

    skill = Skill.load(PROBE_SKILL)

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        self.question = 1


class Rounds(Plain):
    """A game that answers round control from its own state and offers the next question."""

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        self.requests: list[str] = []

    async def on_message(self, turn: Turn) -> dict[str, Any] | None:
        if turn.text == "我猜对了":
            turn.offer("next")
            turn.reply("猜对了！要不要再来一个？")
            return {"correct": True}
        return None

    async def on_round(self, turn: Turn, request: RoundRequest) -> dict[str, Any] | None:
        self.requests.append(request)
        if request == "again":
            return None  # this game leaves new rounds to the model
        if request == "next":
            self.question += 1
        turn.reply(f"第{self.question}题。")
        return {"question": self.question}


@pytest.fixture
async def make_host() -> AsyncIterator[Callable[..., GameHost]]:
    made: list[GameHost] = []

    def make(fake: FakeOpenAI, cls: type[SkillAgent], records: list[dict[str, Any]] | None = None) -> GameHost:
        settings = cls.config(llm=fake.settings(timeout=5.0))
        trace = Trace(records.append) if records is not None else NULL_TRACE
        made.append(GameHost(lambda: cls(settings), trace=trace))
        return made[-1]

    yield make
    for host in made:
        await host.aclose()


async def say(host: GameHost, kind: str, text: str) -> str:
    got: list[GameReply] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        got.append(reply)

    await host.handle("c", GameInput(kind=kind, text=text), emit)  # type: ignore[arg-type]
    return "".join(r.text for r in got)


async def started(fake: FakeOpenAI, host: GameHost) -> None:
    fake.push(Reply("开始啦。"))
    await say(host, "start", "玩探针")


async def test_next_is_answered_by_the_hook_without_a_model_call(fake, make_host) -> None:
    host = make_host(fake, Rounds)
    await started(fake, host)
    before = len(fake.requests)
    assert await say(host, "message", "下一个") == "第2题。"
    assert await say(host, "message", "再说一遍") == "第2题。"
    assert len(fake.requests) == before


async def test_a_bare_yes_after_the_offer_is_next_and_without_it_goes_to_the_model(fake, make_host) -> None:
    host = make_host(fake, Rounds)
    await started(fake, host)
    before = len(fake.requests)
    assert await say(host, "message", "我猜对了") == "猜对了！要不要再来一个？"
    assert await say(host, "message", "要") == "第2题。"
    assert len(fake.requests) == before
    fake.push(Reply("要什么呀？"))
    assert await say(host, "message", "要") == "要什么呀？"  # nothing offered this time
    assert len(fake.requests) == before + 1


async def test_a_hook_that_returns_none_leaves_the_line_to_the_model(fake, make_host) -> None:
    host = make_host(fake, Rounds)
    await started(fake, host)
    fake.push(Reply("这一局还没完呢，接着猜吧。"))
    assert await say(host, "message", "再来一局") == "这一局还没完呢，接着猜吧。"
    assert json.loads(fake.requests[-1]["messages"][-1]["content"])["user_text"] == "再来一局"


async def test_a_restart_the_code_did_not_make_is_not_spoken(fake, make_host) -> None:
    """The weak model said "好，我们重新开始。" for a hook that started nothing (issue 40)."""
    host = make_host(fake, Rounds)
    await started(fake, host)
    fake.push(Reply("好，我们重新开始。"))
    assert "重新开始" not in await say(host, "message", "再来一局")


async def test_a_game_without_the_hook_hears_round_lines_through_the_model(fake, make_host) -> None:
    host = make_host(fake, Plain)
    await started(fake, host)
    fake.push(Reply("好呀，我想一想。"))  # words only: "好的，下一个。" with nothing done is a made-up action (issue 54)
    assert await say(host, "message", "下一个") == "好呀，我想一想。"
    assert len(fake.requests) == 2


async def test_a_recognised_line_is_traced_with_its_request(fake, make_host) -> None:
    records: list[dict[str, Any]] = []
    host = make_host(fake, Rounds, records)
    await started(fake, host)
    await say(host, "message", "下一题")
    assert [r["request"] for r in records if r["type"] == "round_request"] == ["next"]
    assert [r["direct"] for r in records if r["type"] == "turn"][-1] is True
