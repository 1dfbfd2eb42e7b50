"""Speech synthesis: one contract, three kinds of provider.

``Synthesizer.synthesize(text)`` returns the whole sentence as 24 kHz mono s16le PCM
(what ``robot.audio.play_pcm`` takes). Failures raise :class:`~agentcade.core.errors.VoiceError`
(short, no secrets); cancellation is never caught (espeak-ng is killed, an HTTP request
abandoned, an SDK call cancelled on its loop).

* :class:`NeuralSynthesizer` — the default: a neural Mandarin voice (FastSpeech2 +
  MB-MelGAN on LiteRT, :mod:`agentcade.voice.neural`), offline, natural; its models are
  found or fetched once (:mod:`agentcade.voice.models`) and loaded in a worker thread by
  :func:`open_synthesizer`, which falls back to espeak-ng with one line where they cannot
  load (no LiteRT wheel for Intel macOS, a broken download).
* :class:`EspeakSynthesizer` — espeak-ng, offline, Mandarin (``TTS_PROVIDER=espeak``). The default voice is
  ``cmn-latn-pinyin`` fed with tone-numbered pinyin from pypinyin: Debian's ``cmn`` voice
  reads each character as pinyin spelled in *English* ("猜" -> ``(en)keI55w'055n``), which a
  Chinese ear (and Whisper) hears as strings of digits; the pinyin voice speaks Mandarin
  phonemes, and pypinyin's phrase dictionary and tone sandhi read polyphones right where
  espeak-ng's own reading errs (重新 chong2, 长大 zhang3, 一个 yi2). Its 22050 Hz WAV is
  decoded and resampled through PyAV (:mod:`agentcade.voice.pcm`) in a worker thread.
* :class:`OpenAISynthesizer` — an OpenAI-compatible ``POST /v1/audio/speech`` with
  ``response_format=pcm`` (24 kHz s16le); a server that answers WAV is read and resampled.
* :class:`SdkSynthesizer` — any TTS of ``watcherobot.voice`` through the bridge.
"""

from __future__ import annotations

import os
import shutil
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import trio
from pypinyin import Style, lazy_pinyin

from agentcade.core.errors import VoiceError
from agentcade.voice.asr import _safe, openai_client, sdk_model_config
from agentcade.voice.bridge import AsyncioBridge
from agentcade.voice.config import ServiceSettings
from agentcade.voice.pcm import Resampler, WavError, decode_audio, resample
from agentcade.voice.phones import clauses

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from watcherobot.voice.contracts import TTS
    from watcherobot.voice.providers import ProviderRegistry

    from agentcade.voice.neural import NeuralVoice, Said

__all__ = [
    "DEFAULT_VOICE",
    "ESPEAK_MISSING",
    "RATE",
    "EspeakSynthesizer",
    "NeuralSynthesizer",
    "OpenAISynthesizer",
    "SdkSynthesizer",
    "Synthesizer",
    "espeak_program",
    "make_synthesizer",
    "open_synthesizer",
    "to_pinyin",
]

RATE = 24000


class Synthesizer(Protocol):
    name: str

    async def synthesize(self, text: str) -> bytes:
        """``text`` spoken, as 24 kHz mono s16le PCM."""
        ...

    async def aclose(self) -> None: ...


DEFAULT_VOICE = "cmn-latn-pinyin"
"""espeak-ng's Mandarin voice that reads pinyin as Mandarin (``cmn`` reads it as English)."""

ESPEAK_MISSING = (
    "没有找到 espeak-ng（离线普通话语音）：Debian/Ubuntu 运行 apt-get install espeak-ng；"
    "macOS 运行 brew install espeak-ng；Windows 从 github.com/espeak-ng/espeak-ng/releases "
    "安装 espeak-ng.msi；或者在设置页面换一个语音合成服务（TTS_PROVIDER）"
)


def _install_locations() -> list[Path]:
    """Where espeak-ng's installers put it when it is not on PATH."""
    if sys.platform == "win32":
        roots = [os.environ.get(v) for v in ("ProgramFiles", "ProgramW6432", "ProgramFiles(x86)")]
        found = [Path(r) / "eSpeak NG" / "espeak-ng.exe" for r in roots if r]
        return [*found, Path("C:/Program Files/eSpeak NG/espeak-ng.exe")]
    # Homebrew (Apple silicon, then Intel), MacPorts; a source build's default prefix.
    return [Path(p) / "espeak-ng" for p in ("/opt/homebrew/bin", "/usr/local/bin", "/opt/local/bin")]


