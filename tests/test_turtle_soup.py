"""海龟汤 (games/turtle_soup): the game driven through GameHost, the fake OpenAI server and
the offline model.

Requests to the fake server come from two models: the host (system prompt starts with
``COMMON_PROMPT``) and the referee (system prompt is ``JUDGE_PROMPT``). The tests check
that each sees only what it may: the host never the unrevealed 汤底, the referee never the
host prompt or the conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.settings import LLMSettings
from agentcade.game.host import INTERRUPTED, GameHost
from agentcade.game.loader import LoadedGame, load_game
from agentcade.game.skill_agent import COMMON_PROMPT
from agentcade.testing.fake_openai import Fail, FakeOpenAI, Garbage, Hang, Reply
from tests.game_helpers import tool_results, user_events

GAME_DIR = Path(__file__).resolve().parent.parent / "games" / "turtle_soup"
NO_RETRY = (("x-should-retry", "false"),)


@pytest.fixture(scope="module")
def game() -> LoadedGame:
    return load_game(GAME_DIR, builtin=True)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh AGENTCADE_HOME per test: played puzzles are stored under it."""
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))
    monkeypatch.delenv("AGENTCADE_CONFIG_DIR", raising=False)
    return tmp_path




@pytest.fixture
def module(game: LoadedGame) -> Any:
    """The game's modules (agent, referee, library), as the loader imported them."""
    import sys

    package = game.agent_cls.__module__.rsplit(".", 1)[0]
    return type(
        "Modules",
        (),
        {
            "agent": sys.modules[f"{package}.agent"],
            "referee": sys.modules[f"{package}.referee"],
            "library": sys.modules[f"{package}.library"],
        },
    )


class Host:
    """A GameHost over the game, keeping the agents it made."""

    def __init__(self, game: LoadedGame, llm: LLMSettings) -> None:
        self.agents: list[Any] = []
        settings = game.agent_cls.config(llm=llm)

        def new() -> Any:
            agent = game.new_agent(settings)
            self.agents.append(agent)
            return agent

        self.host = GameHost(new)

    @property
    def agent(self) -> Any:
        return self.agents[-1]

    async def ask(self, kind: str, text: str = "", ctx: str = "c1") -> list[GameReply]:
        got: list[tuple[GameReply, bool]] = []

        async def emit(reply: GameReply, *, final: bool) -> None:
            got.append((reply, final))

        await self.host.handle(ctx, GameInput(kind=kind, text=text), emit)  # type: ignore[arg-type]
        assert [f for _, f in got] == [False] * (len(got) - 1) + [True]
        assert got[-1][0].text.strip(), "the final reply has speakable text"
        return [r for r, _ in got]


def system_of(request: dict[str, Any]) -> str:
    return request["messages"][0]["content"]


def is_host(request: dict[str, Any]) -> bool:
    return system_of(request).startswith(COMMON_PROMPT)


def request_text(request: dict[str, Any]) -> str:
    parts = []
    for message in request["messages"]:
        parts.append(str(message.get("content") or ""))
        for call in message.get("tool_calls") or ():
            parts.append(str(call["function"]["arguments"]))
    return "\n".join(parts)


def verdict(v: str, solved: bool = False) -> Reply:
    return Reply(json.dumps({"verdict": v, "solved": solved}))


def calls(reply: GameReply) -> list[str]:
    return [d.call for d in reply.directives]


def puzzle_of(module: Any, puzzle_id: str) -> Any:
    return next(p for p in module.agent.PUZZLES if p.id == puzzle_id)


async def started(game: LoadedGame, fake: FakeOpenAI) -> Host:
    host = Host(game, fake.settings())
    await host.ask("start", "玩海龟汤")
    return host


# --------------------------------------------------------------------------- start


async def test_start_speaks_the_surface_and_keeps_the_bottom_from_the_host(game, fake) -> None:
    host = Host(game, fake.settings())
    replies = await host.ask("start", "玩海龟汤")
    puzzle = host.agent.puzzle
    assert puzzle.surface in replies[-1].text
    assert replies[-1].session == "active"
    assert fake.requests == []  # the opening is code's
    fake.push(verdict("unclear"), Reply("我也喜欢这个故事。"))
    await host.ask("message", "换个话题吧")
    (host_request,) = [r for r in fake.requests if is_host(r)]
    assert user_events(host_request)[0]["result"]["surface"] == puzzle.surface
    assert user_events(host_request)[-1]["state"]["汤面"] == puzzle.surface  # state(): the surface …
    seen = request_text(host_request)
    assert puzzle.bottom not in seen  # … never the bottom or a key point
    assert not any(point in seen for point in puzzle.key_points)


