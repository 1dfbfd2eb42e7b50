"""The voice settings of ``agentcade run``: ``settings.yaml`` beside this file, read with the
same loader and precedence as a game's settings (default < ``<user config dir>/.env`` <
environment).

``ASR_PROVIDER`` defaults to ``local``, the embedded recogniser (Whisper base on this
computer, the ``voice`` extra); ``scripted`` (the simulated robot only) takes each line of a
scenario as what was said. Keys are
``SecretStr`` and never printed; :meth:`VoiceSettings.secrets` lists them for the trace's
scrubber.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from agentcade.core.settings import (
    SettingsError,
    SettingSpec,
    load_settings_spec,
    resolve_values,
    user_config_dir,
)
from agentcade.voice.tuning import TUNING, Tuning, setting_default
from agentcade.voice.vad import DETECTORS

__all__ = [
    "ASR_PROVIDERS",
    "BARGE_INS",
    "SETTINGS_FILE",
    "TTS_PROVIDERS",
    "BargeIn",
    "ServiceSettings",
    "VoiceSettings",
    "load_voice_settings",
    "voice_settings_spec",
]

SETTINGS_FILE = Path(__file__).with_name("settings.yaml")
ASR_PROVIDERS = ("local", "openai", "volcengine", "aliyun", "deepgram")
SCRIPTED = "scripted"
"""The test-only recogniser of a scenario on the simulated robot (not shown on the pages)."""
TTS_PROVIDERS = ("neural", "espeak", "openai", "volcengine", "deepgram", "cartesia", "elevenlabs", "minimaxi")


@dataclass(frozen=True)
class ServiceSettings:
    """One speech service (ASR or TTS)."""

    provider: str = ""
    base_url: str = ""
    api_key: SecretStr | None = field(default=None, repr=False)
    model: str = ""
    language: str = ""
    voice: str = ""


BargeIn = Literal["voice", "touch", "off"]
"""How the family can talk over the robot: ``voice`` (the default: speaking stops it; full
duplex with echo cancellation, and a touch on its back works too; figures in
tests/bench/bench_barge.py and tests/bench/bench_barge_game.py), ``touch`` (only a touch on
its back; half duplex: it does not listen while it speaks), ``off``."""
BARGE_INS: tuple[BargeIn, ...] = ("voice", "touch", "off")


@dataclass(frozen=True)
class VoiceSettings:
    barge_in: BargeIn = "voice"
    asr: ServiceSettings = field(default_factory=lambda: ServiceSettings(provider="local"))
    tts: ServiceSettings = field(default_factory=lambda: ServiceSettings(provider="neural"))
    vad: Tuning = TUNING
    """The listening path's knobs, with the voice settings (``VAD_*``) applied."""

    @property
    def missing_asr(self) -> str | None:
        """The one line to print when ``run`` cannot hear anyone, or None."""
        if self.asr.provider:
            return None
        return ("没有配置语音识别：请设置 ASR_PROVIDER（openai 加 ASR_BASE_URL，比如本机 Whisper 服务的 "
                "http://127.0.0.1:8000/v1；或 volcengine、aliyun、deepgram 加 ASR_API_KEY），"
                f"写在 {user_config_dir() / '.env'} 或环境变量里")

    def secrets(self) -> list[str]:
        return [s.api_key.get_secret_value() for s in (self.asr, self.tts) if s.api_key is not None]


def _number(values: Mapping[str, str], key: str, default: float, *, low: float) -> float:
    raw = values.get(key, "").strip()
    if not raw:
        return default
    try:
        number = float(raw)
    except ValueError:
        raise SettingsError(f"{key} 应该是数字，现在是 {raw!r}") from None
    if not number >= low:
        raise SettingsError(f"{key} 应该不小于 {low:g}，现在是 {raw!r}")
    return number


def _service(values: Mapping[str, str], prefix: str, known: tuple[str, ...]) -> ServiceSettings:
    provider = values.get(f"{prefix}_PROVIDER", "").strip().lower()
    if provider and provider not in known:
        raise SettingsError(f"{prefix}_PROVIDER 不认识 {provider!r}，可以用：{'、'.join(known)}")
    key = values.get(f"{prefix}_API_KEY", "").strip()
    return ServiceSettings(
        provider=provider,
        base_url=values.get(f"{prefix}_BASE_URL", "").strip(),
        api_key=SecretStr(key) if key else None,
        model=values.get(f"{prefix}_MODEL", "").strip(),
        language=values.get(f"{prefix}_LANGUAGE", "").strip(),
        voice=values.get(f"{prefix}_VOICE", "").strip(),
    )


def voice_settings_spec() -> list[SettingSpec]:
    """``settings.yaml``'s items, the knobs' defaults taken from the tuning table (each
    default is written once, in :mod:`agentcade.voice.tuning`; the settings page shows it).

    Raises:
        SettingsError: the file does not load.
    """
    specs = load_settings_spec(SETTINGS_FILE)
    return [spec.model_copy(update={"default": setting_default(spec.key)})
            if setting_default(spec.key) is not None else spec for spec in specs]


def load_voice_settings(
    environ: Mapping[str, str] = os.environ, *, env_files: list[Path] | None = None
) -> VoiceSettings:
    """Resolve the voice settings.

    Raises:
        SettingsError: an unknown provider or a number that is not one; the message names
            the key.
    """
    files = [user_config_dir(environ) / ".env"] if env_files is None else env_files
    values = resolve_values(
        voice_settings_spec(), game_dir=None, environ=environ, extra_env_files=files
    )
    detector = values.get("VAD_DETECTOR", "").strip().lower() or TUNING.detector
    if detector not in DETECTORS:
        raise SettingsError(f"VAD_DETECTOR 不认识 {detector!r}，可以用：{'、'.join(DETECTORS)}")
    vad = replace(
        TUNING,
        detector="silero" if detector == "silero" else "loudness",
        threshold=_number(values, "VAD_THRESHOLD", TUNING.threshold, low=1),
        silence_ms=int(_number(values, "VAD_SILENCE_MS", TUNING.silence_ms, low=60)),
        pre_roll_ms=int(_number(values, "VAD_PRE_ROLL_MS", TUNING.pre_roll_ms, low=0)),
        max_ms=int(_number(values, "VAD_MAX_MS", TUNING.max_ms, low=500)),
    )
    barge = values.get("BARGE_IN", "").strip().lower() or "voice"
    if barge not in BARGE_INS:
        raise SettingsError(f"BARGE_IN 不认识 {barge!r}，可以用：{'、'.join(BARGE_INS)}")
    asr = _service(values, "ASR", (*ASR_PROVIDERS, SCRIPTED))
    if not asr.provider:
        asr = ServiceSettings(**{**asr.__dict__, "provider": "local"})
    tts = _service(values, "TTS", TTS_PROVIDERS)
    if not tts.provider:
        tts = ServiceSettings(**{**tts.__dict__, "provider": "neural"})
    barge_in: BargeIn = "voice" if barge == "voice" else "touch" if barge == "touch" else "off"
    return VoiceSettings(barge_in=barge_in, asr=asr, tts=tts, vad=vad)