def espeak_program() -> str | None:
    """espeak-ng (or the older espeak): on PATH, else where its installers put it."""
    on_path = shutil.which("espeak-ng") or shutil.which("espeak")
    if on_path:
        return on_path
    return next((str(p) for p in _install_locations() if p.is_file()), None)


def to_pinyin(text: str) -> str:
    """Chinese characters as tone-numbered pinyin (``猜数字`` -> ``cai1 shu4 zi4``).

    Tone sandhi is applied (``一个`` -> ``yi2 ge4``), the neutral tone is ``5``, and what is
    not Chinese (digits, punctuation, Latin words) passes through, so espeak-ng still reads
    numbers in Mandarin and pauses at punctuation.
    """
    syllables = lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True, tone_sandhi=True)
    return " ".join(s.strip() for s in syllables if s.strip())


class EspeakSynthesizer:
    """espeak-ng, offline. ``rate`` is the output rate (the microphone scenario uses 16 kHz).

    With a ``-latn-pinyin`` voice (the default) Chinese text is spoken from its pinyin
    (:func:`to_pinyin`); any other voice gets the text as it is.
    """

    def __init__(self, voice: str = DEFAULT_VOICE, *, rate: int = RATE, speed: int | None = None) -> None:
        program = espeak_program()
        if program is None:
            raise VoiceError(ESPEAK_MISSING)
        voice = voice or DEFAULT_VOICE
        self.name = f"espeak:{voice}"
        self.voice = voice
        self._pinyin = voice.lower().endswith("-latn-pinyin")
        self._command = [program, "-v", voice, "--stdout"]
        if speed is not None:
            self._command += ["-s", str(speed)]
        self._rate = rate

    def spoken_form(self, text: str) -> str:
        """What espeak-ng is given for ``text`` (its pinyin with a pinyin voice)."""
        return to_pinyin(text) if self._pinyin else text

    async def synthesize(self, text: str) -> bytes:
        spoken = await trio.to_thread.run_sync(self.spoken_form, text) if self._pinyin else text
        try:
            done = await trio.run_process(
                [*self._command, "--stdin"], stdin=spoken.encode("utf-8"),
                capture_stdout=True, capture_stderr=True, check=False,
            )
        except OSError as exc:
            raise VoiceError(f"espeak-ng did not start: {exc.strerror or exc}") from exc
        if done.returncode != 0:
            raise VoiceError(f"espeak-ng failed (exit {done.returncode})")
        return await trio.to_thread.run_sync(self._decode, done.stdout)

    async def phonemes(self, text: str) -> str:
        """espeak-ng's phonemes for ``text`` (``-x``), without sound: milliseconds.

        A language switch shows as ``(en)``, ``(zh)`` …: the text is read by another
        language's rules. Debian's ``cmn`` voice reads 猜 as ``(en)keI55w'055n`` (English
        letters and tone digits); the default voice gives Mandarin phonemes.

        Raises:
            VoiceError: espeak-ng did not run.
        """
        spoken = self.spoken_form(text)
        command = [self._command[0], "-q", "-x", "-v", self.voice, "--stdin"]
        try:
            done = await trio.run_process(command, stdin=spoken.encode("utf-8"),
                                          capture_stdout=True, capture_stderr=True, check=False)
        except OSError as exc:
            raise VoiceError(f"espeak-ng did not start: {exc.strerror or exc}") from exc
        if done.returncode != 0:
            raise VoiceError(f"espeak-ng failed (exit {done.returncode})")
        return done.stdout.decode("utf-8", "replace").strip()

    def _decode(self, wav: bytes) -> bytes:
        try:
            pcm, rate = decode_audio(wav)
        except WavError as exc:
            raise VoiceError(f"espeak-ng gave no audio: {exc}") from exc
        return resample(pcm, rate, self._rate)

    async def aclose(self) -> None:
        await trio.lowlevel.checkpoint()


