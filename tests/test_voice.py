"""The voice layer's parts: detection, PCM, sentences, settings, ASR/TTS adapters, the bridge."""

from __future__ import annotations

import asyncio
import math
import struct
import subprocess
import sys
import time
from array import array
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

import pytest
import trio
import trio.lowlevel
from pydantic import SecretStr
from trio.testing import wait_all_tasks_blocked

from agentcade.core.errors import VoiceError
from agentcade.core.settings import SettingsError
from agentcade.sim.room import RoomMixer, parse_room
from agentcade.testing.fake_openai import FakeOpenAI
from agentcade.voice.asr import OpenAIRecognizer, SdkRecognizer, make_recognizer
from agentcade.voice.bridge import AsyncioBridge
from agentcade.voice.config import ServiceSettings, load_voice_settings
from agentcade.voice.echo import EchoCanceller
from agentcade.voice.listener import Listener, MicrophoneClosed
from agentcade.voice.pcm import (
    Resampler,
    WavError,
    decode_audio,
    leading_silence,
    resample,
    resume_point,
    rms,
    to_wav,
)
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.sentences import split_sentences
from agentcade.voice.tts import (
    EspeakSynthesizer,
    OpenAISynthesizer,
    SdkSynthesizer,
    make_synthesizer,
)
from agentcade.voice.tuning import TUNING, Tuning
from agentcade.voice.vad import (
    LoudnessDetector,
    RobotVoice,
    SileroDetector,
    make_detector,
)
from agentcade.wiring.voice import parse_over
from tests.needs import need_program

if TYPE_CHECKING:
    import numpy as np

FRAME = 1920  # 60 ms at 16 kHz


def tone(seconds: float, *, rate: int = 16000, amplitude: int = 3000) -> bytes:
    return b"".join(
        struct.pack("<h", int(amplitude * math.sin(2 * math.pi * 300 * i / rate)))
        for i in range(int(seconds * rate))
    )


def frames(pcm: bytes) -> list[bytes]:
    return [pcm[i:i + FRAME] for i in range(0, len(pcm), FRAME)]


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        await trio.lowlevel.checkpoint()
        yield part


# -- voice detection ---------------------------------------------------------------------


def test_speech_starts_with_the_pre_roll_and_ends_after_800_ms_of_silence() -> None:
    detector = LoudnessDetector()
    steps = [detector.feed(f) for f in frames(bytes(FRAME * 10) + tone(0.6) + bytes(FRAME * 20))]
    kinds = [s.kind for s in steps]
    start = kinds.index("start")
    assert len(steps[start].audio) == FRAME * 5 + FRAME  # 300 ms of pre-roll, then the frame
    end = kinds.index("end")
    silent_frames = end - (start + 10) + 1
    assert silent_frames * 60 >= 800 > (silent_frames - 1) * 60
    assert kinds[end + 1:] == ["quiet"] * (len(kinds) - end - 1)


def test_quiet_noise_below_the_threshold_never_starts_speech() -> None:
    detector = LoudnessDetector()
    assert all(detector.feed(f).kind == "quiet" for f in frames(tone(2.0, amplitude=500)))


def test_an_utterance_ends_at_the_maximum_length_even_without_silence() -> None:
    detector = LoudnessDetector(Tuning(max_ms=1200))
    kinds = [detector.feed(f).kind for f in frames(tone(3.0))]
    assert kinds.index("end") == 19  # the 20th frame makes 1200 ms


def test_the_threshold_is_a_setting() -> None:
    loud = LoudnessDetector(Tuning(threshold=5000))
    assert all(loud.feed(f).kind == "quiet" for f in frames(tone(1.0)))


def _espeak_line(text: str) -> bytes:
    need_program("espeak-ng", package="espeak-ng")
    return trio.run(EspeakSynthesizer(rate=16000).synthesize, text)


