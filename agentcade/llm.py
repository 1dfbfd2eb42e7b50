"""Chat models: the ``ChatModel`` protocol, the OpenAI-compatible client and the offline model.

Messages and tool schemas are in OpenAI chat-completions format. A model answers one
request with a ``ModelReply``: text, tool calls, or both.

Error tree::

    ModelError          any failure of the model: HTTP status, connection, timeout,
                        garbage body, no choices, malformed tool calls. Short message,
                        never the API key.

Cancellation (``trio.Cancelled``) is never caught: cancelling a turn cancels the request.

``OpenAIChatModel`` uses ``openai.AsyncOpenAI``. The client runs its HTTP on anyio, which
runs natively under trio, so no asyncio bridge is involved. The client must be closed with
``aclose()``: its garbage-collection fallback only works under asyncio.

``OfflineModel`` is a deterministic stand-in used when no model is configured (and by
``check`` and CI): it picks at most one tool per user input from the tool schemas by generic
rules and otherwise repeats what tools and hooks returned. It never invents content.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import openai
import trio

from agentcade.judge import parse_number
from agentcade.settings import LLMSettings

__all__ = [
    "ChatModel",
    "ModelError",
    "ModelReply",
    "OfflineModel",
    "OpenAIChatModel",
    "ToolCall",
    "make_model",
    "offline_notice",
]

MAX_TEXT = 500  # the protocol's limit on speakable text (agentcade.protocol.MAX_TEXT)


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is JSON text (maybe invalid)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """The model's answer to one request."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()


class ModelError(Exception):
    """The model failed (HTTP, timeout, garbage). The message is short and has no secrets."""


class ChatModel(Protocol):
    """What ``SkillAgent`` needs from a model."""

    name: str

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Answer ``messages`` with ``tools`` available.

        Raises:
            ModelError: any failure of the model. Cancellation propagates.
        """
        ...


def offline_notice() -> str:
    """One line for the CLI when the offline model is used."""
    return "未配置大模型（LLM_BASE_URL / LLM_API_KEY），使用离线模型。"


def make_model(settings: LLMSettings, *, stream: bool = False) -> ChatModel:
    """``OfflineModel`` when ``settings.offline``, else ``OpenAIChatModel``."""
    if settings.offline:
        return OfflineModel()
    return OpenAIChatModel(settings, stream=stream)


# --------------------------------------------------------------------------- OpenAI


class OpenAIChatModel:
    """An OpenAI-compatible chat-completions model, over ``openai.AsyncOpenAI``.

    Args:
        settings: where and what to call. ``settings.timeout`` bounds each HTTP attempt.
        stream: request ``stream=True`` and assemble text and tool-call deltas (lower time
            to first byte through buffering proxies; the result is the same ``ModelReply``).
        max_retries: retries of the openai client on connection errors, timeouts, 408/409/
            429/5xx (with its own short backoff).
    """

    def __init__(self, settings: LLMSettings, *, stream: bool = False, max_retries: int = 1) -> None:
        self.name = settings.model
        self._settings = settings
        self._stream = stream
        self._secret = settings.api_key.get_secret_value() if settings.api_key else ""
        self._lease: _Lease | None = _CLIENTS.acquire(
            (settings.base_url or "", self._secret, settings.timeout, max_retries)
        )
        self._client = self._lease.client

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.name!r}, base_url={self._settings.base_url!r})"

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Call ``chat.completions.create`` once (plus the client's retries).

        Raises:
            ModelError: any failure, including an unusable response. ``trio.Cancelled``
                propagates (the HTTP request is abandoned with it).
        """
        kwargs: dict[str, Any] = {
            "model": self._settings.model,
            "messages": messages,
            "temperature": self._settings.temperature,
        }
        if tools:
            kwargs["tools"] = tools
        # The one boundary of this layer: every foreign failure becomes ModelError here.
        # trio.Cancelled is a BaseException and passes through.
        try:
            if self._stream:
                return await self._complete_streamed(kwargs)
            completion = await self._client.chat.completions.create(**kwargs)
            return _reply_from_completion(completion)
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(self._describe(exc)) from exc

    async def _complete_streamed(self, kwargs: dict[str, Any]) -> ModelReply:
        # We parse the SSE ourselves instead of iterating openai's AsyncStream: that one
        # breaks out of its generators at [DONE], and under trio every abandoned async
        # generator is finalised with a ResourceWarning (asyncio finalises them silently).
        # Reading the body to its end exhausts every generator in the chain.
        assembler = _StreamAssembler()
        create = self._client.chat.completions.with_streaming_response.create
        async with create(**kwargs, stream=True) as response:
            data: list[str] = []
            async for line in response.iter_lines():
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif not line and data:  # a blank line ends one event
                    assembler.feed("\n".join(data))
                    data = []
            if data:
                assembler.feed("\n".join(data))
        return assembler.reply()

    def _describe(self, exc: Exception) -> str:
        if isinstance(exc, openai.APITimeoutError):
            message = f"model request timed out after {self._settings.timeout:g}s"
        elif isinstance(exc, openai.APIStatusError):
            message = f"model returned HTTP {exc.status_code}: {_short(_status_detail(exc))}"
        elif isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            message = f"cannot reach the model: {_short(str(cause) if cause else str(exc))}"
        elif isinstance(exc, ValueError):  # json.JSONDecodeError, pydantic validation
            message = f"model returned a malformed response ({type(exc).__name__})"
        else:
            message = f"model request failed: {type(exc).__name__}: {_short(str(exc))}"
        if self._secret and len(self._secret) >= 4:
            message = message.replace(self._secret, "***")
        return message

    async def aclose(self) -> None:
        """Give the shared HTTP client back; the last model using it closes it."""
        lease, self._lease = self._lease, None
        if lease is not None:
            await _CLIENTS.release(lease)


