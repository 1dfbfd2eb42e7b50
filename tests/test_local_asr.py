"""The embedded recogniser: Whisper base hearing the simulated child (the neural voice at a
child's pitch), biased with what may be said, and the listener answering the moment the child
stops."""

from __future__ import annotations

import math
from collections.abc import AsyncIterable
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from agentcade.core.judge import parse_number
from agentcade.core.skill import Skill
from agentcade.sim.child import child_voice
from agentcade.voice.listener import Listener
from agentcade.voice.local_asr import (
    UNSURE,
    LocalRecognizer,
    Recognition,
    asked,
    build_prompt,
    prompt_echo,
    unsure,
)
from agentcade.voice.tts import EspeakSynthesizer, Synthesizer
from agentcade.voice.tuning import TUNING
from agentcade.wiring.hearing import ROUND_WORDS
from tests.needs import need_module, need_program

FRAME = 1920  # 60 ms at 16 kHz
GAMES = Path(__file__).resolve().parent.parent / "games"


def game_phrases(game: str) -> list[str]:
    skill = Skill.load(GAMES / game / "SKILL.md")
    return [skill.name, *skill.vocabulary, *ROUND_WORDS]


# --- pure parts ----------------------------------------------------------------------------


def test_the_prompt_is_simplified_short_sentences_ending_in_a_filler() -> None:
    assert build_prompt(["結束遊戲", "结束游戏", "再来一局！", ""]) == "结束游戏。再来一局。嗯。"
    assert build_prompt([]) == ""


@pytest.mark.parametrize(("text", "voiced_ms", "echo"), [
    ("再来一局。", 400, True),       # 三 (0.4 s of voice) heard as the prompt's last phrase
    ("我们来玩猜数字吧。", 350, True),
    ("一。二。三。", 0, True),        # silence, heard as the prompt
    ("嗯。", 900, True),              # only the filler the prompt ends with
    ("结束游戏。", 1000, False),      # a prompt phrase really said
    ("再来一局。", 1100, False),
    ("三。", 400, False),             # not a prompt phrase: heard
])
def test_a_transcript_made_only_of_prompt_phrases_and_longer_than_the_voice_is_an_echo(
    text: str, voiced_ms: float, echo: bool,
) -> None:
    prompt = build_prompt(["我们来玩猜数字吧", "一", "二", "三", "结束游戏", "再来一局"])
    assert prompt_echo(text, prompt, voiced_ms) is echo


@pytest.mark.parametrize(("heard", "meant"), [
    ("是熊猫猫。", "是熊猫吗"),   # the question's 吗 written as the prompt's animal
    ("是孔雀蚂", "是孔雀吗"),
    ("是羊貌", "是羊吗"),
    ("蚀猪马", "是猪吗"),         # 是 by sound too
    ("睡扇子忙", "是扇子吗"),
    ("试兔子吗？", "是兔子吗"),
    ("世纪吗", "是鸡吗"),         # 纪 sounds exactly as 鸡, an expected phrase
    ("士机马", "是鸡吗"),
    ("是我牛猫", "是蜗牛吗"),
    ("是什么", "是什么"),         # 什 sounds like no expected phrase
    ("是大象吗", "是大象吗"),
    ("是斑马", "是斑马"),         # 斑 is no phrase of the game: an answer, left as it is
    ("是小猫", "是小猫"),
    ("是熊猫", "是熊猫"),
    ("是狐狸呀", "是狐狸呀"),     # ends in no 吗-like syllable
    ("我猜是熊猫猫", "我猜是熊猫猫"),  # only a line that begins with 是
])
def test_a_question_about_an_expected_phrase_whose_ma_was_misheard_is_asked(
    heard: str, meant: str,
) -> None:
    expected = frozenset({"熊猫", "孔雀", "羊", "猪", "斑马", "马", "猫", "狐狸", "扇子", "兔子", "鸡",
                          "蜗牛", "大象"})
    assert asked(heard, expected) == meant


# --- the real recogniser -------------------------------------------------------------------


@pytest.fixture(scope="module")
def recognizer() -> LocalRecognizer:
    need_module("faster_whisper", install="pip install -e '.[voice]'")
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    return trio.run(LocalRecognizer.load)


@pytest.fixture(scope="module")
def child() -> Synthesizer:
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    return trio.run(child_voice)


@pytest.mark.parametrize("answer", ["七", "三", "五", "十二", "十五"])
async def test_a_short_number_is_heard_in_guess_number(
    recognizer: LocalRecognizer, child: Synthesizer, answer: str,
) -> None:
    recognizer.bias = lambda: game_phrases("guess_number")
    pcm = await child.synthesize(answer)
    heard = await recognizer.recognize(pcm, len(pcm) / 32)
    assert heard.rstrip("。") == answer