def _in_room(voice: bytes, spec: str, seconds_after: float = 2.0) -> list[bytes]:
    mixer = RoomMixer(parse_room(spec))
    pcm = bytes(FRAME * 10) + voice + bytes(int(seconds_after * 32000))
    return [mixer.frame(f, FRAME // 2) for f in frames(pcm)]


def test_silero_finds_and_ends_an_utterance_over_a_fan_where_loudness_never_ends() -> None:
    heard = _in_room(_espeak_line("我猜五十"), "noise=700")
    detector = SileroDetector()
    silero = [detector.feed(f).kind for f in heard]
    loud = LoudnessDetector()
    loudness = [loud.feed(f).kind for f in heard]
    assert silero.count("start") == 1
    assert silero.count("end") == 1
    assert "end" not in loudness  # the fan keeps a loudness detector open


def test_television_bursts_without_speech_start_nothing() -> None:
    mixer = RoomMixer(parse_room("bursts=on"))
    detector = SileroDetector()
    kinds = [detector.feed(mixer.frame(b"", FRAME // 2)).kind for _ in range(400)]  # 24 s
    assert mixer.bursts_played >= 3
    assert "start" not in kinds


def test_a_quiet_child_is_heard() -> None:
    heard = _in_room(_espeak_line("结束游戏"), "voice=0.25")
    detector = SileroDetector()
    kinds = [detector.feed(f).kind for f in heard]
    assert kinds.count("start") == 1
    assert kinds.count("end") == 1


def test_the_detector_is_a_setting_and_silero_is_the_default(tmp_path: Path) -> None:
    env = {"AGENTCADE_HOME": str(tmp_path)}
    assert load_voice_settings(env).vad.detector == "silero"
    assert isinstance(make_detector(load_voice_settings(env).vad), SileroDetector)
    loud = load_voice_settings({**env, "VAD_DETECTOR": "loudness"}).vad
    assert isinstance(make_detector(loud), LoudnessDetector)
    with pytest.raises(SettingsError, match="VAD_DETECTOR"):
        load_voice_settings({**env, "VAD_DETECTOR": "ears"})


def test_the_room_scales_the_childs_voice_and_adds_fan_noise_of_the_given_loudness() -> None:
    voice = tone(0.06, rate=16000)
    quiet = RoomMixer(parse_room("voice=0.25")).frame(voice, 960)
    assert abs(rms(quiet) - rms(voice) * 0.25) < 20
    fan = b"".join(RoomMixer(parse_room("noise=700")).frame(b"", 960) for _ in range(30))
    assert abs(rms(fan) - 700) < 70


def test_the_room_echoes_what_the_speaker_played_a_little_later() -> None:
    played = tone(0.06, rate=16000)

    def tap(start: float, n: int) -> array[int]:
        return array("h", played[:2 * n])

    echoed = RoomMixer(parse_room("echo=0.5"), tap).frame(b"", 960)
    assert rms(echoed) == pytest.approx(rms(played) * 0.5 * (1 + 0.35 + 0.15), rel=0.05)


# -- PCM ---------------------------------------------------------------------------------


def test_resampling_keeps_the_duration() -> None:
    pcm = tone(1.0, rate=22050)
    assert len(resample(pcm, 22050, 24000)) == 48000
    assert len(resample(pcm, 22050, 16000)) == 32000
    assert abs(rms(resample(pcm, 22050, 24000)) - rms(pcm)) < rms(pcm) * 0.05


def _sine(hz: float, seconds: float, rate: int, amplitude: int = 8000) -> bytes:
    return array("h", (
        int(amplitude * math.sin(2 * math.pi * hz * i / rate)) for i in range(int(seconds * rate))
    )).tobytes()


def test_a_tone_above_the_new_nyquist_frequency_is_filtered_not_folded_back() -> None:
    """A linear interpolator kept 3,949 of 5,657 RMS of a 15 kHz tone taken to 24 kHz."""
    pcm = _sine(15000, 1.0, 44100)
    assert rms(pcm) > 5000
    assert rms(resample(pcm, 44100, 24000)) < 100


def test_a_stream_resampled_chunk_by_chunk_loses_nothing_at_the_edges() -> None:
    pcm = _sine(440, 2.0, 44100)
    whole = resample(pcm, 44100, 24000)
    resampler = Resampler(44100, 24000)
    pieces = b"".join(resampler.feed(pcm[i:i + 4411]) for i in range(0, len(pcm), 4411))
    pieces += resampler.flush()
    assert len(pieces) == len(whole) == 2 * 48000  # an odd chunk size too: no sample lost
    assert pieces == whole


def test_a_wav_with_placeholder_sizes_is_read_to_its_end() -> None:
    pcm = tone(0.5, rate=22050)
    wav = bytearray(to_wav(pcm, 22050))
    wav[4:8] = wav[40:44] = b"\xff\xff\xff\x7f"  # what espeak-ng --stdout writes
    assert decode_audio(bytes(wav)) == (pcm, 22050)


def test_bytes_that_are_not_audio_are_a_voice_error() -> None:
    with pytest.raises(WavError):
        decode_audio(b"<html>502 Bad Gateway</html>")


# -- sentences ---------------------------------------------------------------------------


def test_a_reply_is_said_sentence_by_sentence() -> None:
    assert split_sentences("比十大。你还有四次机会！猜吧？") == ["比十大。", "你还有四次机会！", "猜吧？"]
    assert split_sentences("“对了！”……好") == ["“对了！”……", "好"]
    assert split_sentences("") == []
    long = "，".join(["一二三四五六七八九"] * 20)
    assert all(len(s) <= 80 for s in split_sentences(long))
    assert "".join(split_sentences(long)) == long


# -- settings ----------------------------------------------------------------------------


def test_without_speech_settings_the_robot_hears_and_speaks_by_itself(tmp_path: Path) -> None:
    settings = load_voice_settings({"AGENTCADE_HOME": str(tmp_path)})
    assert settings.asr.provider == "local"
    assert settings.tts.provider == "neural"
    assert settings.missing_asr is None
    assert settings.vad == TUNING


def test_voice_detection_is_tuned_by_settings(tmp_path: Path) -> None:
    env = {"AGENTCADE_HOME": str(tmp_path), "VAD_THRESHOLD": "900", "VAD_SILENCE_MS": "500",
           "VAD_PRE_ROLL_MS": "120", "VAD_MAX_MS": "10000", "ASR_PROVIDER": "openai",
           "ASR_API_KEY": "sk-asr-secret"}
    settings = load_voice_settings(env)
    assert settings.vad == replace(TUNING, threshold=900, silence_ms=500, pre_roll_ms=120,
                                   max_ms=10000)
    assert settings.missing_asr is None
    assert "sk-asr-secret" not in repr(settings)
    assert settings.secrets() == ["sk-asr-secret"]


def test_a_bad_voice_setting_names_its_key(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="VAD_SILENCE_MS"):
        load_voice_settings({"AGENTCADE_HOME": str(tmp_path), "VAD_SILENCE_MS": "soon"})
    with pytest.raises(SettingsError, match="ASR_PROVIDER"):
        load_voice_settings({"AGENTCADE_HOME": str(tmp_path), "ASR_PROVIDER": "whisperz"})


# -- OpenAI-compatible endpoints (the local fake server) -------------------------------


def service(fake: FakeOpenAI, **extra: str) -> ServiceSettings:
    return ServiceSettings(provider="openai", base_url=fake.url, api_key=SecretStr("sk-audio-key"),
                           **extra)


async def test_openai_asr_posts_the_utterance_as_a_wav_and_returns_the_text(fake: FakeOpenAI) -> None:
    fake.transcript = "我猜十"
    recognizer = OpenAIRecognizer(service(fake, model="whisper-large", language="zh"))
    try:
        text = await recognizer.transcribe(chunks(tone(0.3), tone(0.4)))
    finally:
        await recognizer.aclose()
    assert text == "我猜十"
    path, headers, body = fake.audio_requests[0]
    assert path == "/v1/audio/transcriptions"
    assert headers["authorization"] == "Bearer sk-audio-key"
    assert b"whisper-large" in body
    assert b'name="language"' in body
    start = body.index(b"RIFF")
    pcm, rate = decode_audio(body[start:start + 44 + 2 * int(0.7 * 16000)])
    assert rate == 16000
    assert len(pcm) == 2 * int(0.7 * 16000)


async def test_a_failing_asr_is_a_voice_error_without_the_key(fake: FakeOpenAI) -> None:
    fake.audio_status = 401
    recognizer = OpenAIRecognizer(service(fake))
    try:
        with pytest.raises(VoiceError) as caught:
            await recognizer.transcribe(chunks(tone(0.3)))
    finally:
        await recognizer.aclose()
    assert "401" in str(caught.value)
    assert "sk-audio-key" not in str(caught.value)


async def test_openai_tts_asks_for_raw_pcm_and_returns_it(fake: FakeOpenAI) -> None:
    fake.speech = tone(0.25, rate=24000)
    synthesizer = OpenAISynthesizer(service(fake, model="tts-zh", voice="nova"))
    try:
        pcm = await synthesizer.synthesize("你好。")
    finally:
        await synthesizer.aclose()
    assert pcm == fake.speech
    path, _, body = fake.audio_requests[0]
    assert path == "/v1/audio/speech"
    assert b'"response_format":"pcm"' in body.replace(b" ", b"")
    assert "你好".encode() in body or b"\\u4f60" in body


async def test_openai_tts_that_answers_a_wav_is_resampled_to_24_khz(fake: FakeOpenAI) -> None:
    fake.speech = to_wav(tone(0.5, rate=22050), 22050)
    synthesizer = OpenAISynthesizer(service(fake))
    try:
        pcm = await synthesizer.synthesize("你好。")
    finally:
        await synthesizer.aclose()
    assert len(pcm) == 24000


async def test_espeak_speaks_mandarin_at_24_khz_mono() -> None:
    need_program("espeak-ng", package="espeak-ng")
    pcm = await EspeakSynthesizer().synthesize("你好，我是小懒。")
    seconds = len(pcm) / 48000
    assert 1.0 < seconds < 6.0
    assert rms(pcm) > 550


# -- the asyncio bridge ------------------------------------------------------------------


async def test_cancelling_the_trio_side_cancels_the_asyncio_task() -> None:
    bridge = AsyncioBridge()
    seen: list[str] = []

    async def slow() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled on the asyncio side")
            raise
        return "late"

    try:
        with trio.move_on_after(0.2) as scope:
            await bridge.run(slow)
        assert scope.cancelled_caught
        assert seen == ["cancelled on the asyncio side"]
    finally:
        bridge.close()


async def test_a_task_cancelled_on_the_asyncio_side_is_a_voice_error_in_trio() -> None:
    bridge = AsyncioBridge()

    async def cancelled() -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(1)
        return "never"

    try:
        with pytest.raises(VoiceError, match="cancelled"):
            await bridge.run(cancelled)
        assert await bridge.run(_answer) == 42  # the bridge still works
    finally:
        bridge.close()


async def _answer() -> int:
    await asyncio.sleep(0)
    return 42


# -- the SDK's providers, through its ProviderRegistry ----------------------------------


class FakeSdkASR:
    """An SDK ``ASR`` (asyncio): partial results while audio streams, then the final."""

    instances: ClassVar[list[FakeSdkASR]] = []

    def __init__(self, config: object) -> None:
        self.config = config
        self.chunks: list[int] = []
        self.closed = False
        FakeSdkASR.instances.append(self)

    async def transcribe(self, audio: AsyncIterator[bytes]) -> AsyncGenerator[object, None]:
        from watcherobot.voice.contracts import Transcript

        async for chunk in audio:
            asyncio.get_running_loop()  # really on an asyncio loop
            self.chunks.append(len(chunk))
            yield Transcript("我", final=False)
        yield Transcript("我猜十", final=True)

    async def close(self) -> None:
        self.closed = True


class FakeSdkTTS:
    def __init__(self, config: object) -> None:
        self.config = config

    async def synthesize(self, text: str) -> AsyncGenerator[object, None]:
        from watcherobot.voice.contracts import AudioChunk

        await asyncio.sleep(0)
        yield AudioChunk(b"\x01\x00" * 1200, 24000, 1)
        yield AudioChunk(b"\x02\x00" * 800, 16000, 1)  # resampled to 24 kHz

    async def close(self) -> None:
        await asyncio.sleep(0)


def fake_registry() -> object:
    from watcherobot.voice.providers import ProviderRegistry

    registry = ProviderRegistry.builtin()
    registry.register_asr("fake", FakeSdkASR)  # type: ignore[arg-type]
    registry.register_tts("fake", FakeSdkTTS)  # type: ignore[arg-type]
    return registry


async def test_an_sdk_asr_from_the_registry_streams_the_audio_and_returns_the_final_text() -> None:
    bridge = AsyncioBridge()
    try:
        recognizer = make_recognizer(
            ServiceSettings(provider="fake", api_key=SecretStr("k-1234"), language="zh"),
            bridge=bridge, registry=fake_registry(),  # type: ignore[arg-type]
        )
        assert isinstance(recognizer, SdkRecognizer)
        text = await recognizer.transcribe(chunks(b"\x00" * 1920, b"\x00" * 1920, b"\x00" * 960))
        await recognizer.aclose()
    finally:
        bridge.close()
    asr = FakeSdkASR.instances[-1]
    assert text == "我猜十"
    assert asr.chunks == [1920, 1920, 960]
    assert asr.closed
    assert asr.config.credentials == {"api_key": "k-1234"}  # type: ignore[attr-defined]


async def test_an_sdk_tts_from_the_registry_returns_24_khz_pcm() -> None:
    bridge = AsyncioBridge()
    try:
        synthesizer = make_synthesizer(
            ServiceSettings(provider="fake", voice="zh_female"), bridge=bridge,
            registry=fake_registry(),  # type: ignore[arg-type]
        )
        assert isinstance(synthesizer, SdkSynthesizer)
        pcm = await synthesizer.synthesize("你好。")
        await synthesizer.aclose()
    finally:
        bridge.close()
    assert len(pcm) == 2400 + 2400


async def test_cancelling_an_sdk_recognition_cancels_the_provider() -> None:
    bridge = AsyncioBridge()

    async def endless() -> AsyncIterator[bytes]:
        while True:  # wall clock: the recogniser runs on asyncio in the bridge's thread
            await trio.sleep(0.01)
            yield b"\x00" * 1920

    try:
        recognizer = make_recognizer(ServiceSettings(provider="fake"), bridge=bridge,
                                     registry=fake_registry())  # type: ignore[arg-type]
        with trio.move_on_after(0.3) as scope:
            await recognizer.transcribe(endless())
        assert scope.cancelled_caught
        assert FakeSdkASR.instances[-1].chunks  # it was hearing when cancelled
    finally:
        bridge.close()


def test_an_unknown_sdk_provider_is_a_voice_error() -> None:
    bridge = AsyncioBridge()
    try:
        with pytest.raises(VoiceError, match="nope"):
            make_recognizer(ServiceSettings(provider="nope"), bridge=bridge)
    finally:
        bridge.close()


# -- the command -------------------------------------------------------------------------


def test_run_that_cannot_hear_without_pages_says_what_to_do_and_exits_2(tmp_path: Path) -> None:
    # The embedded recogniser cannot be made here (its models folder cannot be written).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    env = {"AGENTCADE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "TTS_PROVIDER": "espeak",
           "AGENTCADE_MODELS_DIR": str(blocker / "models")}
    done = subprocess.run([sys.executable, "-m", "agentcade", "run", "--robot", "sim", "--no-pages"],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "离线语音识别用不了" in lines[0]
    assert "ASR_PROVIDER" in lines[0]
    assert "Traceback" not in done.stderr


def test_a_scenario_needs_the_simulated_robot(tmp_path: Path) -> None:
    scenario = tmp_path / "s.txt"
    scenario.write_text("玩猜数字\n", encoding="utf-8")
    env = {"AGENTCADE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "agentcade", "run", "--robot", "ws://127.0.0.1:9", "--say-file",
         str(scenario)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 2
    assert "--robot sim" in done.stderr


def test_run_says_in_one_line_when_the_robot_cannot_be_reached(tmp_path: Path) -> None:
    env = {"AGENTCADE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "ASR_PROVIDER": "openai",
           "ASR_BASE_URL": "http://127.0.0.1:9/v1", "ASR_API_KEY": "sk-hidden-key"}
    done = subprocess.run(
        [sys.executable, "-m", "agentcade", "run", "--robot", "ws://127.0.0.1:9", "--no-pages"],
        capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "ws://127.0.0.1:9" in lines[0]
    assert "sk-hidden-key" not in done.stderr + done.stdout


GAME_SENTENCES = [
    "不对哦，比五十大，再猜猜。",
    "答对啦！你真厉害，一共猜了三次。",
    "猜猜我画的是什么动物？",
    "汤面是这样的：一个男人走进餐厅，点了一碗海龟汤。",
    "好的，重新开始，我们长大以后再玩。",
]


async def test_the_default_voice_reads_chinese_as_mandarin_not_through_another_language() -> None:
    need_program("espeak-ng", package="espeak-ng")
    voice = EspeakSynthesizer()
    for sentence in GAME_SENTENCES:
        phonemes = await voice.phonemes(sentence)
        assert phonemes
        assert "(" not in phonemes, (sentence, phonemes)  # no (en)/(zh) switch


async def test_the_language_switch_check_catches_the_cmn_voice() -> None:
    need_program("espeak-ng", package="espeak-ng")
    phonemes = await EspeakSynthesizer("cmn").phonemes(GAME_SENTENCES[0])
    assert "(en)" in phonemes


def test_barge_in_is_a_setting_voice_by_default(tmp_path: Path) -> None:
    env = {"AGENTCADE_HOME": str(tmp_path)}
    assert load_voice_settings(env).barge_in == "voice"
    assert load_voice_settings({**env, "BARGE_IN": "touch"}).barge_in == "touch"
    assert load_voice_settings({**env, "BARGE_IN": "OFF"}).barge_in == "off"
    with pytest.raises(SettingsError, match="BARGE_IN"):
        load_voice_settings({**env, "BARGE_IN": "shout"})


def test_a_scenario_line_can_talk_over_the_robot() -> None:
    assert parse_over("/over 300 结束游戏") == (300, "结束游戏")
    assert parse_over("结束游戏") == (None, "结束游戏")
    assert parse_over("/over 结束游戏") == (None, "/over 结束游戏")


def test_the_echo_reference_is_laid_where_the_microphone_will_hear_it() -> None:
    echo = EchoCanceller(align=False)  # a silent room: no echo to align by
    frame = bytes(1920)  # 60 ms
    echo.arrived(frame)
    echo.arrived(frame)  # two frames arrived; the first is not processed yet
    echo.play(tone(0.12, rate=16000))  # starts with the third frame to be processed
    assert echo.playing
    echo.process(frame)
    echo.process(frame)
    assert echo._reference  # nothing of the clip was used up by the frames before it
    echo.arrived(frame)
    echo.process(frame)
    echo.arrived(frame)
    echo.process(frame)
    assert not echo.playing  # the clip's 120 ms went with the two frames it sounded in


def test_stopping_the_sound_cuts_the_echo_reference_at_the_present() -> None:
    echo = EchoCanceller(align=False)  # a silent room: no echo to align by
    echo.play(tone(1.0, rate=16000))
    echo.arrived(bytes(1920))
    echo.stop()
    echo.process(bytes(1920))
    assert not echo.playing


def test_a_clip_played_while_frames_wait_unread_is_laid_at_the_robots_present() -> None:
    echo = EchoCanceller(align=False)  # a silent room: no echo to align by
    frame = bytes(1920)  # 60 ms
    for i in range(40):  # 2.4 s of frames, received by the SDK every 60 ms
        echo.arrived(frame, at=100.0 + 0.06 * (i + 1))
    last = 100.0 + 0.06 * 40
    # The host is busy: 300 ms after the last frame it read, the robot's microphone is
    # 300 ms further on, and that is where the clip's sound begins.
    assert echo.present(now=last + 0.3) == 40 * 960 + 4800
    echo.play(tone(0.06, rate=16000), now=last + 0.3)
    for _ in range(40):
        echo.process(frame)
    for _ in range(5):  # the frames heard while the host was busy: before the clip
        echo.arrived(frame)
        echo.process(frame)
        assert echo.playing
    echo.arrived(frame)
    echo.process(frame)
    assert not echo.playing  # its 60 ms were the sixth frame


def test_what_the_robot_says_before_the_microphone_opens_is_cancelled_from_when_it_does() -> None:
    echo = EchoCanceller(align=False)  # a silent room: no echo to align by
    now = time.time()
    echo.play(tone(1.0, rate=16000), now=now)  # no microphone yet: laid by the wall clock
    echo.opened(now=now + 0.4)  # the microphone's first frame is 400 ms into the sentence
    frame = bytes(1920)  # 60 ms
    for _ in range(9):
        echo.arrived(frame)
        echo.process(frame)
    assert echo.playing
    echo.arrived(frame)
    echo.process(frame)
    assert not echo.playing  # the sentence's last 600 ms were the first ten frames


def test_a_microphone_opened_again_begins_a_new_timeline() -> None:
    echo = EchoCanceller(align=False)  # a silent room: no echo to align by
    t = time.time()
    echo.opened(now=t)
    frame = bytes(1920)  # 60 ms
    for i in range(5):
        echo.arrived(frame, at=t + 0.06 * (i + 1))
        echo.process(frame)
    echo.closed(now=t + 0.3)
    echo.opened(now=t + 5.3)  # five seconds later, a new stream
    echo.play(tone(0.12, rate=16000), now=t + 5.3)  # the robot speaks as it opens
    echo.arrived(frame, at=t + 5.36)
    echo.process(frame)
    assert echo.playing
    echo.arrived(frame, at=t + 5.42)
    echo.process(frame)
    assert not echo.playing  # its 120 ms were the new stream's first two frames


def test_frames_lost_on_the_way_keep_the_echo_reference_in_place() -> None:
    echo = EchoCanceller(align=False)  # a silent room: no echo to align by
    frame = bytes(1920)
    echo.arrived(frame)
    echo.play(tone(0.18, rate=16000))  # three frames of sound from the second frame on
    echo.process(frame)
    # The second and third frames were dropped by a queue: the fourth says so.
    echo.arrived(frame, missing=2 * 960)
    echo.process(frame)
    assert not echo.playing  # the clip was heard in the frames that were lost and this one


def _room_with_echo(
    sentences: list[tuple[int, int, int]], *, breath: int = 0
) -> tuple[bytes, dict[int, bytes]]:
    """A microphone's sound: a fan, and each (laid at, heard after, length) sentence of a
    noise-like voice returned at 0.3, ``heard after`` samples after where it was laid, each
    beginning with ``breath`` samples hardly audible. Returns the microphone's PCM and each
    sentence's reference by where it is laid."""
    import numpy as np

    rng = np.random.default_rng(7)
    total = max(at + lag + n for at, lag, n in sentences) + 16000
    mic = rng.normal(0.0, 700.0, total)
    clips = {}
    for at, lag, n in sentences:
        voice = rng.normal(0.0, 3000.0, n)
        voice[:breath] /= 30
        clips[at] = voice.astype(np.int16).tobytes()
        mic[at + lag:at + lag + n] += 0.3 * voice
    return np.clip(mic, -32768, 32767).astype(np.int16).tobytes(), clips


def _voice_like(n: int, level: float, pitch: float = 220) -> np.ndarray:
    """``n`` samples of something like a voice at RMS ``level``: harmonics of a gliding pitch
    in syllables (noise would be taken for the fan's by noise suppression)."""
    import numpy as np

    t = np.arange(n) / 16000
    phase = 2 * np.pi * np.cumsum(pitch + pitch / 5 * np.sin(2 * np.pi * 3 * t)) / 16000
    sound = sum(np.sin(k * phase) / k for k in range(1, 9)) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t))
    return sound * level / np.sqrt(np.mean(sound**2))


def _play_room(
    echo: EchoCanceller, mic: bytes, clips: dict[int, bytes],
    each: Callable[[int, bytes], None] | None = None,
) -> list[bytes]:
    """Every 60 ms frame of ``mic`` arrives and is processed; each clip is played when the
    microphone reaches where it is laid. Returns what each frame's processing gave back
    (``each`` is told it too, with where the frame begins in samples, as it happens)."""
    out = []
    for i in range(0, len(mic) - 1919, 1920):
        if (clip := clips.get(i // 2)) is not None:
            echo.play(clip)
        echo.arrived(mic[i:i + 1920])
        out.append(echo.process(mic[i:i + 1920]))
        if each is not None:
            each(i // 2, out[-1])
    return out


_Judged = TypeVar("_Judged")


def _judged_room(
    mic: bytes, clips: dict[int, bytes], judge: Callable[[EchoCanceller], _Judged]
) -> dict[int, _Judged]:
    """As :func:`_play_room`, with ``judge`` of the canceller after each frame that gave
    output, by where the frame begins (samples)."""
    echo = EchoCanceller()
    judged: dict[int, _Judged] = {}

    def each(at: int, out: bytes) -> None:
        if out:
            judged[at] = judge(echo)

    _play_room(echo, mic, clips, each)
    return judged


def test_a_sentence_whose_echo_comes_later_than_the_clock_says_is_moved_to_it() -> None:
    # The first three sentences teach the room's lag (80 ms); the fourth sounds 12 ms later
    # than the host's clock put it, as a loaded host's would.
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 8000), (82560, 1280 + 192, 8000)]
    )
    echo = EchoCanceller()
    _play_room(echo, mic, clips)
    assert echo.shifts[:2] == [0, 0]  # the second and third where the first was
    assert abs(echo.shifts[2] - 192) <= 4


def test_a_first_sentence_heard_late_does_not_set_the_rooms_lag() -> None:
    # The first sentence began before the microphone's first frame came: its echo is heard
    # 136 ms after where it was laid; every sentence after it, 80 ms.
    mic, clips = _room_with_echo(
        [(1920, 2176, 8000), (28800, 1280, 8000), (55680, 1280, 8000), (82560, 1280, 8000)]
    )
    echo = EchoCanceller()
    _play_room(echo, mic, clips)
    # Every later sentence was found, and the fourth at the room's usual lag: not moved.
    assert echo.shifts == [0, 0, 0]


def test_sentences_that_begin_with_a_breath_are_placed_by_their_voice() -> None:
    # Each sentence's first 150 ms are lost in the fan's noise; its voice is not.
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 8000), (82560, 1280, 8000)],
        breath=2400,
    )
    echo = EchoCanceller()
    _play_room(echo, mic, clips)
    assert echo.shifts == [0, 0, 0]  # each found by its voice, where the first one was


def test_frames_wait_while_a_sentences_echo_is_found_and_none_is_lost() -> None:
    mic, clips = _room_with_echo([(1920, 1280, 8000)])
    echo = EchoCanceller()
    out = _play_room(echo, mic, clips)
    assert out[1]
    assert out[2] == b""  # the sentence began with the third frame: it waits
    assert sum(map(len, out)) == len(mic) - len(mic) % 1920  # and comes out later


def test_a_voice_louder_than_the_robots_echo_could_be_is_told_from_the_echo() -> None:
    import numpy as np

    # Four sentences (the first three teach the room's lag and the echo's gain); over the
    # fourth, from 0.3 s on, somebody talks as loud as the robot itself.
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 8000), (82560, 1280, 16000)]
    )
    pcm = np.frombuffer(mic, np.int16).astype(np.float64)
    talk = 82560 + 1280 + 4800
    pcm[talk:talk + 8000] += _voice_like(8000, 3000.0)
    mic = np.clip(pcm, -32768, 32767).astype(np.int16).tobytes()
    over = _judged_room(mic, clips, lambda echo: echo.over_echo)
    echo_alone = [v for at, v in over.items() if 82560 + 1280 + 1920 <= at < talk - 960]
    talking = [v for at, v in over.items() if talk + 960 <= at < talk + 8000 - 960]
    assert echo_alone
    assert not any(echo_alone)
    assert talking
    assert sum(talking) > len(talking) / 2  # a voice has its quieter moments


