"""llm.py: OpenAIChatModel against the fake server (under trio), and OfflineModel decisions."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import trio
from pydantic import SecretStr

from agentcade.core.judge import parse_number
from agentcade.core.settings import LLMSettings
from agentcade.llm import (
    MAX_TOOL_CALLS,
    ChatModel,
    ModelError,
    ModelReply,
    OfflineModel,
    OpenAIChatModel,
    ToolCall,
    make_model,
    offline_notice,
)
from agentcade.main.agent import OfflineMainModel
from agentcade.testing.fake_openai import Fail, FakeOpenAI, Garbage, Hang, Reply, serve_fake_openai

SECRET = "sk-fake-secret"  # FakeOpenAI.settings() uses it
MESSAGES = [{"role": "system", "content": "你是主持人"}, {"role": "user", "content": "你好"}]
NO_RETRY = (("x-should-retry", "false"),)


def fn(name: str, description: str, **params: str) -> dict[str, Any]:
    """A tool schema; params maps name -> JSON type, a trailing '?' marks it optional."""
    properties = {p: {"type": t.rstrip("?")} for p, t in params.items()}
    required = [p for p, t in params.items() if not t.endswith("?")]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


SAY = fn("say", "处理中途先说一句话。", text="string")
GUESS = fn("guess", "用户猜一个数。", number="integer")
CHECK = fn("check_answer", "判断用户这一轮说的答案对不对（直接读取用户原话）。")
HINT = fn("get_hint", "取得下一条提示。")
GIVE_UP = fn("reveal", "用户放弃时公布答案。")
NEW = fn("new_question", "出一道新题，用户没说难度时用 easy。", level="string?")
TOOLS = [SAY, GUESS, CHECK, HINT, GIVE_UP, NEW]


@pytest.fixture
async def models() -> AsyncIterator[list[OpenAIChatModel]]:
    """Models to close after the test (an unclosed client leaks its pooled sockets)."""
    opened: list[OpenAIChatModel] = []
    yield opened
    for model in opened:
        await model.aclose()


@pytest.fixture
def start_model(nursery: trio.Nursery, models: list[OpenAIChatModel]) -> StartModel:
    async def start(
        *, stream: bool = False, max_retries: int = 0, **settings: Any
    ) -> tuple[FakeOpenAI, OpenAIChatModel]:
        fake = await nursery.start(serve_fake_openai)
        model = OpenAIChatModel(fake.settings(**settings), stream=stream, max_retries=max_retries)
        models.append(model)
        return fake, model

    return start


StartModel = Callable[..., Awaitable[tuple[FakeOpenAI, OpenAIChatModel]]]


# ---------------------------------------------------------------- OpenAIChatModel


@pytest.mark.parametrize("stream", [False, True])
async def test_text_and_tool_calls(start_model: StartModel, stream: bool) -> None:
    fake, model = await start_model(stream=stream, temperature=0.2)
    fake.push(
        Reply("我来看看", tool_calls=[("guess", {"number": 15}), ("check_answer", {})]),
        Reply("一段比较长的话，会被切成很多个小块发过来。"),
    )
    tools = [GUESS, CHECK]

    first = await model.complete(MESSAGES, tools)
    second = await model.complete(MESSAGES, [])

    assert first == ModelReply(
        "我来看看",
        (ToolCall("call_0", "guess", '{"number": 15}'), ToolCall("call_1", "check_answer", "{}")),
    )
    assert second == ModelReply("一段比较长的话，会被切成很多个小块发过来。", ())
    assert model.name == "fake-model"
    request = fake.requests[0]
    assert (request["model"], request["messages"], request["tools"]) == ("fake-model", MESSAGES, tools)
    assert request["temperature"] == 0.2
    assert bool(request.get("stream")) is stream
    assert "tools" not in fake.requests[1]  # omitted, not []


async def test_http_500_is_model_error_without_retry(start_model: StartModel) -> None:
    fake, model = await start_model()
    fake.push(Fail(500))
    with pytest.raises(ModelError, match="HTTP 500: fake failure"):
        await model.complete(MESSAGES, [])
    assert len(fake.requests) == 1


async def test_default_client_retries_once(
    start_model: StartModel, models: list[OpenAIChatModel]
) -> None:
    fake, _ = await start_model()
    model = OpenAIChatModel(fake.settings())  # max_retries=1
    models.append(model)
    fake.push(Fail(503, headers=(("retry-after-ms", "10"),)), Fail(503, headers=(("retry-after-ms", "10"),)))
    with pytest.raises(ModelError, match="HTTP 503"):
        await model.complete(MESSAGES, [])
    assert len(fake.requests) == 2
    fake.push(Fail(500, headers=(("retry-after-ms", "10"),)))
    assert (await model.complete(MESSAGES, [])).text == "好的。"


async def test_error_messages_never_contain_the_key(start_model: StartModel) -> None:
    fake, model = await start_model()
    fake.push(Fail(401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [])
    assert "HTTP 401" in str(info.value)
    assert SECRET not in str(info.value)
    assert SECRET not in repr(model)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        (Garbage(b"<html>not json</html>"), "malformed|no choices|failed"),
        (Garbage(json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode()), "no choices|malformed"),
        (Fail(502, body=b"<html>bad gateway</html>", headers=NO_RETRY), "HTTP 502"),
    ],
)
async def test_garbage_is_model_error(start_model: StartModel, stream: bool, item: Any, fragment: str) -> None:
    fake, model = await start_model(stream=stream)
    fake.push(item)
    with pytest.raises(ModelError, match=fragment):
        await model.complete(MESSAGES, [])


async def test_tool_call_arguments_must_be_strings(start_model: StartModel) -> None:
    fake, model = await start_model()
    call = {"id": "c1", "type": "function", "function": {"name": "guess", "arguments": {"number": 1}}}
    body = {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
    }  # fmt: skip
    fake.push(Garbage(json.dumps(body).encode()))
    with pytest.raises(ModelError, match="not a string"):
        await model.complete(MESSAGES, [GUESS])


async def test_hang_times_out_as_model_error(start_model: StartModel) -> None:
    fake, model = await start_model(timeout=0.2)
    fake.push(Hang())
    start = trio.current_time()
    with pytest.raises(ModelError, match=r"timed out after 0\.2s"):
        await model.complete(MESSAGES, [])
    assert trio.current_time() - start < 2


async def test_cancellation_propagates(start_model: StartModel) -> None:
    fake, model = await start_model(timeout=30)
    fake.push(Hang())
    with trio.move_on_after(0.2) as scope:
        await model.complete(MESSAGES, [])
    assert scope.cancelled_caught  # Cancelled was not turned into ModelError
    # The client is still usable after an abandoned request.
    assert (await model.complete(MESSAGES, [])).text == "好的。"


async def test_cancellation_propagates_while_streaming(start_model: StartModel) -> None:
    fake, model = await start_model(stream=True, timeout=30)
    fake.push(Reply("慢", delay=30))
    with trio.move_on_after(0.2) as scope:
        await model.complete(MESSAGES, [])
    assert scope.cancelled_caught


async def test_unreachable_server_is_model_error() -> None:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    await listener.aclose()  # nothing listens there now
    model = OpenAIChatModel(
        LLMSettings(base_url=f"http://127.0.0.1:{port}/v1", api_key=SecretStr(SECRET), timeout=2), max_retries=0
    )
    with pytest.raises(ModelError, match="cannot reach the model"):
        await model.complete(MESSAGES, [])
    await model.aclose()


async def test_models_with_the_same_endpoint_share_one_client(start_model: StartModel) -> None:
    fake, first = await start_model()
    second = OpenAIChatModel(fake.settings(model="other", temperature=0.0), max_retries=0)
    assert second._client is first._client  # one TLS context and one pool per endpoint
    fake.push(Reply("一"), Reply("二"))
    await second.complete(MESSAGES, [])
    await second.aclose()  # the other model still uses the client
    assert (await first.complete(MESSAGES, [])).text == "二"
    assert [r["model"] for r in fake.requests] == ["other", "fake-model"]


async def test_the_last_model_closes_the_shared_client(start_model: StartModel) -> None:
    fake, first = await start_model()
    client = first._client
    await first.aclose()
    assert client.is_closed()
    again = OpenAIChatModel(fake.settings(), max_retries=0)
    assert again._client is not client  # a fresh one after the last user left
    await again.aclose()


async def test_make_model() -> None:
    assert isinstance(make_model(LLMSettings()), OfflineModel)
    model = make_model(LLMSettings(base_url="http://127.0.0.1:9/v1", model="qwen"), stream=True)
    assert isinstance(model, OpenAIChatModel)
    assert model.name == "qwen"
    await model.aclose()
    assert offline_notice() == "未配置大模型（LLM_BASE_URL / LLM_API_KEY），使用离线模型。"


# ---------------------------------------------------------------- OfflineModel


def user(event: str, text: str = "", result: dict[str, Any] | None = None) -> dict[str, Any]:
    content: dict[str, Any] = {"event": event, "user_text": text}
    if result is not None:
        content["result"] = result
    return {"role": "user", "content": json.dumps(content, ensure_ascii=False)}


def after_tools(*results: dict[str, Any], name: str = "check_answer") -> list[dict[str, Any]]:
    """The round so far: a message, one assistant tool call per result, the results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "规则"}, user("message", "水")]
    for index, result in enumerate(results):
        call = {"id": f"c{index}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"c{index}", "content": json.dumps(result, ensure_ascii=False)}
        )
    return messages