# --------------------------------------------------------------------------- questions


@pytest.mark.parametrize(
    ("v", "answer", "gesture"),
    [
        ("yes", "是。", "nod"),
        ("no", "不是。", "shake"),
        ("irrelevant", "这个不重要。", None),
        ("close", "很接近了！", None),
    ],
)
async def test_a_question_is_judged_by_a_separate_model_call(
    game, fake, module, v, answer, gesture
) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle = puzzle_of(module, "umbrella_indoors")
    fake.push(verdict(v))
    replies = await host.ask("message", "他是不是在晾伞")
    assert len(fake.requests) == 1  # the judge only: its verdict is the whole answer
    judge = fake.requests[0]
    # The referee: its own prompt, the puzzle and the raw words — nothing of the host.
    assert system_of(judge) == module.referee.JUDGE_PROMPT
    text = request_text(judge)
    assert puzzle.bottom in text
    assert puzzle.surface in text
    assert "他是不是在晾伞" in text
    assert all(point in text for point in puzzle.key_points)
    assert COMMON_PROMPT not in text
    assert "# 海龟汤" not in text
    assert "玩海龟汤" not in text
    assert len(judge["messages"]) == 2
    assert "tools" not in judge
    assert judge["model"] == "fake-model"
    assert judge["temperature"] == 0
    assert replies[-1].text == answer
    moves = [c for c in calls(replies[-1]) if c == "motion.move_to"]
    assert bool(moves) == (gesture is not None)
    assert host.agent.questions == 1
    assert not host.agent.revealed


async def test_a_question_that_states_the_whole_truth_solves_it(game, fake) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle
    fake.push(verdict("yes", True))
    replies = await host.ask("message", f"是不是{'，'.join(puzzle.key_points)}")
    assert host.agent.solved == 1
    assert puzzle.bottom in replies[-1].text
    assert host.agent.revealed
    assert host.agent.solved == 1


async def test_a_question_that_tells_nothing_new_never_solves_it_whatever_the_judge_says(
    game, fake, module
) -> None:
    """The local 1.5B referee called "他是一个人吗" the whole truth: the 汤底 was read out."""
    host = await started(game, fake)
    puzzle = host.agent.puzzle = puzzle_of(module, "puppy_birthday")  # 小主人: a 是 stands
    fake.push(verdict("yes", True))
    replies = await host.ask("message", "他是一个人吗")
    assert host.agent.solved == 0
    assert not host.agent.revealed
    assert not any(puzzle.bottom in r.text for r in replies)
    assert replies[-1].text == "是。"


async def test_each_input_is_judged_once(game, fake) -> None:
    host = await started(game, fake)
    fake.push(
        Reply('{"verdict": "unclear"}'),
        Reply(tool_calls=[("ask_question", {}), ("propose_solution", {})]),
        Reply("你能换个说法吗？"),
    )
    await host.ask("message", "嗯嗯大象跳舞那个")
    assert len(fake.requests) == 3  # one judge call, in the hook; the tools judge no more
    results = tool_results(fake.requests[2])
    assert [r["outcome"] for r in results] == ["already_judged", "already_judged"]


# --------------------------------------------------------------------------- solutions


async def test_a_solution_that_tells_the_key_points_solves_it_in_code(game, fake, module) -> None:
    """The weak referee called the whole story "close" (issue 40): code decides it, no referee."""
    host = await started(game, fake)
    puzzle = host.agent.puzzle
    truth = "，".join(puzzle.key_points)  # what this puzzle's 汤底 says
    replies = await host.ask("message", f"我知道了，{truth}")
    assert fake.requests == []
    assert replies[-1].text == f"猜中啦，太厉害了！汤底是：{puzzle.bottom}"
    assert "expression_runtime.start" in calls(replies[-1])  # the happy face
    assert host.agent.revealed
    assert host.agent.solved == 1