def test_the_microphone_tells_a_voice_from_the_robots_echo_where_the_canceller_takes_it_away(
) -> None:
    import numpy as np

    # As above: over the fourth sentence somebody talks as loud as the robot; a second
    # voice, at a quarter of that (no louder than the robot's echo), over the third.
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 16000), (92160, 1280, 16000)]
    )
    pcm = np.frombuffer(mic, np.int16).astype(np.float64)
    quiet, talk = 55680 + 1280 + 4800, 92160 + 1280 + 4800
    pcm[quiet:quiet + 8000] += _voice_like(8000, 750.0)
    pcm[talk:talk + 8000] += _voice_like(8000, 3000.0)
    mic = np.clip(pcm, -32768, 32767).astype(np.int16).tobytes()
    heard = _judged_room(mic, clips, lambda echo: echo.heard_over_echo)

    def over(lo: int, hi: int) -> list[bool]:
        return [v for at, v in heard.items() if lo <= at < hi]

    echo_alone = over(55680 + 1280 + 1920, quiet - 960) + over(92160 + 1280 + 1920, talk - 960)
    assert echo_alone
    assert not any(echo_alone)
    assert not any(over(quiet + 960, quiet + 8000 - 960))  # no louder than the echo: no telling
    talking = over(talk + 960, talk + 8000 - 960)
    assert talking
    assert sum(talking) > len(talking) / 2


