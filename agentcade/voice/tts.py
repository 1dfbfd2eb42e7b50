"""Speech synthesis: one contract, three kinds of provider.

``Synthesizer.synthesize(text)`` returns the whole sentence as 24 kHz mono s16le PCM
(what ``robot.audio.play_pcm`` takes). Failures raise :class:`~agentcade.core.errors.VoiceError`
(short, no secrets); cancellation is never caught (espeak-ng is killed, an HTTP request
abandoned, an SDK call cancelled on its loop).

* :class:`EspeakSynthesizer` — espeak-ng, offline, Mandarin (voice ``cmn``); its 22050 Hz
  WAV is resampled in pure Python (:mod:`agentcade.voice.pcm`).
* :class:`OpenAISynthesizer` — an OpenAI-compatible ``POST /v1/audio/speech`` with
  ``response_format=pcm`` (24 kHz s16le); a server that answers WAV is read and resampled.
* :class:`SdkSynthesizer` — any TTS of ``watcherobot.voice`` through the bridge.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Protocol

import trio

from agentcade.core.errors import VoiceError
from agentcade.voice.asr import _safe, openai_client, sdk_model_config
from agentcade.voice.bridge import AsyncioBridge
from agentcade.voice.config import ServiceSettings
from agentcade.voice.pcm import WavError, read_wav, resample

if TYPE_CHECKING:
    from watcherobot.voice.contracts import TTS
    from watcherobot.voice.providers import ProviderRegistry

__all__ = [
    "RATE",
    "EspeakSynthesizer",
    "OpenAISynthesizer",
    "SdkSynthesizer",
    "Synthesizer",
    "espeak_program",
    "make_synthesizer",
]

RATE = 24000


class Synthesizer(Protocol):
    name: str

    async def synthesize(self, text: str) -> bytes:
        """``text`` spoken, as 24 kHz mono s16le PCM."""
        ...

    async def aclose(self) -> None: ...


def espeak_program() -> str | None:
    """espeak-ng (or the older espeak) on PATH."""
    return shutil.which("espeak-ng") or shutil.which("espeak")


class EspeakSynthesizer:
    """espeak-ng, offline. ``rate`` is the output rate (the microphone scenario uses 16 kHz)."""

    def __init__(self, voice: str = "cmn", *, rate: int = RATE, speed: int | None = None) -> None:
        program = espeak_program()
        if program is None:
            raise VoiceError("espeak-ng is not installed (Debian/Ubuntu: apt-get install espeak-ng; "
                             "macOS: brew install espeak-ng; Windows: the espeak-ng installer)")
        self.name = f"espeak:{voice or 'cmn'}"
        self._command = [program, "-v", voice or "cmn", "--stdout"]
        if speed is not None:
            self._command += ["-s", str(speed)]
        self._rate = rate

    async def synthesize(self, text: str) -> bytes:
        try:
            done = await trio.run_process(
                [*self._command, "--stdin"], stdin=text.encode("utf-8"),
                capture_stdout=True, capture_stderr=True, check=False,
            )
        except OSError as exc:
            raise VoiceError(f"espeak-ng did not start: {exc.strerror or exc}") from exc
        if done.returncode != 0:
            raise VoiceError(f"espeak-ng failed (exit {done.returncode})")
        try:
            pcm, rate = read_wav(done.stdout)
        except WavError as exc:
            raise VoiceError(f"espeak-ng gave no audio: {exc}") from exc
        return await trio.to_thread.run_sync(resample, pcm, rate, self._rate)

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class OpenAISynthesizer:
    """``/v1/audio/speech`` with ``response_format=pcm``."""

    def __init__(self, service: ServiceSettings) -> None:
        self.name = f"openai:{service.model or 'tts-1'}"
        self._service = service
        self._client = openai_client(service)

    async def synthesize(self, text: str) -> bytes:
        try:
            response = await self._client.audio.speech.create(
                model=self._service.model or "tts-1",
                voice=self._service.voice or "alloy",
                input=text,
                response_format="pcm",
            )
            data = response.content
        except Exception as exc:
            raise VoiceError(f"TTS {self.name} failed: {_safe(exc)}") from exc
        if data[:4] == b"RIFF":  # some local servers ignore response_format
            try:
                pcm, rate = read_wav(data)
            except WavError as exc:
                raise VoiceError(f"TTS {self.name} sent an unreadable WAV: {exc}") from exc
            return resample(pcm, rate, RATE)
        return data[: len(data) - len(data) % 2]

    async def aclose(self) -> None:
        await self._client.close()


class SdkSynthesizer:
    """An SDK TTS (``CloudTTS`` or a registered one) behind the bridge."""

    def __init__(self, tts: TTS, bridge: AsyncioBridge, *, name: str = "sdk") -> None:
        self.name = name
        self._tts = tts
        self._bridge = bridge

    async def synthesize(self, text: str) -> bytes:
        tts = self._tts

        async def collect() -> list[tuple[bytes, int, int]]:
            return [(c.data, c.sample_rate, c.channels) async for c in tts.synthesize(text)]

        try:
            chunks = await self._bridge.run(collect)
        except VoiceError:
            raise
        except Exception as exc:
            raise VoiceError(f"TTS {self.name} failed: {_safe(exc)}") from exc
        out = bytearray()
        for data, rate, channels in chunks:
            if channels != 1:
                raise VoiceError(f"TTS {self.name} sent {channels} channels, not mono")
            out += resample(data, rate, RATE)
        return bytes(out)

    async def aclose(self) -> None:
        try:
            await self._bridge.run(self._tts.close)
        except Exception:  # noqa: BLE001 - closing is best effort
            return


def make_synthesizer(
    service: ServiceSettings,
    *,
    bridge: AsyncioBridge | None = None,
    registry: ProviderRegistry | None = None,
) -> Synthesizer:
    """The synthesizer ``service`` names (``espeak``, ``openai`` or an SDK provider).

    Raises:
        VoiceError: espeak-ng missing, an unknown SDK provider, no bridge for one.
    """
    if service.provider in ("", "espeak"):
        return EspeakSynthesizer(service.voice or "cmn")
    if service.provider == "openai":
        return OpenAISynthesizer(service)
    if bridge is None:
        raise VoiceError("SDK TTS providers need an asyncio bridge")
    from watcherobot.voice.providers import ProviderRegistry

    providers = registry or ProviderRegistry.builtin()
    try:
        tts = providers.create_tts(sdk_model_config(service))  # type: ignore[arg-type]
    except Exception as exc:
        raise VoiceError(f"TTS {service.provider}: {_safe(exc)}") from exc
    return SdkSynthesizer(tts, bridge, name=service.provider)