async def test_the_story_in_the_childs_own_words_solves_it(game, fake, module) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle = puzzle_of(module, "melted_ice_cream")
    fake.push(verdict("close"))  # what the weak referee said; it is not asked
    replies = await host.ask("message", "答案是他牙齿怕冰，故意等冰淇淋化了当奶昔用吸管喝")
    assert replies[-1].text == f"猜中啦，太厉害了！汤底是：{puzzle.bottom}"
    assert host.agent.solved == 1


async def test_a_solution_the_code_cannot_decide_goes_to_the_referee(game, fake, module) -> None:
    host = await started(game, fake)
    host.agent.puzzle = puzzle_of(module, "umbrella_indoors")
    fake.push(verdict("close"))
    replies = await host.ask("message", "我知道了，伞是湿的")
    judge = fake.requests[0]
    assert system_of(judge) == module.referee.JUDGE_PROMPT
    assert "说出了他猜的真相" in request_text(judge)  # judged as a solution
    assert replies[-1].text == "很接近了，还差一点，再问问看！"


@pytest.mark.parametrize("lead", ["是不是有人偷东西", "他要去很冷的地方吗", "他在做实验吗"])
async def test_a_yes_nothing_in_the_story_backs_is_not_important(game, fake, module, lead) -> None:
    """The weak referee said 是 to false leads (issue 40)."""
    host = await started(game, fake)
    host.agent.puzzle = puzzle_of(module, "melted_ice_cream")
    fake.push(verdict("yes"))
    replies = await host.ask("message", lead)
    assert replies[-1].text == "这个不重要。"


async def test_no_ruling_after_the_bottom_is_revealed(game, fake) -> None:
    host = await started(game, fake)
    await host.ask("message", "我放弃")
    replies = await host.ask("message", "他是不是很开心")
    assert replies[-1].text == "这道汤的汤底已经揭晓啦，要不要再来一个？"
    assert fake.requests == []  # neither the referee nor the host model
    assert (await host.ask("message", "要"))[-1].text.startswith("好，我们换一道新的汤。")


async def test_am_i_right_is_answered_from_the_state(game, fake, module) -> None:
    host = await started(game, fake)
    host.agent.puzzle = puzzle_of(module, "umbrella_indoors")
    fake.push(verdict("close"))
    await host.ask("message", "我知道了，伞是湿的")
    replies = await host.ask("message", "我猜对了吗")
    assert replies[-1].text.startswith("还没有完全猜中哦")
    assert len(fake.requests) == 1  # the solution's referee call only
    assert not host.agent.revealed


async def test_the_summary_counts_questions_not_solutions_or_chat(game, fake, module) -> None:
    host = await started(game, fake)
    host.agent.puzzle = puzzle_of(module, "umbrella_indoors")
    fake.push(verdict("yes"), verdict("close"), Reply("我吃过啦，你接着问吧。"))
    await host.ask("message", "伞是湿的吗")
    await host.ask("message", "我知道了，伞是湿的")
    await host.ask("message", "你吃过饭了没")
    await host.ask("message", "这个游戏怎么玩来着")
    replies = await host.ask("end")
    assert "一共问了一个问题" in replies[-1].text


@pytest.mark.parametrize(("v", "outcome"), [("close", "close"), ("yes", "close"), ("no", "wrong")])
async def test_a_partial_or_wrong_solution(game, fake, module, v, outcome) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle = puzzle_of(module, "umbrella_indoors")
    fake.push(verdict(v))
    replies = await host.ask("message", "我觉得伞是湿的")
    result = json.loads(host.agent._memory[-1][0]["content"])["result"]
    assert result["outcome"] == outcome
    assert result["solved"] is False
    assert puzzle.bottom not in replies[-1].text
    assert not host.agent.revealed


# --------------------------------------------------------------------------- hints, give up, next


async def test_hints_come_in_order_and_run_out(game, fake) -> None:
    host = await started(game, fake)
    hints = host.agent.puzzle.hints
    for i, hint in enumerate(hints):
        replies = await host.ask("message", "给个提示")
        result = json.loads(host.agent._memory[-1][0]["content"])["result"]
        assert result == {"outcome": "hint", "hint": hint, "hints_left": len(hints) - i - 1}
        assert replies[-1].text == hint
    await host.ask("message", "再给个提示")
    assert json.loads(host.agent._memory[-1][0]["content"])["result"]["outcome"] == "no_more_hints"
    assert host.agent.state()["这道题用了几次提示"] == len(hints)
    assert fake.requests == []  # hints need no model