def test_a_voice_louder_than_the_echo_repeats_at_its_pitch_and_a_noise_burst_does_not() -> None:
    import numpy as np

    # Over the third sentence, a television's noise burst (low-passed like the simulated
    # room's, as loud as the robot); over the fourth, somebody talking as loud.
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 16000), (92160, 1280, 16000)]
    )
    pcm = np.frombuffer(mic, np.int16).astype(np.float64)
    burst, talk = 55680 + 1280 + 4800, 92160 + 1280 + 4800
    noise = np.random.default_rng(3).normal(0.0, 1.0, 8000)
    for i in range(1, 8000):
        noise[i] = 0.4 * noise[i - 1] + 0.6 * noise[i]
    pcm[burst:burst + 8000] += noise * 3000.0 / noise.std()
    pcm[talk:talk + 8000] += _voice_like(8000, 3000.0)
    mic = np.clip(pcm, -32768, 32767).astype(np.int16).tobytes()
    judged = _judged_room(mic, clips, lambda echo: (echo.louder, echo.periodicity))

    def louder(lo: int, hi: int) -> list[float]:
        return [p for at, (loud, p) in judged.items() if lo <= at < hi and loud]

    noisy, talking = louder(burst + 960, burst + 8000 - 960), louder(talk + 960, talk + 8000 - 960)
    assert noisy
    assert max(noisy) < TUNING.loud_periodicity
    assert talking
    assert min(talking) >= TUNING.loud_periodicity