@dataclass(eq=False)
class _Lease:
    key: tuple[object, ...]
    client: openai.AsyncOpenAI
    users: int = 0


class _SharedClients:
    """One ``openai.AsyncOpenAI`` per connection settings and trio run, shared by models.

    Building a client costs about 20 ms of CPU and 0.8 MiB (its TLS context loads the CA
    bundle, even for http), and every session of every game makes a model: per-session
    clients made a served game cost 870 KiB per idle session and fed the garbage
    collector pauses that stretched ``end`` latency (tests/bench). Model name and
    temperature are per call, so sessions with the same endpoint can share one client —
    and one connection pool. The key includes the trio run, because the client's
    connections belong to the event loop that opened them.
    """

    def __init__(self) -> None:
        self._leases: dict[tuple[object, ...], _Lease] = {}

    def acquire(self, settings_key: tuple[str, str, float, int]) -> _Lease:
        try:
            run: object = trio.lowlevel.current_trio_token()
        except RuntimeError:  # outside trio: a client of its own
            run = object()
        key = (run, *settings_key)
        lease = self._leases.get(key)
        if lease is None:
            base_url, secret, timeout, retries = settings_key
            client = openai.AsyncOpenAI(
                base_url=base_url or None,
                # Local OpenAI-compatible servers often need no key, but the client insists.
                api_key=secret or "no-key",
                timeout=timeout,
                max_retries=retries,
            )
            lease = self._leases[key] = _Lease(key, client)
        lease.users += 1
        return lease

    async def release(self, lease: _Lease) -> None:
        lease.users -= 1
        if lease.users == 0:
            if self._leases.get(lease.key) is lease:
                del self._leases[lease.key]
            await lease.client.close()


_CLIENTS = _SharedClients()


