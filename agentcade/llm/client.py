"""``OpenAIChatModel``: an OpenAI-compatible model over ``openai.AsyncOpenAI``, and the pool.

The client runs its HTTP on anyio, which runs natively under trio, so no asyncio bridge
is involved. The client must be closed with ``aclose()``: its garbage-collection fallback
only works under asyncio. Models with the same endpoint share one client (``_CLIENTS``).

Time budget. ``LLMSettings.timeout`` (``LLM_TIMEOUT``) bounds one ``complete`` call as a
whole, retries and their waits included: a hanging model costs the family that long, never
twice that. Retries are ours, not the openai client's (it runs with ``max_retries=0``),
because its policy obeys a server's ``Retry-After`` for up to two minutes, in silence; here
a server-directed wait is capped at :data:`RETRY_AFTER_CAP` and only taken when the
budget has room for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import openai
import trio
from openai.types.chat import ChatCompletion

from agentcade.core.settings import LLMSettings
from agentcade.core.tls import client_context
from agentcade.llm.base import ModelError, ModelReply, TextSink, ToolCall, _short
from agentcade.llm.stream import _StreamAssembler

__all__ = ["MAX_TOKENS", "RETRY_AFTER_CAP", "OpenAIChatModel"]

RETRY_AFTER_CAP = 2.0
"""The longest wait before a retry, whatever ``Retry-After`` says (seconds)."""
RETRY_DELAY = 0.5
"""The wait before a retry when the server names none."""
_RETRY_STATUSES = frozenset({408, 409, 429})

MAX_TOKENS = 400
"""Completion tokens per model call. Speech is one to three sentences (120 characters,
about as many tokens in Chinese) and tool-call arguments are short; without a cap a weak
model ran away for 7,070 tokens, minutes of silence. 400 leaves room for a tool call plus
a sentence and for models that think aloud a little."""


class OpenAIChatModel:
    """An OpenAI-compatible chat-completions model, over ``openai.AsyncOpenAI``.

    Args:
        settings: where and what to call. ``settings.timeout`` bounds each ``complete``
            call, retries included.
        stream: request ``stream=True`` and assemble text and tool-call deltas (lower time
            to first byte through buffering proxies; the result is the same ``ModelReply``).
        max_retries: retries on connection errors, 408/409/429/5xx (not when the server
            sends ``x-should-retry: false``), each after ``Retry-After`` capped at
            :data:`RETRY_AFTER_CAP`, while the budget lasts.
        response_format: structured output (``{"type": "json_schema", ...}``) asked for
            calls without tools. An endpoint that refuses it (HTTP 400) is asked again
            without it, and not asked for it any more: the caller checks the text itself.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        stream: bool = False,
        max_retries: int = 1,
        response_format: dict[str, Any] | None = None,
    ) -> None:
        self.name = settings.model
        self._response_format = response_format
        self._settings = settings
        self._stream = stream
        self._secret = settings.api_key.get_secret_value() if settings.api_key else ""
        self._retries = max_retries
        self._lease: _Lease | None = _CLIENTS.acquire(
            (settings.base_url or "", self._secret, settings.timeout, 0)
        )
        self._client = self._lease.client

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.name!r}, base_url={self._settings.base_url!r})"

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        """Call ``chat.completions.create`` (plus retries), within ``settings.timeout``.

        Raises:
            ModelError: any failure, including an unusable response and the budget running
                out. ``trio.Cancelled`` propagates (the HTTP request is abandoned with it).
        """
        return await self._request(messages, tools, None)

    async def complete_streaming(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: TextSink
    ) -> ModelReply:
        """Like ``complete``, always streamed, awaiting ``on_text`` with each text delta."""
        return await self._request(messages, tools, on_text)

    async def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], on_text: TextSink | None
    ) -> ModelReply:
        kwargs: dict[str, Any] = {
            "model": self._settings.model,
            "messages": messages,
            "temperature": self._settings.temperature,
            "max_tokens": MAX_TOKENS,
        }
        if tools:
            kwargs["tools"] = tools
        elif self._response_format is not None:
            kwargs["response_format"] = self._response_format
        budget = self._settings.timeout
        heard = False

        async def tracked(text: str) -> None:
            nonlocal heard
            heard = True
            assert on_text is not None
            await on_text(text)  # _complete_streamed wraps its failures (_deliver)

        with trio.move_on_after(budget) as scope:
            attempt = 0
            while True:
                try:
                    return await self._attempt(kwargs, None if on_text is None else tracked)
                except ModelError as exc:
                    if "response_format" in kwargs and _refused_request(exc.__cause__):
                        self._response_format = None  # not supported here: plain text from now on
                        del kwargs["response_format"]
                        continue
                    delay = _retry_delay(exc.__cause__)
                    left = scope.deadline - trio.current_time()
                    # A retry after streamed text reached the caller would say it twice.
                    if attempt >= self._retries or delay is None or delay >= left or heard:
                        raise
                attempt += 1
                await trio.sleep(delay)
        raise ModelError(f"model request timed out after {budget:g}s")

    async def _attempt(self, kwargs: dict[str, Any], on_text: TextSink | None) -> ModelReply:
        # The one boundary of this layer: every foreign failure becomes ModelError here.
        # trio.Cancelled is a BaseException and passes through. An exception raised by
        # on_text (the caller's own code) is not the model's failure: it passes through.
        try:
            if self._stream or on_text is not None:
                return await self._complete_streamed(kwargs, on_text)
            # Posted as it is: the messages are plain JSON already, and the typed
            # ``create`` re-walks every message and tool schema (about 25 ms a call with a
            # long history, measured in tests/bench/bench_turn.py) before sending.
            completion = await self._client.post(
                "/chat/completions", cast_to=ChatCompletion, body=kwargs
            )
            return _reply_from_completion(completion)
        except ModelError:
            raise
        except _SinkFailed as exc:  # the caller's own failure, unwrapped
            raise exc.original from None
        except Exception as exc:
            raise ModelError(self._describe(exc)) from exc

    async def _complete_streamed(self, kwargs: dict[str, Any], on_text: TextSink | None) -> ModelReply:
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
                    if on_text is not None and (new := assembler.take_text()):
                        await _deliver(on_text, new)
            if data:
                assembler.feed("\n".join(data))
        if on_text is not None and (new := assembler.take_text()):
            await _deliver(on_text, new)
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