def test_the_robots_own_voice_louder_than_its_echo_was_thought_is_told_by_its_pitch() -> None:
    import numpy as np

    # The first three sentences teach the echo's gain (0.3); the fourth, a voice, comes back
    # three times as loud (a sentence's onset, where the echo is underestimated): louder than
    # the echo could be, but at the pitch the robot played. Over the fifth, somebody talks at
    # another pitch.
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 8000), (92160, 1280, 16000)]
    )
    pcm = np.frombuffer(mic, np.int16).astype(np.float64)
    robot = _voice_like(16000, 3000.0)
    clips[92160] = robot.astype(np.int16).tobytes()
    pcm[92160 + 1280:92160 + 1280 + 16000] += 0.9 * robot
    mic = np.clip(pcm, -32768, 32767).astype(np.int16).tobytes()
    judged = _judged_room(mic, clips, lambda echo: (echo.louder, echo.periodicity))
    own = [p for at, (loud, p) in judged.items() if 92160 + 1280 + 1920 <= at < 92160 + 16000 and loud]
    assert own
    assert max(own) < TUNING.loud_periodicity

    talk = 92160 + 1280 + 4800
    pcm[talk:talk + 8000] += _voice_like(8000, 6000.0, pitch=330)
    mic = np.clip(pcm, -32768, 32767).astype(np.int16).tobytes()
    judged = _judged_room(mic, clips, lambda echo: (echo.louder, echo.periodicity))
    child = [p for at, (loud, p) in judged.items() if talk + 960 <= at < talk + 8000 - 960 and loud]
    assert child
    assert sum(p >= TUNING.loud_periodicity for p in child) > len(child) / 2