class NeuralSynthesizer:
    """The neural voice (see :mod:`agentcade.voice.neural`); make it with :meth:`load`.

    One sentence at a time in a worker thread (the interpreters are not thread-safe);
    ``rate`` is the output rate (the simulated child speaks into a 16 kHz microphone).
    Cancelling :meth:`synthesize` waits for the sentence in progress (a tenth of a second).
    """

    name = "neural:baker"

    def __init__(self, voice: NeuralVoice, *, rate: int = RATE) -> None:
        self._voice = voice
        self._rate = rate
        self._lock = trio.Lock()

    @classmethod
    async def load(cls, *, rate: int = RATE, pitch: float = 1.0) -> NeuralSynthesizer:
        """Find (or fetch once) the models and load them, off the event loop.

        Raises:
            VoiceError: LiteRT or the models cannot be loaded (the message says why).
        """
        from agentcade.voice.models import ModelMissing, baker_voice_dir
        from agentcade.voice.neural import NeuralVoice

        try:
            folder = await trio.to_thread.run_sync(baker_voice_dir)
        except ModelMissing as exc:
            raise VoiceError(str(exc)) from exc
        voice = await trio.to_thread.run_sync(partial(NeuralVoice, folder, pitch=pitch))
        return cls(voice, rate=rate)

    @property
    def said(self) -> Said:
        """The clauses already synthesised (:class:`~agentcade.voice.neural.Said`)."""
        return self._voice.said

    async def synthesize(self, text: str, *, pause_after: bool = False) -> bytes:
        """``pause_after``: keep the last clause's pause (a first clause said on its own)."""
        async with self._lock:
            pcm = await trio.to_thread.run_sync(
                partial(self._voice.synthesize, text, pause_after=pause_after))
        if self._rate != RATE and pcm:
            return await trio.to_thread.run_sync(resample, pcm, RATE, self._rate)
        return pcm

    async def prepare(self, texts: Sequence[str]) -> None:
        """Synthesise ahead the clauses of ``texts`` not said yet (``said`` keeps them), one
        clause at a time: a sentence to be said now waits for one clause at most. Nothing
        while ``said`` keeps nothing."""
        if not self.said.enabled:
            await trio.lowlevel.checkpoint()
            return
        for text in texts:
            for clause in clauses(text):
                if clause.text in self.said:
                    continue
                async with self._lock:
                    await trio.to_thread.run_sync(self._voice.prepare, clause.text)

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
        if data[:4] == b"RIFF" or data[:3] == b"ID3" or data[:4] == b"OggS":
            # Some servers ignore response_format and send a WAV, MP3 or Ogg file.
            return await trio.to_thread.run_sync(self._decode, data)
        return data[: len(data) - len(data) % 2]

    def _decode(self, data: bytes) -> bytes:
        try:
            pcm, rate = decode_audio(data)
        except WavError as exc:
            raise VoiceError(f"TTS {self.name} sent audio that cannot be read: {exc}") from exc
        return resample(pcm, rate, RATE)

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
        for _data, _rate, channels in chunks:
            if channels != 1:
                raise VoiceError(f"TTS {self.name} sent {channels} channels, not mono")
        return await trio.to_thread.run_sync(_join_resampled, chunks)

    async def aclose(self) -> None:
        try:
            await self._bridge.run(self._tts.close)
        except Exception:  # noqa: BLE001 - closing is best effort
            return


def _join_resampled(chunks: list[tuple[bytes, int, int]]) -> bytes:
    """One clip at 24 kHz from a provider's chunks: one resampler while the rate holds."""
    out = bytearray()
    resampler: Resampler | None = None
    for data, rate, _channels in chunks:
        if resampler is None or resampler.source_rate != rate:
            if resampler is not None:
                out += resampler.flush()
            resampler = Resampler(rate, RATE)
        out += resampler.feed(data)
    if resampler is not None:
        out += resampler.flush()
    return bytes(out)


async def open_synthesizer(
    service: ServiceSettings,
    *,
    bridge: AsyncioBridge | None = None,
    warn: Callable[[str], None] | None = None,
) -> Synthesizer:
    """The synthesizer ``service`` names, the neural voice loaded off the event loop.

    ``neural`` (the default) falls back to espeak-ng where the neural voice cannot load,
    after ``warn`` is given one line that says why.

    Raises:
        VoiceError: as :func:`make_synthesizer`; for ``neural``, only when espeak-ng is
            missing too.
    """
    if service.provider not in ("", "neural"):
        return make_synthesizer(service, bridge=bridge)
    try:
        return await NeuralSynthesizer.load()
    except VoiceError as exc:
        if warn is not None:
            warn(f"离线神经语音不能用（{exc}），改用 espeak-ng 的声音")
        return EspeakSynthesizer(DEFAULT_VOICE)


def make_synthesizer(
    service: ServiceSettings,
    *,
    bridge: AsyncioBridge | None = None,
    registry: ProviderRegistry | None = None,
) -> Synthesizer:
    """The synthesizer ``service`` names (``espeak``, ``openai`` or an SDK provider; the
    neural voice needs loading: :func:`open_synthesizer`).

    Raises:
        VoiceError: espeak-ng missing, an unknown SDK provider, no bridge for one.
    """
    if service.provider == "neural":
        raise VoiceError("the neural voice is loaded by open_synthesizer, not made here")
    if service.provider in ("", "espeak"):
        return EspeakSynthesizer(service.voice or DEFAULT_VOICE)
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