def decide(messages: list[dict[str, Any]], tools: list[dict[str, Any]] = TOOLS) -> ModelReply:
    return OfflineModel().decide(messages, tools)


def call_of(reply: ModelReply) -> tuple[str, dict[str, Any]] | None:
    if not reply.tool_calls:
        return None
    assert len(reply.tool_calls) == 1
    assert reply.text == ""
    return reply.tool_calls[0].name, json.loads(reply.tool_calls[0].arguments)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我猜十五", ("guess", {"number": 15})),
        ("二十", ("guess", {"number": 20})),
        ("三", ("guess", {"number": 3})),
        ("是 7 吗", ("guess", {"number": 7})),
        ("一百零五吧", ("guess", {"number": 105})),
        ("两", ("guess", {"number": 2})),
        ("给我一个提示", ("get_hint", {})),
        ("提示一下", ("get_hint", {})),
        ("Hint please", ("get_hint", {})),
        ("我放弃了", ("reveal", {})),
        ("不猜了", ("reveal", {})),
        ("答案是什么", ("reveal", {})),
        ("再来一局", ("new_question", {})),
        ("换一题", ("new_question", {})),
        ("下一个", ("new_question", {})),
        ("是水吗", ("check_answer", {})),
    ],
)
def test_message_picks_one_tool(text: str, expected: tuple[str, dict[str, Any]]) -> None:
    assert call_of(decide([{"role": "system", "content": "规则"}, user("message", text)])) == expected