def test_over_a_robot_still_being_learnt_a_start_asks_for_more_unless_it_is_louder() -> None:
    line = frames(bytes(FRAME * 5) + _espeak_line("结束游戏") + bytes(FRAME * 10))

    def voiced_at_start(*, over_echo: bool) -> float:
        detector = SileroDetector()
        detector.robot = RobotVoice(speaking=True, converged=False, over_echo=over_echo)
        for frame in line:
            if detector.feed(frame).kind == "start":
                return detector.voiced_ms
        raise AssertionError("never started")

    assert voiced_at_start(over_echo=False) >= TUNING.warming_ms
    assert voiced_at_start(over_echo=True) < TUNING.warming_ms


def test_a_voice_the_canceller_took_away_is_heard_on_the_microphone_when_it_is_louder_than_the_echo(
) -> None:
    # AEC3's suppressor took the child's voice away with the robot's (its output is silent);
    # the microphone's own samples still hold it, louder than the robot's echo could be.
    line = frames(bytes(FRAME * 5) + _espeak_line("七") + bytes(FRAME * 10))

    def starts(*, heard_over_echo: bool) -> bool:
        detector = SileroDetector()
        detector.robot = RobotVoice(speaking=True, heard_over_echo=heard_over_echo)
        return any(detector.feed(bytes(len(frame)), frame).kind == "start" for frame in line)

    assert starts(heard_over_echo=True)
    assert not starts(heard_over_echo=False)


def test_over_a_robot_whose_voice_just_resumed_inside_a_sentence_a_start_asks_for_more() -> None:
    chunk = bytes(2 * SileroDetector.CHUNK_SAMPLES)

    def starts(*, resumed: bool, probability: float) -> bool:
        detector = SileroDetector()
        detector.robot = RobotVoice(speaking=True, resumed=resumed)
        return any(detector._step(chunk, [probability]).kind == "start" for _ in range(4))

    between = (TUNING.over_speech_prob + TUNING.resume_prob) / 2
    assert starts(resumed=False, probability=between)
    assert not starts(resumed=True, probability=between)
    assert starts(resumed=True, probability=TUNING.resume_prob)


def test_while_the_host_is_behind_a_start_over_the_robot_asks_for_more() -> None:
    line = frames(bytes(FRAME * 5) + _espeak_line("结束游戏") + bytes(FRAME * 10))

    def voiced_at_start(*, behind: bool) -> float:
        detector = SileroDetector()
        detector.robot = RobotVoice(speaking=True, behind=behind)
        for frame in line:
            if detector.feed(frame).kind == "start":
                return detector.voiced_ms
        raise AssertionError("never started")

    assert voiced_at_start(behind=True) >= TUNING.warming_ms
    assert voiced_at_start(behind=False) < TUNING.warming_ms


def test_the_robots_voice_resuming_after_a_pause_inside_its_sentence_is_told() -> None:
    # One clip: half a second of voice, a 200 ms pause (a comma), half a second more.
    clip = tone(0.5) + bytes(2 * 3200) + tone(0.5)
    echo = EchoCanceller(align=False)
    echo.play(clip)
    resumed: dict[int, bool] = {}
    quiet = bytes(160 * 2)
    for i in range(130):  # 10 ms frames, the room silent
        echo.arrived(quiet)
        echo.process(quiet)
        resumed[(i + 1) * 10] = echo.resumed
    assert not any(v for ms, v in resumed.items() if ms <= 700)
    assert all(v for ms, v in resumed.items() if 720 <= ms <= 990)
    assert not any(v for ms, v in resumed.items() if ms >= 1010)


def test_a_microphone_frame_processed_long_after_it_came_means_the_host_is_behind() -> None:
    echo = EchoCanceller()
    frame = bytes(FRAME)
    echo.arrived(frame, at=100.0)
    echo.process(frame, now=100.02)
    assert not echo.behind
    echo.arrived(frame, at=100.06)
    echo.process(frame, now=100.6)
    assert echo.behind
    assert echo.late_ms == pytest.approx(540)


def test_a_host_that_fell_behind_the_microphone_says_so_once_it_has_caught_up() -> None:
    from agentcade.core.trace import Trace

    records: list[dict[str, object]] = []

    async def main() -> None:
        send, receive = trio.open_memory_channel[bytes](math.inf)
        echo = EchoCanceller()
        listener = Listener(receive, ScriptedRecognizer([]), echo=echo,
                            trace=Trace(records.append))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(listener.hear)
            for i in range(40):
                late = 0.8 if 10 <= i < 20 else 0.0  # ten frames read 800 ms late
                echo.arrived(bytes(FRAME), at=time.time() - late)
                send.send_nowait(bytes(FRAME))
                await trio.lowlevel.checkpoint()
            await trio.sleep(0.1)
            nursery.cancel_scope.cancel()

    trio.run(main)
    [record] = [r for r in records if r["type"] == "host_behind"]
    assert 790 <= record["late_ms"] < 1000  # type: ignore[operator]


