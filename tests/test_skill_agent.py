"""SkillAgent and GameHost, driven through the real openai client against the fake server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.trace import Trace
from agentcade.game.host import INTERRUPTED, NO_SESSION, TOO_MANY, GameHost
from agentcade.game.loader import LoadedGame, load_game
from agentcade.game.skill_agent import (
    COMMON_PROMPT,
    CONTINUE_LINES,
    FALLBACK_LINES,
    MAX_TOOL_CALLS,
    MEMORY_ROUNDS,
)
from agentcade.llm.client import MAX_TOKENS
from agentcade.testing.fake_openai import Fail, FakeOpenAI, Garbage, Hang, Reply

PROBE = Path(__file__).parent / "data" / "games" / "probe"
NO_RETRY = (("x-should-retry", "false"),)


@pytest.fixture
def probe() -> LoadedGame:
    return load_game(PROBE)




@pytest.fixture
async def make_host() -> AsyncIterator[Callable[..., GameHost]]:
    """Make hosts over the fake model; every session is closed after the test (so every
    model client is closed: openai's async client cannot clean up after itself in trio)."""
    made: list[GameHost] = []

    def make(fake: FakeOpenAI, game: LoadedGame, **kwargs: Any) -> GameHost:
        settings = game.agent_cls.config(llm=fake.settings(timeout=5.0))
        made.append(GameHost(lambda: game.new_agent(settings), **kwargs))
        return made[-1]

    yield make
    for host in made:
        await host.aclose()


async def ask(host: GameHost, ctx: str, kind: str, text: str = "") -> list[GameReply]:
    """One request; asserts the reply contract and returns every reply in order."""
    got: list[tuple[GameReply, bool]] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        got.append((reply, final))

    await host.handle(ctx, GameInput(kind=kind, text=text), emit)  # type: ignore[arg-type]
    assert got, "every request gets a reply"
    assert [f for _, f in got] == [False] * (len(got) - 1) + [True]
    assert got[-1][0].text.strip(), "the final reply has speakable text"
    return [r for r, _ in got]


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def user_events(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "user"]


async def test_start_runs_on_start_before_the_model_and_passes_its_result(fake, probe, make_host) -> None:
    fake.push(Reply("我们开始吧。"))
    host = make_host(fake, probe)
    replies = await ask(host, "c1", "start", "玩探针")
    assert [r.text for r in replies] == ["开局口令", "我们开始吧。"]
    event = user_events(fake.requests[0])[-1]
    assert event == {
        "event": "start",
        "user_text": "玩探针",
        "result": {"question": "开局口令", "already_said": ["开局口令"]},
        "state": {"counter": 0},
    }


async def test_system_prompt_is_common_prompt_then_skill_body_and_the_state_comes_last(
    fake, probe, make_host
) -> None:
    """The state changes every turn: it rides on the request's last user message, never
    the system prompt, so a prompt cache keeps the system prompt, the tools and the history
    (issue 54: on the weak local model a game's first model line re-read ~2,000 tokens)."""
    fake.push(Reply("开局口令"), Reply("好的。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    await ask(host, "c1", "message", "你好")
    system = fake.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith(COMMON_PROMPT)
    assert system["content"].endswith(probe.skill.body.strip())
    assert fake.requests[1]["messages"][0] == system
    assert user_events(fake.requests[0])[-1]["state"] == {"counter": 0}
    assert "state" not in user_events(fake.requests[1])[0]  # remembered without it


async def test_a_hooks_required_text_is_spoken_at_once_before_the_model_answers(fake, probe, make_host) -> None:
    fake.push(Reply("我们开始吧。", delay=0.3))
    got: list[str] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        got.append(f"{'final' if final else 'now'}:{reply.text}:{len(fake.requests)}")

    host = make_host(fake, probe)
    await host.handle("c1", GameInput(kind="start"), emit)
    # the required text went out before the model was even asked
    assert got == ["now:开局口令:0", "final:我们开始吧。:1"]


async def test_a_tools_required_text_is_spoken_at_once_and_reaches_the_model_as_already_said(fake, probe, make_host) -> None:
    fake.push(Reply("好。"), Reply(tool_calls=[("remember", {})]), Reply("记住了。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "口令是什么")
    assert [r.text for r in replies] == ["口令是芝麻开门。", "记住了。"]
    # the whole fallback sentence is spoken, since it holds the required text
    assert tool_messages(fake.requests[2]) == [{"ok": True, "already_said": ["口令是芝麻开门。"]}]


async def test_the_models_repeat_of_a_text_spoken_at_once_is_not_spoken_again(fake, probe, make_host) -> None:
    fake.push(Reply("好。"), Reply(tool_calls=[("remember", {})]), Reply("芝麻开门！你记住了吗？"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "口令")
    assert [r.text for r in replies] == ["口令是芝麻开门。", "你记住了吗？"]


async def test_a_model_that_only_repeats_gets_a_short_closing_line(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令。"))
    replies = await ask(make_host(fake, probe), "c1", "start")
    assert [r.text for r in replies] == ["开局口令", CONTINUE_LINES["start"]]


async def test_tool_exception_goes_back_to_the_model_as_error(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("boom", {})]), Reply("出了点小问题。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "炸")
    assert replies[-1].text == "出了点小问题。"
    assert tool_messages(fake.requests[2]) == [
        {"error": "boom did not work: kaput. Tell the player in one short sentence and carry on."}
    ]


async def test_invalid_tool_arguments_go_back_as_error_without_calling(fake, probe, make_host) -> None:
    fake.push(
        Reply("开局口令"),
        Reply(tool_calls=[("count", {"n": 9})]),
        Reply(tool_calls=[("count", {"n": 2})]),
        Reply("好的。"),
    )
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    await ask(host, "c1", "message", "数到九")
    first, second = tool_messages(fake.requests[2]), tool_messages(fake.requests[3])
    assert "Invalid arguments for count" in first[0]["error"]
    assert second[-1] == {"n": 2, "counter": 2}
    assert user_events(fake.requests[3])[-1]["state"] == {"counter": 2}


async def test_unknown_tool_is_reported_to_the_model(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("fly", {})]), Reply("我不会飞。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    await ask(host, "c1", "message", "飞")
    assert tool_messages(fake.requests[2])[0]["error"].startswith("Unknown tool: fly")


async def test_say_tool_sends_an_intermediate_reply_first(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("say", {"text": "稍等我想想"})]), Reply("想好了。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "想一想")
    assert [r.text for r in replies] == ["稍等我想想", "想好了。"]


async def test_directives_travel_with_the_next_reply(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("light", {})]), Reply("灯亮了。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "开灯")
    assert [d.call for d in replies[-1].directives] == ["lights.set_color"]
    assert replies[-1].directives[0].args == ["#00FF00"]


@pytest.mark.parametrize(
    "failure",
    [Fail(500, headers=NO_RETRY), Garbage(b"{not json"), Reply("")],
    ids=["http-500", "garbage", "empty-answer"],
)
async def test_model_failure_gives_a_fallback_line_and_is_not_remembered(fake, probe, failure, make_host) -> None:
    fake.push(Reply("开局口令"), failure, Reply("好的。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "失败的这一句")
    assert replies[-1].text == FALLBACK_LINES["message"]
    assert replies[-1].session == "active"
    await ask(host, "c1", "message", "下一句")
    texts = [e["user_text"] for e in user_events(fake.requests[-1])]
    assert "失败的这一句" not in texts
    assert texts[-1] == "下一句"


async def test_model_failure_after_a_successful_on_start_keeps_the_game(fake, probe, make_host) -> None:
    fake.push(Fail(500, headers=NO_RETRY))
    host = make_host(fake, probe)
    replies = await ask(host, "c1", "start")
    assert replies[0].text == "开局口令"  # what on_start made is heard
    assert replies[-1].session == "active"
    assert host.has_session("c1")


async def test_model_failure_on_a_start_that_no_hook_began_ends_the_session(fake, probe, make_host, monkeypatch) -> None:
    async def nothing(self, turn):  # a game that starts through the model's tools
        return None

    monkeypatch.setattr(probe.agent_cls, "on_start", nothing)
    fake.push(Fail(500, headers=NO_RETRY))
    host = make_host(fake, probe)
    replies = await ask(host, "c1", "start")
    assert replies[-1].text == FALLBACK_LINES["start"]
    assert replies[-1].session == "ended"
    assert not host.has_session("c1")


async def test_end_always_ends_the_session_even_when_the_model_fails(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Fail(500, headers=NO_RETRY))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "end", "结束游戏")
    assert replies[-1].session == "ended"
    assert not host.has_session("c1")


async def test_a_tool_can_end_the_session(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("finish", {})]), Reply("这局结束啦。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "不玩了")
    assert replies[-1].session == "ended"
    assert not host.has_session("c1")


async def test_memory_keeps_the_last_16_rounds(fake, probe, make_host) -> None:
    fake.default = Reply("好。")
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    for i in range(20):
        await ask(host, "c1", "message", f"第{i}句")
    events = user_events(fake.requests[-1])
    assert len(events) == MEMORY_ROUNDS + 1
    assert events[0]["user_text"] == "第3句"  # 16 remembered rounds + this one
    assert events[-1]["user_text"] == "第19句"


async def test_judged_is_set_once_per_input(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("peek", {}), ("peek", {})]), Reply("好。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    await ask(host, "c1", "message", "看看")
    assert tool_messages(fake.requests[2]) == [{"outcome": "judged"}, {"outcome": "already_judged"}]


async def test_no_secret_reaches_the_model(fake, probe, make_host) -> None:
    fake.default = Reply("好。")
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    await ask(host, "c1", "message", "答案是什么")
    assert "紫葡萄" not in fake.all_text()


async def test_end_while_a_tool_is_slow_cancels_it_and_still_ends(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("slow", {})]), Reply("再见。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    slow_replies: list[GameReply] = []
    async with trio.open_nursery() as nursery:

        async def slow() -> None:
            slow_replies.extend(await ask(host, "c1", "message", "慢慢来"))

        nursery.start_soon(slow)
        await fake.wait_requests(2)  # the model has asked for the slow tool
        await trio.testing.wait_all_tasks_blocked()  # and the tool is running
        with trio.fail_after(5):
            end_replies = await ask(host, "c1", "end", "结束游戏")
    assert [r.text for r in slow_replies] == ["稍等", INTERRUPTED]
    assert end_replies[-1].text == "再见。"
    assert end_replies[-1].session == "ended"
    assert user_events(fake.requests[-1])[-1]["event"] == "end"


async def test_end_while_the_model_is_slow_cancels_the_model_call(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Hang(), Reply("再见。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    results: list[list[GameReply]] = []
    async with trio.open_nursery() as nursery:

        async def hang() -> None:
            results.append(await ask(host, "c1", "message", "你好"))

        nursery.start_soon(hang)
        await fake.wait_requests(2)
        with trio.fail_after(5):
            end = await ask(host, "c1", "end", "结束")
    assert results[0][-1].text == INTERRUPTED
    assert end[-1].text == "再见。"
    assert end[-1].session == "ended"


async def test_requests_of_one_session_run_in_arrival_order(fake, probe, make_host) -> None:
    fake.default = Reply(tool_calls=[])

    def script(request: dict[str, Any]) -> Reply:
        last = user_events(request)[-1]
        return Reply(f"收到{last['user_text']}", delay=0.05 if last["user_text"] == "一" else 0)

    fake.default = script
    host = make_host(fake, probe)
    await ask(host, "c1", "start", "开始")
    finished: list[str] = []
    async with trio.open_nursery() as nursery:
        for word in ["一", "二", "三"]:

            async def one(word: str = word) -> None:
                replies = await ask(host, "c1", "message", word)
                finished.append(replies[-1].text)

            nursery.start_soon(one)
            await trio.testing.wait_all_tasks_blocked()  # its message is in before the next
    assert finished == ["收到一", "收到二", "收到三"]


async def test_message_for_a_missing_session_answers_ended(fake, probe, make_host) -> None:
    host = make_host(fake, probe)
    for kind in ("message", "end"):
        replies = await ask(host, "nobody", kind, "你好")
        assert replies == [GameReply(text=NO_SESSION, session="ended")]
    assert fake.requests == []


async def test_start_on_a_live_context_closes_the_old_session(fake, probe, make_host) -> None:
    fake.default = Reply("开局口令")
    host = make_host(fake, probe)
    before = probe.agent_cls.closed_count
    await ask(host, "c1", "start")
    await ask(host, "c1", "start")
    assert probe.agent_cls.closed_count == before + 1
    assert host.session_count == 1


async def test_sessions_beyond_the_limit_get_a_speakable_refusal(fake, probe, make_host) -> None:
    fake.default = Reply("开局口令")
    host = make_host(fake, probe, max_sessions=2)
    await ask(host, "a", "start")
    await ask(host, "b", "start")
    refused = await ask(host, "c", "start")
    assert refused == [GameReply(text=TOO_MANY, session="ended")]
    await ask(host, "a", "end")
    assert (await ask(host, "c", "start"))[-1].session == "active"


async def test_idle_sessions_are_closed(fake, probe, make_host, autojump_clock) -> None:
    fake.default = Reply("开局口令")
    host = make_host(fake, probe, idle_timeout=0.05)
    await ask(host, "a", "start")
    assert await host.close_idle() == 0
    await trio.sleep(0.06)
    assert await host.close_idle() == 1
    assert (await ask(host, "a", "message", "还在吗"))[-1].session == "ended"


async def test_shutdown_closes_every_session_and_leaves_no_task(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply("开局口令"), Reply(tool_calls=[("slow", {})]))
    host = make_host(fake, probe)
    before = probe.agent_cls.closed_count
    async with trio.open_nursery() as outer:
        await outer.start(host.run)
        await ask(host, "a", "start")
        await ask(host, "b", "start")
        outer.start_soon(ask, host, "a", "message", "慢")
        await trio.testing.wait_all_tasks_blocked()  # the slow tool is running
        outer.cancel_scope.cancel()
    assert host.session_count == 0
    assert probe.agent_cls.closed_count == before + 2


async def test_sessions_of_an_opened_game_share_one_model_client(fake, monkeypatch, tmp_path) -> None:
    from agentcade.wiring.games import open_local_game

    monkeypatch.setenv("LLM_BASE_URL", fake.url)
    monkeypatch.setenv("LLM_API_KEY", "sk-test")
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))
    fake.default = Reply("开局口令")
    clients = []  # the objects themselves: ids of freed objects may be reused
    async with open_local_game(str(PROBE)) as local:
        for ctx in ("a", "b", "c"):  # one after another: each ends before the next starts
            await ask(local.host, ctx, "start")
            clients.append(local.host._sessions[ctx].agent._model()._client)  # type: ignore[attr-defined]
            await ask(local.host, ctx, "end")
    assert all(client is clients[0] for client in clients)


async def test_model_failure_after_a_tool_acted_speaks_what_the_tool_did(fake, probe, make_host) -> None:
    fake.push(
        Reply("开局口令"), Reply(tool_calls=[("remember", {})]), Fail(500, headers=NO_RETRY)
    )
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "口令")
    assert replies[0].text == "口令是芝麻开门。"  # not "please say that again"
    assert FALLBACK_LINES["message"] not in "".join(r.text for r in replies)


async def test_tool_calls_are_not_run_when_no_tools_were_offered(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"))
    fake.default = Reply(tool_calls=[("count", {"n": 1})])  # a model that never stops calling
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "一直数")
    assert replies[-1].text  # a speakable final all the same
    last = fake.requests[-1]
    assert "tools" not in last  # the last step offered none...
    assert tool_messages(last)[-1] == {"n": 1, "counter": 8}  # ...and the 9th call never ran


async def test_concurrent_starts_on_one_context_leave_no_session_unclosed(fake, probe) -> None:
    """Regression (review): a second `start` arriving while the first closed the old
    session made a session nobody owned, never closed."""
    fake.default = Reply("开局口令")
    settings = probe.agent_cls.config(llm=fake.settings(timeout=5.0))
    made = []

    def new_agent():
        made.append(probe.new_agent(settings))
        return made[-1]

    host = GameHost(new_agent)
    before = probe.agent_cls.closed_count
    await ask(host, "c1", "start")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, host, "c1", "start")
        nursery.start_soon(ask, host, "c1", "start")
    assert host.session_count == 1
    await host.aclose()
    assert probe.agent_cls.closed_count - before == len(made) == 3


# --------------------------------------------------------------------------- speech and caps


def recording_host(make_host, fake, probe) -> tuple[GameHost, list[dict[str, Any]]]:
    records: list[dict[str, Any]] = []
    host = make_host(fake, probe, trace=Trace(records.append))
    return host, records


async def test_a_tool_that_replies_ends_the_turn_without_a_second_model_call(fake, probe, make_host) -> None:
    fake.push(Reply("好。"), Reply(tool_calls=[("settle", {})]))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "结算")
    assert replies[-1].text == "结算好了。"
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    "raw",
    [
        '<tool_response>{"ok": true}</tool_response>好的，我们继续。',
        "<tools></tools>【探针】好的，我们继续。",
        '{"event": "message", "user_text": "是老鼠", "result": {}}好的，我们继续。',
        "count(3) 好的，我们继续。",
    ],
    ids=["tool-response", "tools-and-speaker-tag", "event-envelope", "call-text"],
)
async def test_markup_json_tool_calls_and_speaker_tags_are_never_spoken_or_remembered(
    fake, probe, make_host, raw
) -> None:
    fake.push(Reply("好。"), Reply(raw), Reply("嗯。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "你好")
    assert replies[-1].text == "好的，我们继续。"
    await ask(host, "c1", "message", "再说一句")
    remembered = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "assistant"]
    assert "好的，我们继续。" in remembered
    assert not any(mark in "".join(c or "" for c in remembered) for mark in ("<", "{", "【", "("))


async def test_an_answer_that_is_only_markup_speaks_what_the_tools_did(fake, probe, make_host) -> None:
    fake.push(
        Reply("好。"),
        Reply(tool_calls=[("count", {"n": 2})]),
        Reply('<tool_call>{"name": "count", "arguments": {"n": 2}}</tool_call>'),
    )
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "数两个")
    assert replies[-1].text == "好的。"  # the spoken fallback of {"n": 2, "counter": 2}
    assert "<" not in replies[-1].text


async def test_say_calls_are_capped_per_turn_with_a_trace_record(fake, probe, make_host) -> None:
    fake.push(Reply("好。"), Reply(tool_calls=[("say", {"text": f"第{i}句。"}) for i in range(50)]), Reply("好了。"))
    host, records = recording_host(make_host, fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "说很多话")
    assert [r.text for r in replies] == ["第0句。", "第1句。", "好了。"]
    caps = [r for r in records if r["type"] == "cap"]
    assert {c["cap"] for c in caps} >= {"says", "tool_calls"}


async def test_tool_calls_are_capped_per_turn_with_a_trace_record(fake, probe, make_host) -> None:
    fake.push(Reply("好。"), Reply(tool_calls=[("count", {"n": 1})] * 20), Reply("数好了。"))
    host, records = recording_host(make_host, fake, probe)
    await ask(host, "c1", "start")
    await ask(host, "c1", "message", "一直数")
    assert host_agent_counter(host) == MAX_TOOL_CALLS
    assert [r["limit"] for r in records if r["type"] == "cap"] == [MAX_TOOL_CALLS]


def host_agent_counter(host: GameHost) -> int:
    return host._sessions["c1"].agent.counter  # type: ignore[attr-defined]


async def test_the_final_reply_is_spoken_sentence_by_sentence_while_the_model_streams(
    fake, probe, make_host
) -> None:
    fake.push(Reply("好。"), Reply("第一句话。第二句话。第三句话。", chunk_delay=0.05))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    got: list[tuple[str, float]] = []

    async def emit(reply: GameReply, *, final: bool) -> None:
        got.append((reply.text, trio.current_time()))

    await host.handle("c1", GameInput(kind="message", text="说三句"), emit)
    assert [text for text, _ in got] == ["第一句话。", "第二句话。", "第三句话。"]
    # the first sentence went out while the rest was still being generated
    assert got[-1][1] - got[0][1] > 0.1
    assert fake.requests[-1]["stream"] is True
    assert fake.requests[-1]["max_tokens"] == MAX_TOKENS


# -- issue 25: what code decided is what is heard -------------------------------------


async def test_a_model_sentence_claiming_progress_the_game_did_not_make_is_dropped(
    fake, probe, make_host
) -> None:
    fake.push(Reply("开局口令"), Reply("好，重新想一个数。画好了，这是第三题。你接着猜吧。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "再来一局")
    assert "".join(r.text for r in replies) == "你接着猜吧。"


async def test_a_model_reply_never_repeats_a_sentence_and_stops_at_200_characters(
    fake, probe, make_host
) -> None:
    surface = "外面阳光很好，小美却在客厅里撑开一把伞，放在地上一整个下午，谁也不去收。"
    rambling = "".join(f"{surface}第{i}遍说给你听，好不好呀？" for i in range(12))  # 535+ chars
    fake.push(Reply("开局口令"), Reply(f"{surface}{surface}{rambling}"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "要")
    said = "".join(r.text for r in replies)
    assert len(rambling) > 500
    assert said.count(surface) == 1
    assert len(said) <= 200


async def test_a_progress_claim_stands_when_a_game_tool_ran_this_turn(fake, probe, make_host) -> None:
    fake.push(Reply("开局口令"), Reply(tool_calls=[("count", {"n": 1})]), Reply("好，重新想一个数。你猜吧。"))
    host = make_host(fake, probe)
    await ask(host, "c1", "start")
    replies = await ask(host, "c1", "message", "再来一局")
    assert "".join(r.text for r in replies) == "好，重新想一个数。你猜吧。"