def test_number_without_integer_tool_reads_the_words() -> None:
    assert call_of(decide([user("message", "十五")], [CHECK, HINT])) == ("check_answer", {})


def test_message_without_matching_tool_gets_a_generic_line() -> None:
    reply = decide([user("message", "今天天气不错")], [SAY, HINT])
    assert reply.tool_calls == ()
    assert reply.text
    assert decide([user("message", "  ")]).text == "抱歉，我没听清，请再说一次。"


def test_say_is_never_chosen() -> None:
    assert call_of(decide([user("message", "说点什么")], [SAY])) is None


def test_plain_text_user_message_counts_as_message() -> None:
    assert call_of(decide([{"role": "user", "content": "我猜5"}])) == ("guess", {"number": 5})


def test_start_with_result_speaks_must_say_verbatim() -> None:
    question = "什么东西越洗越脏？"
    result = {"question": question, "must_say": [question]}
    reply = decide([user("start", "玩猜谜语", result)])
    assert reply == ModelReply(question, ())


def test_start_with_result_speaks_speech_fields() -> None:
    reply = decide([user("start", "开始", {"汤面": "一个人走进酒吧。", "score": 0})])
    assert reply.text == "一个人走进酒吧。"
    assert not reply.tool_calls


def test_start_without_result_calls_a_start_tool() -> None:
    assert call_of(decide([user("start", "来玩")])) == ("new_question", {})


def test_start_without_result_or_start_tool_greets() -> None:
    reply = decide([user("start", "来玩")], [SAY, GUESS, CHECK])
    assert reply.text
    assert not reply.tool_calls


def test_end_never_calls_tools() -> None:
    reply = decide([user("end", "结束游戏", {"score": 1, "answer": "水", "must_say": ["答案是水。"]})])
    assert reply == ModelReply("好的，下次再玩。答案是水。", ())  # a goodbye, then the must_say
    bye = decide([user("end", "结束游戏")])
    assert bye.text
    assert not bye.tool_calls