async def test_give_up_reveals_the_bottom(game, fake) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle
    replies = await host.ask("message", "我放弃")
    assert replies[-1].text == f"好吧，我来揭晓。汤底是：{puzzle.bottom}要不要再来一个？"
    assert host.agent.revealed
    assert host.agent.solved == 0
    requests = len(fake.requests)
    end = await host.ask("end", "结束游戏")
    assert puzzle.bottom not in end[-1].text  # not said twice
    assert end[-1].text == "这一局你一共问了零个问题，喝了一道汤，这次没有解开，下次加油。"
    assert len(fake.requests) == requests  # the ending is code's: no model re-words it
    assert end[-1].session == "ended"


async def test_next_puzzle_never_repeats_in_a_session(game, fake, module) -> None:
    host = Host(game, fake.settings())
    await host.ask("start")
    total = len(module.agent.PUZZLES)
    for _ in range(total - 1):
        replies = await host.ask("message", "再来一个")  # answered in code (on_round)
        assert host.agent.puzzle.surface in "".join(r.text for r in replies)
    assert len(set(host.agent.session_ids)) == total
    replies = await host.ask("message", "再来一个")
    assert "".join(r.text for r in replies).endswith("题库里的海龟汤都喝完啦，下次再来吧。")
    assert fake.requests == []  # the model never made a puzzle up


async def test_next_in_code_tells_the_old_bottom_first_then_the_new_surface(game, fake) -> None:
    host = Host(game, fake.settings())
    await host.ask("start")
    old = host.agent.puzzle
    replies = await host.ask("message", "下一个")
    new = host.agent.puzzle
    assert new.id != old.id
    assert [r.text for r in replies] == [
        f"上一道汤的汤底是：{old.bottom}好，我们换一道新的汤。汤面是：{new.surface}"
    ]
    assert fake.requests == []


async def test_a_bare_yes_after_the_bottom_was_revealed_brings_a_new_puzzle(game, fake) -> None:
    host = Host(game, fake.settings())
    await host.ask("start")
    old = host.agent.puzzle
    assert "要不要再来一个" in "".join(r.text for r in await host.ask("message", "猜不出来"))
    replies = await host.ask("message", "要")
    assert host.agent.puzzle.id != old.id
    assert "".join(r.text for r in replies) == f"好，我们换一道新的汤。汤面是：{host.agent.puzzle.surface}"
    assert fake.requests == []


async def test_say_it_again_repeats_the_surface_from_the_state_not_the_referee(game, fake) -> None:
    host = Host(game, fake.settings())
    await host.ask("start")
    replies = await host.ask("message", "再念一遍")
    assert [r.text for r in replies] == [f"好的，再说一遍汤面：{host.agent.puzzle.surface}"]
    assert host.agent.questions == 0
    assert fake.requests == []


async def test_played_puzzles_persist_across_sessions(game, home, module) -> None:
    offline = LLMSettings()
    first = Host(game, offline)
    await first.ask("start", ctx="a")
    await first.ask("message", "再来一个", ctx="a")
    await first.ask("end", ctx="a")
    played = set(first.agent.session_ids)
    assert len(played) == 2
    path = home / "data" / "turtle_soup" / "played.json"
    assert set(json.loads(path.read_text(encoding="utf-8"))["played"]) == played
    second = Host(game, offline)
    await second.ask("start", ctx="b")
    assert second.agent.puzzle.id not in played
    assert not list(path.parent.glob("*.tmp"))  # temp files are renamed, not left behind


async def test_when_every_puzzle_was_played_the_record_starts_over(game, home, module) -> None:
    ids = [p.id for p in module.agent.PUZZLES]
    path = home / "data" / "turtle_soup" / "played.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"played": ids}), encoding="utf-8")
    host = Host(game, LLMSettings())
    await host.ask("start")
    assert json.loads(path.read_text(encoding="utf-8"))["played"] == [host.agent.puzzle.id]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"played": "x"}'])
