"""Speech recognition: one contract, three kinds of provider.

``Recognizer.transcribe(audio)`` takes the utterance as an async iterable of 16 kHz mono
s16le chunks (the listener sends them as they are heard, the pre-roll first) and returns
the final text ("" when nothing was understood). Failures raise
:class:`~agentcade.core.errors.VoiceError` with a short message and no secrets; cancellation
is never caught.

* :class:`OpenAIRecognizer` — an OpenAI-compatible ``POST /v1/audio/transcriptions``
  (OpenAI, a local Whisper server): the utterance as one WAV file.
* :class:`SdkRecognizer` — any ASR of ``watcherobot.voice`` (``ProviderRegistry``:
  volcengine, aliyun, deepgram, or one registered by an Application); its asyncio code
  runs on an :class:`~agentcade.voice.bridge.AsyncioBridge`, audio streamed as it comes.
* :func:`make_recognizer` picks one from the settings (``ASR_PROVIDER``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import openai

from agentcade.core.errors import VoiceError
from agentcade.core.tls import client_context
from agentcade.voice.bridge import AsyncioBridge
from agentcade.voice.config import ServiceSettings
from agentcade.voice.pcm import to_wav
from agentcade.voice.tuning import MIC_RATE

if TYPE_CHECKING:
    from watcherobot.voice.contracts import ASR
    from watcherobot.voice.providers import ProviderRegistry

__all__ = [
    "Heard",
    "OpenAIRecognizer",
    "Recognizer",
    "SdkRecognizer",
    "Speculative",
    "make_recognizer",
    "sdk_model_config",
]

RATE = MIC_RATE
TIMEOUT = 30.0


class Recognizer(Protocol):
    name: str

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        """The text said in ``audio`` (16 kHz mono s16le chunks)."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Speculative(Protocol):
    """A recogniser that recognises a whole clip at once, fast enough to start on a pause
    (the embedded one): the listener asks it while the silence window runs."""

    async def recognize(self, pcm: bytes, voiced_ms: float) -> str: ...


@dataclass(frozen=True)
class Heard:
    """One recognised utterance. Times are wall-clock (``time.time()``)."""

    text: str
    audio_seconds: float
    voiced_seconds: float
    speech_end: float
    asr_final: float
    early: bool = False
    """Ended before the silence window: the text could be acted on at once."""

    @property
    def asr_ms(self) -> int:
        return round((self.asr_final - self.speech_end) * 1000)


def _safe(exc: BaseException) -> str:
    """A failure in one line without response bodies (which may echo credentials)."""
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    if isinstance(exc, openai.APIConnectionError):
        return "cannot connect"
    name = type(exc).__name__
    module = type(exc).__module__
    if module.startswith("watcherobot.voice"):  # the SDK's errors are safe by contract
        return f"{name}: {exc}"
    return name


def openai_client(service: ServiceSettings, *, timeout: float = TIMEOUT) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` for an audio endpoint (a local server needs no key); https is
    verified with the OS trust store, as for the model (``agentcade.core.tls``)."""
    key = service.api_key.get_secret_value() if service.api_key is not None else "not-needed"
    return openai.AsyncOpenAI(
        base_url=service.base_url or None, api_key=key, timeout=timeout, max_retries=1,
        http_client=openai.DefaultAsyncHttpxClient(verify=client_context(), timeout=timeout),
    )


class OpenAIRecognizer:
    """``/v1/audio/transcriptions``: the whole utterance as ``speech.wav``."""

    def __init__(self, service: ServiceSettings) -> None:
        self.name = f"openai:{service.model or 'whisper-1'}"
        self._service = service
        self._client = openai_client(service)

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        pcm = b"".join([chunk async for chunk in audio])
        if not pcm:
            return ""
        try:
            result = await self._client.audio.transcriptions.create(
                model=self._service.model or "whisper-1",
                file=("speech.wav", to_wav(pcm, RATE), "audio/wav"),
                language=self._service.language or openai.omit,
            )
        except Exception as exc:
            raise VoiceError(f"ASR {self.name} failed: {_safe(exc)}") from exc
        return str(result.text).strip()

    async def aclose(self) -> None:
        await self._client.close()


def sdk_model_config(service: ServiceSettings, *, language: str = "") -> object:
    """The SDK's ``ModelConfig`` for a service (the key becomes ``credentials['api_key']``)."""
    from watcherobot.voice.configuration import ModelConfig

    credentials = {"api_key": service.api_key.get_secret_value()} if service.api_key else {}
    return ModelConfig(
        provider=service.provider, model=service.model, base_url=service.base_url,
        language=service.language or language, voice_id=service.voice, credentials=credentials,
    )


class SdkRecognizer:
    """An SDK ASR behind the bridge; chunks cross to asyncio as they arrive."""

    def __init__(self, asr: ASR, bridge: AsyncioBridge, *, name: str = "sdk") -> None:
        self.name = name
        self._asr = asr
        self._bridge = bridge

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        import trio

        bridge = self._bridge
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        asr = self._asr

        async def chunks() -> AsyncIterator[bytes]:
            while (chunk := await queue.get()) is not None:
                yield chunk

        async def consume() -> str:
            finals: list[str] = []
            last = ""
            async for transcript in asr.transcribe(chunks()):
                if transcript.final:
                    finals.append(transcript.text)
                else:
                    last = transcript.text
            return "".join(finals) or last

        async def pump() -> None:
            async for chunk in audio:
                bridge.call_soon(queue.put_nowait, chunk)
            bridge.call_soon(queue.put_nowait, None)

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pump)
                text = await bridge.run(consume)
                nursery.cancel_scope.cancel()
        except VoiceError:
            raise
        except Exception as exc:
            raise VoiceError(f"ASR {self.name} failed: {_safe(exc)}") from exc
        return text.strip()

    async def aclose(self) -> None:
        close = self._asr.close
        try:
            await self._bridge.run(close)
        except Exception:  # noqa: BLE001 - closing is best effort
            return


def make_recognizer(
    service: ServiceSettings,
    *,
    bridge: AsyncioBridge | None = None,
    registry: ProviderRegistry | None = None,
) -> Recognizer:
    """The recognizer ``service`` names (``openai`` or an SDK provider).

    Raises:
        VoiceError: an SDK provider without a bridge, or one the registry does not know.
    """
    if service.provider == "openai":
        return OpenAIRecognizer(service)
    if bridge is None:
        raise VoiceError("SDK ASR providers need an asyncio bridge")
    from watcherobot.voice.providers import ProviderRegistry

    providers = registry or ProviderRegistry.builtin()
    try:
        asr = providers.create_asr(sdk_model_config(service))  # type: ignore[arg-type]
    except Exception as exc:
        raise VoiceError(f"ASR {service.provider}: {_safe(exc)}") from exc
    return SdkRecognizer(asr, bridge, name=service.provider)