@pytest.mark.parametrize(
    ("results", "text"),
    [
        (({"correct": False},), "不对哦，再想想。"),
        (({"correct": True, "answer": "水"},), "答对了！"),  # never reads out 'answer'
        (({"hint": "和洗澡有关"},), "和洗澡有关。"),
        (({"message": "好，换一题", "question": "什么越长越短？"},), "好，换一题。什么越长越短？"),
        (({"question": "Q？", "message": "好"},), "好。Q？"),  # key order is SPEECH_KEYS, not dict order
        (({"correct": True, "must_say": ["是水！"], "message": "答对了"},), "答对了。是水！"),
        (({"must_say": ["青蛙"], "message": "谜底是青蛙。要不要再来一个？"},), "谜底是青蛙。要不要再来一个？"),
        (({"must_say": "水"},), "水。"),
        (({},), "好的。"),
        (({"error": "TypeError: boom"},), "抱歉，我没听清，请再说一次。"),
        (({"error": "x"}, {"hint": "提示二"}), "提示二。"),
        (({"score": 3, "answer": "秘密答案"},), "好的。"),
    ],
)
def test_tool_results_are_spoken(results: tuple[dict[str, Any], ...], text: str) -> None:
    assert decide(after_tools(*results)) == ModelReply(text, ())


def test_say_results_are_ignored() -> None:
    messages = after_tools({"ok": True}, name="say")
    assert decide(messages).text == "好的。"


def test_unreadable_tool_output_is_an_error() -> None:
    messages = after_tools({})
    messages[-1]["content"] = "not json"
    assert decide(messages).text == "抱歉，我没听清，请再说一次。"


def test_text_is_never_longer_than_500() -> None:
    reply = decide(after_tools({"must_say": ["长" * 800]}))
    assert 0 < len(reply.text) <= 500
    reply = decide([user("start", "", {"message": "话" * 300, "question": "题" * 300})])
    assert 0 < len(reply.text) <= 500


async def test_a_round_never_exceeds_three_tool_calls() -> None:
    """Drive a ReAct loop like SkillAgent's; the offline model speaks within 3 tool calls."""
    model = OfflineModel()
    for opening in (user("message", "我猜十五"), user("start"), user("message", "是水吗")):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "规则"}, opening]
        calls = 0
        while True:
            reply = await model.complete(messages, TOOLS)
            if not reply.tool_calls:
                break
            calls += len(reply.tool_calls)
            assert calls <= MAX_TOOL_CALLS
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.tool_calls]})  # fmt: skip
            for c in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": c.id, "content": '{"correct": false}'})
        assert reply.text
    assert calls == 1


def test_decisions_are_deterministic_and_ids_unique() -> None:
    history = after_tools({"correct": False})
    history.append({"role": "assistant", "content": "不对哦，再想想。"})
    history.append(user("message", "我猜十五"))
    first, second = decide(history), decide(list(history))
    assert first == second
    assert first.tool_calls[0].id == "offline_2"  # one call earlier in the conversation


def test_history_before_the_last_user_message_is_not_spoken() -> None:
    history = after_tools({"hint": "旧提示"})
    history.append({"role": "assistant", "content": "旧提示。"})
    history.append(user("message", "今天天气不错"))
    reply = decide(history, [SAY])
    assert "旧提示" not in reply.text


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("十五", 15), ("二十", 20), ("三", 3), ("一百零五", 105), ("两千零二十四", 2024),
        ("三万五千", 35000), ("一二三", None), ("零", 0), ("我猜 42 吧", 42), ("第十一", 11),
        ("给我一个提示", None), ("提示一下", None), ("换一题", None), ("再来一局", None),
        ("是水吗", None), ("一下一个十二", 12),
    ],
)  # fmt: skip
def test_parse_number(text: str, number: int | None) -> None:
    assert parse_number(text) == number


@pytest.mark.parametrize("cls", [OpenAIChatModel, OfflineModel, OfflineMainModel])
def test_every_model_is_closed_through_the_protocol(cls: type[Any]) -> None:
    assert "aclose" in ChatModel.__dict__
    assert inspect.iscoroutinefunction(cls.aclose)