async def test_a_corrupt_record_does_not_stop_the_game(game, home, content) -> None:
    path = home / "data" / "turtle_soup" / "played.json"
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    host = Host(game, LLMSettings())
    replies = await host.ask("start")
    assert host.agent.puzzle.surface in replies[-1].text


# --------------------------------------------------------------------------- chit-chat, end


async def test_chit_chat_the_judge_finds_unclear_is_answered_by_the_host(game, fake) -> None:
    host = await started(game, fake)
    fake.push(Reply('{"verdict": "unclear", "solved": false}'), Reply("你好呀！我们接着猜吧。"))
    replies = await host.ask("message", "小懒你今天开心吗")
    assert [r.text for r in replies] == ["你好呀！", "我们接着猜吧。"]  # spoken as it streams
    assert [is_host(r) for r in fake.requests] == [False, True]
    assert host.agent.questions == 0


async def test_end_during_a_slow_judge_cancels_it_and_reveals_the_bottom(game, fake) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle
    judging = trio.Event()

    def hang(request: dict[str, Any]) -> Hang:
        judging.set()
        return Hang()

    fake.push(hang, Reply("下次再玩。"))
    pending: list[list[GameReply]] = []
    async with trio.open_nursery() as nursery:

        async def question() -> None:
            pending.append(await host.ask("message", "他是不是在晾伞"))

        nursery.start_soon(question)
        with trio.fail_after(5):
            await judging.wait()  # the judge call is in flight
            end = await host.ask("end", "结束游戏")
    assert pending[0][-1].text == INTERRUPTED
    assert puzzle.bottom not in "".join(r.text for r in pending[0])
    assert [r.text for r in end] == [
        f"这道汤的汤底是：{puzzle.bottom}这一局你一共问了零个问题，喝了一道汤，这次没有解开，下次加油。"
    ]
    assert end[-1].session == "ended"
    assert host.agent.questions == 0
    assert host.agent.judge_model is None


async def test_a_slow_judge_says_wait_first(game, fake, module, monkeypatch) -> None:
    monkeypatch.setattr(module.agent.GameAgent, "SOOTHE_AFTER", 0.05)
    host = await started(game, fake)
    fake.push(Reply('{"verdict": "no", "solved": false}', delay=0.3))
    replies = await host.ask("message", "是不是下雨了")
    assert [r.text for r in replies] == ["让我想一想。", "不是。"]


async def test_end_sums_up(game, fake) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle
    for v in ("no", "yes"):
        fake.push(verdict(v))
        await host.ask("message", "问一个问题吗")
    fake.push(Reply("谢谢你的回答，这是一道有趣的故事。"))  # what the weak model said instead
    end = await host.ask("end", "结束游戏")
    assert [r.text for r in end] == [
        f"这道汤的汤底是：{puzzle.bottom}这一局你一共问了两个问题，喝了一道汤，这次没有解开，下次加油。"
    ]
    assert end[-1].session == "ended"


async def test_the_host_never_sees_the_unrevealed_bottom(game, fake) -> None:
    host = await started(game, fake)
    puzzle = host.agent.puzzle
    said: list[str] = []
    script = [
        ("他是男孩吗", [verdict("no")]),
        ("和天气有关吗", [verdict("close")]),
        ("给个提示", []),
        ("我猜她在玩", [verdict("no")]),
        ("你喜欢吃什么", [verdict("unclear"), Reply("我喜欢电。我们接着猜吧。")]),
        ("嗯嗯", [Reply("乱七八糟"), Reply("再说一次？")]),
    ]
    for text, items in script:
        fake.push(*items)
        said += [r.text for r in await host.ask("message", text)]
    secrets = [puzzle.bottom, *puzzle.key_points]
    host_requests = [r for r in fake.requests if is_host(r)]
    assert len(host_requests) < len(fake.requests)  # the judge was asked too
    for request in host_requests:
        assert not any(secret in request_text(request) for secret in secrets)
    assert not any(puzzle.bottom in text for text in said)
    replies = await host.ask("message", "我放弃")
    assert puzzle.bottom in replies[-1].text


# --------------------------------------------------------------------------- bad judges