@pytest.mark.parametrize(("game", "line"), [
    ("", "玩猜数字"), ("", "来玩海龟汤"), ("riddle", "月亮"), ("riddle", "彩虹"),
    ("draw_guess", "是小猫吗"), ("draw_guess", "是熊猫吗"), ("draw_guess", "是乌龟吗"),
    ("guess_number", "结束游戏"), ("guess_number", "给我一点提示"),
])
async def test_game_names_and_answers_are_heard_in_simplified_characters(
    recognizer: LocalRecognizer, child: Synthesizer, game: str, line: str,
) -> None:
    outside = ["玩猜数字", "玩猜谜语", "玩你画我猜", "玩海龟汤", *ROUND_WORDS]
    recognizer.bias = (lambda: game_phrases(game)) if game else (lambda: outside)
    pcm = await child.synthesize(line)
    heard = await recognizer.recognize(pcm, len(pcm) / 32)
    assert heard.rstrip("。？?") == line


async def test_silence_is_no_line_even_with_a_prompt(recognizer: LocalRecognizer) -> None:
    recognizer.bias = lambda: game_phrases("guess_number")
    assert await recognizer.recognize(bytes(32000), 0) == ""


# --- the listener: answered the moment the child stops -------------------------------------


def _voiced(pcm: bytes) -> bytes:
    """``pcm`` from its first to its last 10 ms with a voice in it (5 % of its loudest)."""
    import numpy as np

    samples = np.frombuffer(pcm, "<i2").astype(np.float32)
    loud = np.sqrt((samples[: len(samples) // 160 * 160].reshape(-1, 160) ** 2).mean(axis=1))
    voiced = np.nonzero(loud > 0.05 * loud.max())[0]
    return pcm[int(voiced[0]) * 320:(int(voiced[-1]) + 1) * 320]


async def _hear(recognizer: LocalRecognizer, pcm: bytes, actionable: int | None) -> tuple[str, bool]:
    """``pcm`` then silence through Silero and the listener; (text, early). A text is
    actionable when it holds the number ``actionable``. The silence window is 3 s here, not
    800 ms, so that a recognition slowed down by a loaded machine still ends it early."""
    send, receive = trio.open_memory_channel[bytes](math.inf)
    listener = Listener(receive, recognizer, vad=replace(TUNING, silence_ms=3000), actionable=lambda text: (
        actionable is not None and parse_number(text) == actionable))
    audio = bytes(FRAME * 5) + pcm + bytes(4 * 32000)

    async def microphone() -> None:  # frames as a robot sends them: one every 60 ms
        async with send:
            for i in range(0, len(audio), FRAME):
                send.send_nowait(audio[i:i + FRAME])
                await trio.sleep(0.06)

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(microphone)
            heard = await listener.hear()
            nursery.cancel_scope.cancel()
    return heard.text.rstrip("。"), heard.early


async def test_a_line_code_can_act_on_ends_before_the_silence_window(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    recognizer.bias = lambda: game_phrases("guess_number")
    text, early = await _hear(recognizer, await child.synthesize("我猜十五"), 15)
    assert early is True
    assert parse_number(text) == 15


async def test_a_line_code_cannot_act_on_waits_for_the_silence_window(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    recognizer.bias = lambda: game_phrases("guess_number")
    text, early = await _hear(recognizer, await child.synthesize("你今天开心吗"), None)
    assert early is False
    assert text.startswith("你今天开心")


async def test_a_child_who_pauses_mid_sentence_is_not_cut_off(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    recognizer.bias = lambda: game_phrases("guess_number")
    first, second = await child.synthesize("我猜"), await child.synthesize("十五")
    pause = bytes(int(0.5 * 32000))  # half a second: the speculation on 我猜 starts and is dropped
    text, _early = await _hear(recognizer, first + pause + second, 15)
    assert text.startswith("我猜")
    assert parse_number(text) == 15


class _Told:
    """The embedded recogniser, saying when each recognition is done (so that a test can
    hold the microphone's next frames until it is: the listener counts silence in audio, so
    the wait changes nothing but that a loaded machine cannot end the test by slowness)."""

    def __init__(self, inner: LocalRecognizer) -> None:
        self.inner = inner
        self.name = inner.name
        self.texts: list[str] = []
        self.changed = trio.Event()

    async def recognize(self, pcm: bytes, voiced_ms: float) -> str:
        text = await self.inner.recognize(pcm, voiced_ms)
        self.texts.append(text)
        self.changed.set()
        self.changed = trio.Event()
        return text

    async def transcribe(self, audio: AsyncIterable[bytes]) -> str:
        return await self.inner.transcribe(audio)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_child_who_pauses_mid_number_is_not_cut_off(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    # 十 alone is a number code acts on, but 五 may follow: 十 is recognised during the pause
    # and waits (Tuning.number_wait_ms), and the voice coming back drops it.
    recognizer.bias = lambda: game_phrases("guess_number")
    told = _Told(recognizer)
    first, second = _voiced(await child.synthesize("十")), _voiced(await child.synthesize("五"))
    pause = bytes(int(0.4 * 32000))
    send, receive = trio.open_memory_channel[bytes](math.inf)
    listener = Listener(receive, told, vad=replace(TUNING, silence_ms=800),
                        actionable=lambda text: parse_number(text) is not None)

    async def microphone() -> None:
        async with send:
            for part in (bytes(FRAME * 5) + first + pause, second + bytes(32000)):
                for i in range(0, len(part), FRAME):
                    send.send_nowait(part[i:i + FRAME])
                    await trio.sleep(0.06)
                if not told.texts:
                    await told.changed.wait()  # 十 is recognised before 五 comes

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(microphone)
            heard = await listener.hear()
            nursery.cancel_scope.cancel()
    assert told.texts[0].rstrip("。") == "十"
    assert parse_number(heard.text) == 15


# --- closed sets by sound, and lines it did not hear -----------------------------------------


@pytest.mark.parametrize("line", ["老虎", "长颈鹿", "猴子", "瓢虫", "是骆驼吗"])
async def test_a_deck_word_written_as_another_word_is_taken_by_its_sound(
    recognizer: LocalRecognizer, child: Synthesizer, line: str,
) -> None:
    # Whisper alone writes these 老蜀, 长景路中, 豪正, 调重, 失落铜漫 (the child, prompted)
    recognizer.bias = lambda: game_phrases("draw_guess")
    pcm = await child.synthesize(line)
    assert await recognizer.recognize(pcm, len(pcm) / 32) == line


async def test_a_deck_word_after_a_long_wait_is_still_taken_by_its_sound(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    # A clip longer than the encoder's least context (8 s) is encoded longer: the phrases'
    # scores on silence are taken on as long a silence (taken on 8 s, they could not be
    # compared, and the recognition failed)
    import numpy as np

    recognizer.bias = lambda: game_phrases("draw_guess")
    room = np.random.default_rng(1).normal(0, 100, int(8.5 * 16000)).astype("<i2").tobytes()
    pcm = await child.synthesize("老虎")
    assert await recognizer.recognize(room + pcm, len(pcm) / 32) == "老虎"


def _cough(seed: int) -> bytes:
    """Two sharp, noisy bursts with a low buzz (a cough, not a word)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = np.zeros(16000)
    for at in (1600, 7200):
        n = 2400
        envelope = np.exp(-np.arange(n) / 640)
        out[at:at + n] += (rng.normal(0, 9000, n) + 5000 * np.sin(np.arange(n) / 14)) * envelope
    return np.clip(out, -32767, 32767).astype("<i2").tobytes()


@pytest.mark.parametrize(("game", "seed"), [("guess_number", 2), ("guess_number", 4),
                                            ("draw_guess", 0), ("draw_guess", 3)])
async def test_a_cough_in_a_game_is_no_line(recognizer: LocalRecognizer, game: str, seed: int) -> None:
    # Whisper alone heard these coughs as 三 (a guess) and 这次我猜到的游戏
    recognizer.bias = lambda: game_phrases(game)
    assert await recognizer.recognize(_cough(seed), 300) == ""


async def test_english_in_a_game_is_no_line(recognizer: LocalRecognizer) -> None:
    need_program("espeak-ng", package="espeak-ng")
    pcm = await EspeakSynthesizer("en", rate=16000).synthesize("Hello, how are you today?")
    recognizer.bias = lambda: game_phrases("draw_guess")
    assert await recognizer.recognize(pcm, len(pcm) / 32) == ""


async def test_an_open_line_in_a_game_keeps_its_words(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    recognizer.bias = lambda: game_phrases("draw_guess")
    pcm = await child.synthesize("你今天开心吗")
    assert (await recognizer.recognize(pcm, len(pcm) / 32)).startswith("你今天开心")


def test_a_word_or_two_of_english_is_a_line_but_a_sentence_with_no_chinese_is_not() -> None:
    """OK, yes, bye bye are what a Chinese family says in English (the host understands
    them); a sentence with no Chinese is another language, refused like noise."""
    sure = -0.3
    assert not unsure(Recognition("OK", 0.1, sure))
    assert not unsure(Recognition("Yes.", 0.1, sure))
    assert not unsure(Recognition("bye bye", 0.1, sure))
    assert unsure(Recognition("Hello, how are you today?", 0.1, sure))
    assert unsure(Recognition("こんにちは", 0.1, sure))
    assert unsure(Recognition("我猜十五", 0.1, UNSURE - 0.1))
    assert not unsure(Recognition("我猜十五", 0.1, sure))