class _SinkFailed(Exception):
    """Carries an exception raised by ``on_text`` past the boundary: not the model's."""

    def __init__(self, original: Exception) -> None:
        super().__init__(str(original))
        self.original = original


async def _deliver(on_text: TextSink, text: str) -> None:
    try:
        await on_text(text)
    except Exception as exc:
        raise _SinkFailed(exc) from exc


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
                # openai's own defaults (limits, redirects), TLS through the OS trust store.
                http_client=openai.DefaultAsyncHttpxClient(verify=client_context(), timeout=timeout),
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

def _refused_request(cause: BaseException | None) -> bool:
    """The endpoint refused the request as such (HTTP 400/422): an option it does not know."""
    return isinstance(cause, openai.APIStatusError) and cause.status_code in (400, 422)


def _retry_delay(cause: BaseException | None) -> float | None:
    """How long to wait before retrying after ``cause``; None: do not retry."""
    if isinstance(cause, openai.APITimeoutError):
        return None  # the attempt used the whole budget
    if isinstance(cause, openai.APIConnectionError):
        return RETRY_DELAY
    if not isinstance(cause, openai.APIStatusError):
        return None
    headers = cause.response.headers
    if headers.get("x-should-retry") == "false":
        return None
    if cause.status_code not in _RETRY_STATUSES and cause.status_code < 500:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            wanted = float(headers.get(name, "")) * scale
        except ValueError:
            continue
        if math.isfinite(wanted) and wanted >= 0:
            return min(wanted, RETRY_AFTER_CAP)
    return RETRY_DELAY


def _status_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(message, str):
            return message
        return json.dumps(body, ensure_ascii=False)
    return str(body) if body is not None else exc.message


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