@pytest.mark.parametrize(
    "bad",
    [
        Reply("嗯，我觉得答案是是"),
        Reply('{"verdict": "maybe", "solved": false}'),
        Reply('{"solved": true}'),
        Reply('["yes"]'),
        Reply(""),
        Garbage(b"{not json"),
        Fail(500, headers=NO_RETRY),
    ],
    ids=["prose", "unknown-verdict", "no-verdict", "list", "empty", "garbage-body", "http-500"],
)
async def test_an_unusable_judge_answer_asks_the_user_to_rephrase(game, fake, module, bad) -> None:
    host = await started(game, fake)
    fake.push(bad, Reply("能换个说法吗？"))
    replies = await host.ask("message", "他是不是在晾伞")
    assert user_events(fake.requests[-1])[-1]["result"] == {
        "outcome": "unclear", "message": module.agent.ASK_AGAIN
    }
    assert replies[-1].text == "能换个说法吗？"
    assert replies[-1].session == "active"
    assert host.agent.questions == 0
    assert not host.agent.revealed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdict": "yes", "solved": false}', ("yes", False)),
        ('```json\n{"verdict": "close", "solved": false}\n```', ("close", False)),
        ('判定：{"verdict": "NO", "solved": "false"}。', ("no", False)),
        ('{"verdict": "不重要", "solved": false}', ("irrelevant", False)),
        ('{"verdict": "很接近了"}', ("close", False)),
        ('{"verdict": "yes", "solved": "true"}', ("yes", True)),
        ('{"verdict": "unclear", "solved": false}', ("unclear", False)),
        ('{"verdict": "yes", "solved": "perhaps"}', ("yes", False)),
    ],
)
def test_parse_verdict_is_lenient_about_form(module, text, expected) -> None:
    parsed = module.referee.parse_verdict(text)
    assert (parsed.verdict, parsed.solved) == expected


@pytest.mark.parametrize("text", ["", "yes", "{", '{"verdict": 1}', '{"verdict": "maybe"}', "null"])
def test_parse_verdict_rejects_garbage(module, text) -> None:
    assert module.referee.parse_verdict(text) is None


# --------------------------------------------------------------------------- offline


def umbrella(module: Any) -> Any:
    return next(p for p in module.agent.PUZZLES if p.id == "umbrella_indoors")


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("question", "他是不是在晾伞", ("close", False)),
        ("question", "伞是湿的吗", ("close", False)),
        ("question", "是不是下雨了", ("yes", False)),
        ("question", "她喜欢红色吗", ("irrelevant", False)),
        ("question", "嗯", ("unclear", False)),
        ("question", "伞湿了，她撑开是为了晾干", ("yes", True)),
        ("solution", "伞是湿的，她撑开伞是为了晾干伞", ("yes", True)),
        ("solution", "伞是湿的", ("close", False)),
        ("solution", "她在玩游戏", ("no", False)),
    ],
)
def test_offline_referee_is_a_rough_overlap_judge(module, kind, text, expected) -> None:
    got = module.referee.offline_verdict(umbrella(module), kind, text)
    assert (got.verdict, got.solved) == expected


async def test_an_offline_session_plays_end_to_end(game, home, module) -> None:
    # Everything but the umbrella puzzle was played before, so the game starts with it.
    ids = [p.id for p in module.agent.PUZZLES if p.id != "umbrella_indoors"]
    path = home / "data" / "turtle_soup" / "played.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"played": ids}), encoding="utf-8")
    host = Host(game, LLMSettings())
    puzzle = umbrella(module)

    start = await host.ask("start", "玩海龟汤")
    assert puzzle.surface in start[-1].text
    close = await host.ask("message", "他是不是在晾伞")
    assert close[-1].text == "很接近了！"
    hint = await host.ask("message", "给个提示")
    assert hint[-1].text == puzzle.hints[0]
    chat = await host.ask("message", "她喜欢红色吗")
    assert chat[-1].text == "这个不重要。"
    solved = await host.ask("message", "伞湿了，她撑开是为了晾干")
    assert puzzle.bottom in solved[-1].text
    assert "expression_runtime.start" in calls(solved[-1])
    again = await host.ask("message", "再来一个")
    second = host.agent.puzzle
    assert second.id != puzzle.id
    assert second.surface in "".join(r.text for r in again)
    gave_up = await host.ask("message", "我放弃")
    assert second.bottom in gave_up[-1].text
    end = await host.ask("end", "结束游戏")
    assert end[-1].text == "这一局你一共问了三个问题，喝了两道汤，解开了一道。"
    assert end[-1].session == "ended"
    assert host.agent.judge_model is None  # offline judging needs no model