class _StreamAssembler:
    """Collects streamed chat-completion chunks (dicts) into one ``ModelReply``."""

    def __init__(self) -> None:
        self.chunks = 0
        self.done = False
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}

    def feed(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self.done = True
            return
        if self.done:
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            raise ModelError("model returned a malformed stream chunk") from None
        if not isinstance(chunk, dict):
            raise ModelError("model returned a malformed stream chunk")
        if chunk.get("error"):
            error = chunk["error"]
            detail = error.get("message") if isinstance(error, dict) else error
            raise ModelError(f"model stream failed: {_short(str(detail))}")
        self.chunks += 1
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content is not None and not isinstance(content, str):
                raise ModelError("model returned non-text content")
            if content:
                self.text.append(content)
            for part in delta.get("tool_calls") or ():
                if not isinstance(part, dict):
                    raise ModelError("model returned a malformed tool call")
                index = part.get("index", 0)
                call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": []})
                if part.get("id"):
                    call["id"] = str(part["id"])
                function = part.get("function") or {}
                if function.get("name"):
                    call["name"] += str(function["name"])
                arguments = function.get("arguments")
                if arguments is not None:
                    if not isinstance(arguments, str):
                        raise ModelError("model returned tool-call arguments that are not a string")
                    call["arguments"].append(arguments)

    def reply(self) -> ModelReply:
        if not self.chunks:  # e.g. a body without SSE "data:" lines
            raise ModelError("model returned an empty or malformed stream")
        tool_calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call["name"]:
                raise ModelError("model returned a tool call without a name")
            tool_calls.append(
                ToolCall(
                    id=call["id"] or f"call_{index}",
                    name=call["name"],
                    arguments="".join(call["arguments"]),
                )
            )
        return ModelReply(text="".join(self.text), tool_calls=tuple(tool_calls))


def _status_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return error["message"]
        return json.dumps(body, ensure_ascii=False)
    return str(body) if body is not None else exc.message


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reply_from_completion(completion: Any) -> ModelReply:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ModelError("model returned no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise ModelError("model returned a choice without a message")
    content = message.content
    if content is not None and not isinstance(content, str):
        raise ModelError("model returned non-text content")
    tool_calls = []
    for index, call in enumerate(message.tool_calls or ()):
        function = getattr(call, "function", None)
        if function is None or not isinstance(getattr(function, "name", None), str) or not function.name:
            raise ModelError("model returned a tool call that is not a function call")
        if not isinstance(function.arguments, str):
            raise ModelError("model returned tool-call arguments that are not a string")
        tool_calls.append(ToolCall(id=call.id or f"call_{index}", name=function.name, arguments=function.arguments))
    return ModelReply(text=content or "", tool_calls=tuple(tool_calls))


# --------------------------------------------------------------------------- offline

# Theory of operation. A round is everything after the last user message. The offline
# model looks at the round and at the tool schemas only:
#
#   round has tool results -> speak them (must_say verbatim, else speech-like fields)
#   user event start       -> speak the hook result; without one, call a "start" tool
#   user event end         -> speak the hook result; never calls tools
#   user event message     -> one tool by the first rule that matches:
#                             number + tool with one required integer parameter,
#                             hint / give-up / next intent + matching tool,
#                             a tool that reads the user's own words (原话);
#                             else a generic line
#
# So a round has at most one tool call, well under MAX_TOOL_CALLS. The model only ever
# repeats strings that tools or hooks returned, plus a few fixed generic lines.

MAX_TOOL_CALLS = 3
"""Tool results per round after which the offline model always speaks."""

SPEECH_KEYS = (
    "feedback", "message", "reply", "say", "text", "summary", "result_text",
    "hint", "clue", "question", "riddle", "puzzle", "prompt", "story",
    "提示", "谜面", "题目", "汤面", "汤底", "回答",
)  # fmt: skip
"""Result fields the offline model reads aloud, in this order."""

_LINE_OK = "好的。"
_LINE_SORRY = "抱歉，我没听清，请再说一次。"
_LINE_GREET = "你好，我们开始吧！"
_LINE_START = "好的，我们开始吧。"
_LINE_BYE = "好的，下次再玩。"
_LINE_LISTEN = "嗯，我在听，你可以接着说。"
_LINE_RIGHT = "答对了！"
_LINE_WRONG = "不对哦，再想想。"

_START_WORDS = ("start", "begin", "new", "开始", "开局", "出题", "新的一", "新题")
_HINT_WORDS = ("提示", "hint", "线索", "clue")
_GIVE_UP_WORDS = ("放弃", "不猜了", "答案是什么", "公布", "告诉我答案", "揭晓", "认输")
_GIVE_UP_TOOL_WORDS = ("放弃", "公布", "揭晓", "give up", "give_up", "giveup", "reveal", "surrender")
_NEXT_WORDS = ("下一", "再来", "换一", "next", "另一", "新的")
_NEXT_TOOL_WORDS = ("next", "new", "下一", "换一", "再来", "新的", "新题", "出题")
_OWN_WORDS = ("原话",)


class OfflineModel:
    """Deterministic, network-free ``ChatModel`` (see the rules above).

    Input conventions (``SkillAgent``): user messages are JSON
    ``{"event": "start|message|end", "user_text": "...", "result": {...}}``; tool results
    are ``{"role": "tool", "tool_call_id": ..., "content": JSON}``.
    """

    name = "offline"

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Decide (``decide``), after one checkpoint like any async call."""
        await trio.lowlevel.checkpoint()
        return self.decide(messages, tools)

    def decide(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """The pure decision: same messages and tools, same reply."""
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        round_messages = messages[last_user + 1 :]
        results = _tool_results(round_messages, messages)
        if results or round_messages:
            # After tool results (or anything else following the user input): speak.
            return ModelReply(_clip(_speak_results(results)))
        if last_user < 0:
            return ModelReply(_LINE_GREET)
        event = _parse_event(messages[last_user].get("content"))
        kind = event["event"]
        specs = [spec for spec in (_ToolSpec.of(tool) for tool in tools) if spec is not None]
        if kind in ("start", "end"):
            if event.get("result") is not None:
                generic = _LINE_START if kind == "start" else _LINE_BYE
                return ModelReply(_clip(_speak([event["result"]], generic)))
            if kind == "start" and (tool := _first(specs, _START_WORDS, free=True)):
                return self._call(messages, tool.name, {})
            return ModelReply(_LINE_GREET if kind == "start" else _LINE_BYE)
        return self._on_message(messages, specs, str(event.get("user_text") or ""))

    def _on_message(self, messages: list[dict[str, Any]], specs: list[_ToolSpec], text: str) -> ModelReply:
        text = text.strip()
        if not text:
            return ModelReply(_LINE_SORRY)
        number = parse_number(text)
        if number is not None:
            for spec in specs:
                if spec.integer_param is not None:
                    return self._call(messages, spec.name, {spec.integer_param: number})
        lowered = text.lower()
        for user_words, tool_words in (
            (_HINT_WORDS, _HINT_WORDS),
            (_GIVE_UP_WORDS, _GIVE_UP_TOOL_WORDS),
            (_NEXT_WORDS, _NEXT_TOOL_WORDS),
        ):
            if any(word in lowered for word in user_words) and (tool := _first(specs, tool_words, free=True)):
                return self._call(messages, tool.name, {})
        for spec in specs:
            if spec.free and any(word in spec.description for word in _OWN_WORDS):
                return self._call(messages, spec.name, {})
        return ModelReply(_LINE_LISTEN)

    @staticmethod
    def _call(messages: list[dict[str, Any]], name: str, arguments: dict[str, Any]) -> ModelReply:
        made = sum(len(m.get("tool_calls") or ()) for m in messages if m.get("role") == "assistant")
        call = ToolCall(
            id=f"offline_{made + 1}", name=name, arguments=json.dumps(arguments, ensure_ascii=False)
        )
        return ModelReply(text="", tool_calls=(call,))


@dataclass(frozen=True)
class _ToolSpec:
    name: str
    description: str
    free: bool  # no required parameters
    integer_param: str | None  # the only required parameter, and it is an integer

    @classmethod
    def of(cls, tool: Mapping[str, Any]) -> _ToolSpec | None:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return None
        name = function["name"]
        if name == "say":  # SkillAgent's built-in "say something now" tool
            return None
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = list(parameters.get("required") or [])
        integer_param = None
        if len(required) == 1 and _is_integer(properties.get(required[0], {})):
            integer_param = required[0]
        return cls(name, str(function.get("description") or ""), not required, integer_param)

    def mentions(self, words: Iterable[str]) -> bool:
        haystack = f"{self.name.lower().replace('_', ' ')} {self.name.lower()} {self.description.lower()}"
        return any(word in haystack for word in words)


def _is_integer(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") == "integer":
        return True
    return any(_is_integer(option) for option in schema.get("anyOf", ()) if isinstance(option, Mapping))


def _first(specs: list[_ToolSpec], words: Iterable[str], *, free: bool) -> _ToolSpec | None:
    words = tuple(words)
    # Names first: a tool named get_hint beats one whose description mentions hints.
    for spec in specs:
        if (spec.free or not free) and any(w in spec.name.lower() for w in words):
            return spec
    for spec in specs:
        if (spec.free or not free) and spec.mentions(words):
            return spec
    return None


def _parse_event(content: object) -> dict[str, Any]:
    text = _text_of(content)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("event") in ("start", "message", "end"):
        return data
    return {"event": "message", "user_text": text}


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def _tool_results(round_messages: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[Any]:
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or ()
        if isinstance(call, Mapping)
    }
    results = []
    for message in round_messages:
        if message.get("role") != "tool" or names.get(message.get("tool_call_id")) == "say":
            continue
        text = _text_of(message.get("content"))
        try:
            results.append(json.loads(text))
        except ValueError:
            results.append({"error": text})  # tool output we cannot read: treat as a failure
    return results[-MAX_TOOL_CALLS:] if len(results) > MAX_TOOL_CALLS else results


def speak_results(results: list[Any]) -> str:
    """Plain speech for tool results: their speech fields and ``must_say`` texts.

    The offline model answers with it; ``SkillAgent`` falls back to it when the model
    fails after tools already acted, so the player still hears what happened.
    """
    return _clip(_speak_results(results))


def _speak_results(results: list[Any]) -> str:
    if results and all(isinstance(r, Mapping) and r.get("error") for r in results):
        return _LINE_SORRY
    return _speak([r for r in results if not (isinstance(r, Mapping) and r.get("error"))], _LINE_OK)


def _speak(results: list[Any], generic: str) -> str:
    """What to say for hook/tool results: the speech fields, then any ``must_say`` text
    they do not already contain (verbatim), else the generic line before it."""
    must: list[str] = []
    parts: list[str] = []
    for result in results:
        if isinstance(result, str):
            parts.append(result)
        elif isinstance(result, Mapping):
            value = result.get("must_say")
            must.extend([value] if isinstance(value, str) else [v for v in value or () if isinstance(v, str)])
            if isinstance(result.get("correct"), bool) and not _has_speech(result):
                parts.append(_LINE_RIGHT if result["correct"] else _LINE_WRONG)
            for key in SPEECH_KEYS:
                value = result.get(key)
                if isinstance(value, str):
                    parts.append(value)
                elif isinstance(value, list):
                    parts.extend(v for v in value if isinstance(v, str))
    spoken = "".join(_sentence(p) for p in dict.fromkeys(p.strip() for p in parts) if p)
    missing = [m for m in dict.fromkeys(m.strip() for m in must) if m and m not in spoken]
    if not spoken and not missing:
        return generic
    if not spoken and generic != _LINE_OK:
        spoken = generic
    return spoken + "".join(_sentence(m) for m in missing)


def _has_speech(result: Mapping[str, Any]) -> bool:
    return any(isinstance(result.get(key), str | list) and result.get(key) for key in SPEECH_KEYS)


def _sentence(text: str) -> str:
    return text if text[-1] in "。！？!?.…~～」”\"'）)" else text + "。"


def _clip(text: str) -> str:
    text = text.strip() or _LINE_OK
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