def test_a_robot_that_does_not_hear_itself_is_not_waited_for() -> None:
    silent = bytes(2 * 16000 * 6)
    sentences = {at: tone(0.5, rate=16000) for at in (1920, 28800, 55680, 82560)}
    echo = EchoCanceller()
    out = _play_room(echo, silent, sentences)
    assert all(out[82560 // 960:])  # after three sentences no frame waits any more
    assert echo.shifts == []


def test_a_child_still_talking_when_the_robot_begins_to_speak_stops_it() -> None:
    """The line began in silence; the reply to the line before started while it went on."""
    line = _espeak_line("我要猜大象")
    robot_speaks = False
    barge_ins: list[int] = []

    async def main() -> None:
        nonlocal robot_speaks
        send, receive = trio.open_memory_channel[bytes](math.inf)
        echo = EchoCanceller()
        listener = Listener(
            receive, ScriptedRecognizer(["我要猜大象"]), echo=echo,
            speaking=lambda: robot_speaks, on_barge_in=lambda: barge_ins.append(sent),
        )
        sent = 0
        async with trio.open_nursery() as nursery:
            heard: list[str] = []

            async def hear() -> None:
                heard.append((await listener.hear()).text)

            nursery.start_soon(hear)
            for frame in frames(bytes(FRAME * 5) + line + bytes(32000)):
                echo.arrived(frame)
                send.send_nowait(frame)
                sent += 1
                if sent == 5 + len(line) // FRAME // 2:  # halfway through the line
                    robot_speaks = True
                await trio.lowlevel.checkpoint()
            await trio.sleep(0.5)
        assert heard == ["我要猜大象"]

    trio.run(main)
    assert len(barge_ins) == 1  # once, when the robot began: the sound stopped


def test_the_robots_echo_may_be_heard_for_the_rooms_lag_and_reverb_after_its_last_sample() -> None:
    echo = EchoCanceller(align=False)  # no lag learnt: the most it is looked for (250 ms)
    echo.opened()
    echo.play(tone(0.1, rate=16000))
    frame = bytes(320)  # 10 ms
    audible = []
    for _ in range(60):
        echo.arrived(frame)
        echo.process(frame)
        audible.append(echo.audible)
    assert not echo.playing
    assert audible.index(False) == 10 + 25 + 15 - 1  # the clip, the lag, the reverb


def test_detection_judges_the_microphone_while_the_robot_is_silent_and_the_output_over_it() -> None:
    """With an echo canceller, ``feed`` is given its output and the microphone behind it:
    the microphone counts unless the robot's voice may be in the frames."""
    line = frames(bytes(FRAME * 5) + _espeak_line("结束游戏") + bytes(FRAME * 20))

    def heard(*, robot_speaking: bool, in_output: bool) -> bytes:
        detector = SileroDetector()
        detector.robot = RobotVoice(speaking=robot_speaking)
        return _kept(detector, line, in_output=in_output)

    assert heard(robot_speaking=False, in_output=True) == b""
    assert heard(robot_speaking=True, in_output=False) == b""
    kept = heard(robot_speaking=False, in_output=False)
    assert kept
    assert kept in b"".join(line)
    # Over the robot, the output is judged; the microphone is what the utterance keeps.
    kept = heard(robot_speaking=True, in_output=True)
    assert kept
    assert not any(kept)


def test_an_utterance_over_the_robot_keeps_the_microphone_with_the_echo_model_taken_out() -> None:
    """What the recogniser gets of a line said over the robot is the microphone with the
    model of the robot's echo taken out, not the canceller's output, whose suppressor thins
    a voice over the robot with the robot's (here: to a quarter)."""
    import numpy as np

    line = frames(bytes(FRAME * 5) + _espeak_line("结束游戏") + bytes(FRAME * 20))
    detector = SileroDetector()
    detector.robot = RobotVoice(speaking=True)
    kept = b""
    for f in line:
        thinned = (np.frombuffer(f, np.int16) // 4).astype(np.int16).tobytes()
        step = detector.feed(thinned, f)
        if step.kind == "start" or kept:
            kept += step.audio
    assert kept
    assert kept in b"".join(line)


def _kept(detector: SileroDetector, line: list[bytes], *, in_output: bool) -> bytes:
    """What ``detector`` keeps of ``line`` said in the canceller's output (the microphone
    silent) or on the microphone (the output silent): b"" when it heard no utterance."""
    kept = b""
    for f in line:
        output, mic = (f, bytes(len(f))) if in_output else (bytes(len(f)), f)
        step = detector.feed(output, mic)
        if step.kind == "start" or kept:
            kept += step.audio
    return kept


def _over_robot_with_echo_taken_out(left: bytes, line: list[bytes], *, in_output: bool) -> bytes:
    """What a detector told the robot speaks and the model of its echo is trusted keeps of
    ``line`` (in the canceller's output, or on the microphone with the echo taken out), after
    ``left``: what the model left of the robot's voice in frames it measured."""
    detector = SileroDetector()
    detector.robot = RobotVoice(speaking=True, clean=True, measured=True)
    for f in frames(left):
        detector.feed(bytes(len(f)), f)
    detector.robot = RobotVoice(speaking=True, clean=True)
    return _kept(detector, line, in_output=in_output)


def test_over_the_robot_a_microphone_with_its_echo_taken_out_is_judged() -> None:
    """``robot.clean`` (the model of the robot's echo is trusted) and what it leaves is not
    heard: the microphone counts while the robot speaks, not the canceller's output."""
    line = frames(bytes(FRAME * 5) + _espeak_line("结束游戏") + bytes(FRAME * 20))
    quiet = bytes(FRAME * 60)
    assert _over_robot_with_echo_taken_out(quiet, line, in_output=True) == b""
    kept = _over_robot_with_echo_taken_out(quiet, line, in_output=False)
    assert kept
    assert kept in b"".join(line)


def test_a_microphone_whose_echo_model_leaves_a_voice_silero_hears_is_not_judged() -> None:
    """What the model left of the robot's voice sounded like a voice (espeak's buzz under a
    quiet fan): the canceller's output is judged over the robot, as without the model."""
    line = frames(bytes(FRAME * 5) + _espeak_line("结束游戏") + bytes(FRAME * 20))
    robot = _espeak_line("今天猜了一个谜语，猜对了零个。")
    assert _over_robot_with_echo_taken_out(robot, line, in_output=False) == b""
    assert _over_robot_with_echo_taken_out(robot, line, in_output=True)


def test_a_line_said_while_the_robot_is_silent_reaches_the_recogniser_as_the_microphone_heard_it() -> None:
    """Full duplex gives the recogniser the canceller's output only while the robot's voice
    may be in the room: its noise suppression takes part of a quiet child's voice away."""
    mixer = RoomMixer(parse_room("noise=700,voice=0.25"))
    said = bytes(FRAME * 10) + _espeak_line("结束游戏") + bytes(48000)
    mic = b"".join(mixer.frame(said[i:i + FRAME], FRAME // 2) for i in range(0, len(said), FRAME))
    given: list[bytes] = []

    class Keeper:
        name = "keeper"

        async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
            given.append(b"".join([chunk async for chunk in audio]))
            return "结束游戏"

        async def aclose(self) -> None:
            await trio.lowlevel.checkpoint()

    async def main() -> None:
        send, receive = trio.open_memory_channel[bytes](math.inf)
        echo = EchoCanceller()
        listener = Listener(receive, Keeper(), echo=echo)
        for frame in frames(mic):
            echo.arrived(frame)
            send.send_nowait(frame)
        assert (await listener.hear()).text == "结束游戏"

    trio.run(main)
    assert len(given[0]) > 32000  # the line, its pre-roll and the silence that ended it
    assert given[0] in mic


async def test_half_duplex_judges_a_frame_deaf_when_it_arrives_not_when_it_is_read() -> None:
    """A recognition keeps the listener busy while frames wait: the robot's voice recorded
    while it spoke must not be heard when the listener reads it after the robot fell silent."""
    from agentcade.device.audio import MicFrame
    from agentcade.wiring.voice import _relay

    mic_send, mic = trio.open_memory_channel[MicFrame](math.inf)
    out, relayed = trio.open_memory_channel[bytes](math.inf)
    robot_speaks = True
    need_program("espeak-ng", package="espeak-ng")
    robot_voice = await EspeakSynthesizer(rate=16000).synthesize("猜对了，你真棒，我们再来一局吧")
    robot_voice += bytes(32000)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_relay, mic, out, None, trio.Event(), lambda: robot_speaks)
        for frame in frames(robot_voice):
            mic_send.send_nowait(MicFrame(frame, at=0.0))
        await wait_all_tasks_blocked()
        robot_speaks = False  # long before the listener reads what was queued
        mic_send.close()
    listener = Listener(relayed, ScriptedRecognizer(["不该听到"]), deaf=lambda: robot_speaks)
    with pytest.raises(MicrophoneClosed):  # nothing was heard in the robot's voice
        await listener.hear()


async def _over_the_robot(
    pcm: bytes, heard_lines: list[str], calls: list[str], *, lines: int = 1
) -> None:
    """Feed ``pcm`` to a listener while the robot speaks; record its calls in order."""
    send, receive = trio.open_memory_channel[bytes](math.inf)
    echo = EchoCanceller()
    listener = Listener(
        receive, ScriptedRecognizer(["我要猜大象", "第二句"]), echo=echo,
        # as over a canceller that has long converged (this one never heard the robot)
        vad=replace(TUNING, warming_prob=0.4, warming_ms=64),
        speaking=lambda: True, on_barge_in=lambda: calls.append("barge_in"),
        on_hold=lambda: calls.append("hold"), on_release=lambda: calls.append("release"),
    )
    async with trio.open_nursery() as nursery:

        async def hear() -> None:
            for _ in range(lines):
                heard_lines.append((await listener.hear()).text)

        nursery.start_soon(hear)
        for frame in frames(pcm):
            echo.arrived(frame)
            send.send_nowait(frame)
            await trio.lowlevel.checkpoint()
        await trio.sleep(0.5)
        nursery.cancel_scope.cancel()


def test_a_voice_over_the_robot_pauses_it_and_is_a_barge_in_once_it_goes_on() -> None:
    line = _espeak_line("我要猜大象")
    heard: list[str] = []
    calls: list[str] = []
    trio.run(_over_the_robot, bytes(FRAME * 5) + line + bytes(32000), heard, calls)
    assert calls == ["hold", "barge_in"]
    assert heard == ["我要猜大象"]


def test_a_short_sound_over_the_robot_pauses_it_and_lets_it_go_on_and_is_no_line() -> None:
    """What the canceller leaves of the robot's voice ends with it: a burst of voice under
    ``confirm_ms`` is released, and only the line after it is heard."""
    line = _espeak_line("我要猜大象")
    voiced = next(i for i in range(0, len(line), 320) if rms(line[i:i + 320]) > 500)
    burst = line[voiced:voiced + 2 * 16 * 150]  # 150 ms of voice
    heard: list[str] = []
    calls: list[str] = []
    pcm = bytes(FRAME * 5) + burst + bytes(FRAME * 10) + line + bytes(32000)
    trio.run(_over_the_robot, pcm, heard, calls)
    assert calls == ["hold", "release", "hold", "barge_in"]
    assert heard == ["我要猜大象"]


def test_a_listener_cancelled_while_the_robot_is_paused_lets_it_go_on() -> None:
    """The microphone closing (or the loop ending) while held never leaves the robot paused."""
    line = _espeak_line("我要猜大象")
    calls: list[str] = []

    async def main() -> None:
        send, receive = trio.open_memory_channel[bytes](math.inf)
        echo = EchoCanceller()
        with trio.CancelScope() as scope:

            def hold() -> None:
                calls.append("hold")
                scope.cancel()

            listener = Listener(
                receive, ScriptedRecognizer(["我要猜大象"]), echo=echo,
                vad=replace(TUNING, warming_prob=0.4, warming_ms=64), speaking=lambda: True,
                on_barge_in=lambda: calls.append("barge_in"),
                on_hold=hold,
                on_release=lambda: calls.append("release"),
            )
            for frame in frames(bytes(FRAME * 5) + line):
                echo.arrived(frame)
                send.send_nowait(frame)
            await listener.hear()

    trio.run(main)
    assert calls == ["hold", "release"]


def test_a_paused_sentence_goes_on_from_the_gap_between_syllables_just_before_the_pause() -> None:
    syllable, gap = tone(0.4, rate=24000), bytes(2 * 2400)  # 100 ms between syllables
    pcm = syllable + gap + syllable
    paused = len(syllable) + len(gap) + 2 * 24000 * 150 // 1000  # 150 ms into the second
    at = resume_point(pcm, paused, 24000)
    assert len(syllable) <= at < len(syllable) + len(gap)
    assert at % 2 == 0
    assert resume_point(pcm, 0, 24000) == 0
    assert resume_point(pcm, 10**9, 24000) <= len(pcm)


def test_a_clips_leading_silence_is_the_time_before_its_first_sound() -> None:
    hiss = array("h", [20, -20] * 800).tobytes()  # under -60 dB: still silence
    assert leading_silence(bytes(2 * 4000) + hiss + tone(0.2), 16000) == pytest.approx(0.35, abs=1e-3)
    assert leading_silence(tone(0.2, rate=24000), 24000) < 1e-3
    assert leading_silence(bytes(480), 24000) == 0.01  # nothing but silence: all of it


async def _over_a_room(
    mic: bytes, clips: dict[int, bytes], calls: list[str], heard_lines: list[str],
    tuning: Tuning = TUNING,
) -> None:
    """Feed a room's microphone (see :func:`_room_with_echo`) to a listener while the robot
    speaks, each clip played where it is laid; record the listener's calls in order."""
    send, receive = trio.open_memory_channel[bytes](math.inf)
    echo = EchoCanceller(tuning=tuning)
    listener = Listener(
        receive, ScriptedRecognizer(["七"]), echo=echo,
        vad=replace(tuning, warming_prob=0.4, warming_ms=64),  # as over a canceller long converged
        speaking=lambda: True, on_barge_in=lambda: calls.append("barge_in"),
        on_hold=lambda: calls.append("hold"), on_release=lambda: calls.append("release"),
    )
    async with trio.open_nursery() as nursery:

        async def hear() -> None:
            heard_lines.append((await listener.hear()).text)

        nursery.start_soon(hear)
        for i in range(0, len(mic) - 1919, 1920):
            if (clip := clips.get(i // 2)) is not None:
                echo.play(clip)
            echo.arrived(mic[i:i + 1920])
            send.send_nowait(mic[i:i + 1920])
            await trio.lowlevel.checkpoint()
        await trio.sleep(0.5)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("by_microphone", [True, False])
def test_a_short_word_over_the_robot_is_a_childs_when_the_microphone_heard_it_louder_than_the_echo(
    by_microphone: bool,
) -> None:
    """七 at a normal voice over the robot: the canceller takes much of it away with the
    robot's voice, and it is over before the robot's voice leaves the frames; the
    microphone heard it several times louder than the robot's echo could be."""
    import numpy as np

    tuning = TUNING if by_microphone else replace(TUNING, heard_over_echo=math.inf)
    word = np.frombuffer(_espeak_line("七"), np.int16).astype(np.float64)
    word *= 3000.0 / np.sqrt(np.mean(word[np.abs(word) > 300] ** 2))
    mic, clips = _room_with_echo(
        [(1920, 1280, 8000), (28800, 1280, 8000), (55680, 1280, 8000), (82560, 1280, 32000)]
    )
    pcm = np.frombuffer(mic, np.int16).astype(np.float64)
    at = 82560 + 1280 + 9600
    pcm[at:at + len(word)] += word
    mic = np.clip(pcm, -32768, 32767).astype(np.int16).tobytes()
    calls: list[str] = []
    heard: list[str] = []
    trio.run(_over_a_room, mic, clips, calls, heard, tuning)
    if by_microphone:
        assert calls == ["hold", "barge_in"]
        assert heard == ["七"]
    else:
        assert calls[-1] == "release"