async def test_an_offline_end_reveals_the_unrevealed_bottom(game) -> None:
    host = Host(game, LLMSettings())
    await host.ask("start")
    puzzle = host.agent.puzzle
    end = await host.ask("end", "结束游戏")
    assert puzzle.bottom in "".join(r.text for r in end)
    assert end[-1].session == "ended"


async def test_moving_to_the_next_puzzle_tells_the_unsolved_bottom(game, fake) -> None:
    host = await started(game, fake)
    old = host.agent.puzzle
    fake.push(Reply(tool_calls=[("next_puzzle", {})]), Reply("好，换一个。"))
    replies = await host.ask("message", "换一个")
    said = "".join(r.text for r in replies)
    assert f"上一道汤的汤底是：{old.bottom}" in said
    assert host.agent.puzzle is not old
    assert host.agent.puzzle.surface in said


def test_every_puzzles_own_truth_can_solve_it_and_its_surface_cannot(module) -> None:
    """The code bar on a referee's ``solved`` never blocks a real solution."""
    for puzzle in module.agent.PUZZLES:
        assert module.referee.covers_key_points(puzzle, "，".join(puzzle.key_points)), puzzle.id
        assert module.referee.covers_key_points(puzzle, puzzle.bottom), puzzle.id
        assert not module.referee.covers_key_points(puzzle, puzzle.surface), puzzle.id
        assert not module.referee.covers_key_points(puzzle, "他是一个人吗"), puzzle.id


# --------------------------------------------------------------------------- issue 25: a referee that cannot be fooled

FALSE_SOLVES = [  # what the weak local model called the whole truth (issue 25), one a puzzle
    ("puppy_birthday", "寿星是小朋友吗", "是。"),
    ("puppy_birthday", "是小狗吗", "是。"),
    ("umbrella_indoors", "他是一个人吗", "这个不重要。"),  # nothing in the story backs a 是
    ("umbrella_indoors", "是不是因为下雨了", "是。"),
]


@pytest.mark.parametrize(("puzzle_id", "line", "ruling"), FALSE_SOLVES)
async def test_a_judges_solved_for_a_line_missing_key_points_reveals_nothing(
    game, fake, module, puzzle_id, line, ruling
) -> None:
    host = await started(game, fake)
    host.agent.puzzle = next(p for p in module.agent.PUZZLES if p.id == puzzle_id)
    fake.push(verdict("yes", solved=True))
    replies = await host.ask("message", line)
    said = "".join(r.text for r in replies)
    assert host.agent.puzzle.bottom not in said
    assert not host.agent.revealed
    assert host.agent.solved == 0
    assert said == ruling


async def test_the_judge_is_asked_for_structured_output(game, fake) -> None:
    host = await started(game, fake)
    fake.push(verdict("no"))
    await host.ask("message", "她是故意的吗")
    schema = fake.requests[-1]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdict"]["enum"] == ["yes", "no", "irrelevant", "close", "unclear"]


async def test_an_endpoint_without_structured_output_is_asked_again_in_plain_text(game, fake) -> None:
    host = await started(game, fake)
    fake.push(Fail(400, headers=NO_RETRY), verdict("no"))
    replies = await host.ask("message", "她是故意的吗")
    assert replies[-1].text == "不是。"
    assert "response_format" not in fake.requests[-1]
    assert "response_format" in fake.requests[-2]


async def test_say_the_surface_again_repeats_the_story_from_the_games_state(game, fake) -> None:
    host = await started(game, fake)
    replies = await host.ask("message", "再说一遍汤面")
    assert host.agent.puzzle.surface in replies[-1].text
    assert fake.requests == []  # no judge, no host model: code answers


async def test_a_line_without_a_content_word_is_not_sent_to_the_judge(game, fake) -> None:
    """A weak judge ruled "要" with "是。"; code knows there is nothing to rule on."""
    host = await started(game, fake)
    fake.push(Reply("你想问什么呢？用是或不是能回答的问题问我吧。"))
    replies = await host.ask("message", "要")
    assert replies[-1].text != "是。"
    assert all(is_host(r) for r in fake.requests)
    assert host.agent.questions == 0
