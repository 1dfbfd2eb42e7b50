"""The neural voice: its front end, the model rewrite on the real model, no TensorFlow, the
fallback to espeak-ng."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pypinyin import Style, lazy_pinyin
from pypinyin.pinyin_dict import pinyin_dict

from agentcade.core.errors import VoiceError
from agentcade.voice.config import ServiceSettings
from agentcade.voice.phones import clauses, normalize, phones, split_syllable, to_ids
from agentcade.voice.tts import EspeakSynthesizer, NeuralSynthesizer, open_synthesizer
from tests.needs import need_module, need_program


@pytest.fixture(scope="module")
def voice_dir() -> Path:
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    from agentcade.voice.models import ModelMissing, baker_voice_dir

    try:
        return baker_voice_dir()
    except ModelMissing as exc:
        pytest.fail(str(exc))


def _mapper(voice_dir: Path) -> dict[str, int]:
    import json

    return dict(json.loads((voice_dir / "baker_mapper.json").read_text("utf-8"))["symbol_to_id"])


# --- the front end ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "reading"), [
    ("猜中了", "c ai1 #0 zh ong4 #0 l e5"),
    ("重新开始", "ch ong2 #0 x in1 #0 k ai1 #0 sh iii3"),
    ("长大了", "zh ang3 #0 d a4 #0 l e5"),
    ("一个", "^ i2 #0 g e4"),
    ("还有三次", "h ai2 #0 ^ iou3 #0 s an1 #0 c ii4"),
    ("绿色", "l v4 #0 s e4"),
])
def test_polyphones_and_full_finals_are_read_as_a_child_hears_them(text: str, reading: str) -> None:
    assert " ".join(phones(text)) == f"sil {reading} sil"


def test_numbers_are_spelled_in_chinese() -> None:
    assert normalize("1到20之间") == "一到二十之间"
    assert normalize("还有2次") == "还有两次"
    assert normalize("3.5分") == "三点五分"


def test_sentences_pause_at_punctuation_and_not_after_nothing() -> None:
    parts = clauses("不对哦，比五十大。再猜猜！")
    assert [c.text for c in parts] == ["不对哦", "比五十大", "再猜猜"]
    assert parts[0].pause < parts[1].pause
    assert clauses("……") == []


def test_every_syllable_pypinyin_writes_has_baker_phones(voice_dir: Path) -> None:
    symbols = _mapper(voice_dir)
    syllables = {s for s in lazy_pinyin("".join(map(chr, pinyin_dict)), style=Style.NORMAL,
                                        errors="ignore") if s.isalpha()}
    assert len(syllables) > 380
    for syllable in sorted(syllables):
        initial, final = split_syllable(syllable)
        assert initial in symbols, syllable
        assert all(final + tone in symbols for tone in "12345"), syllable
    assert to_ids(phones("你好"), symbols)[-1] == symbols["eos"]


# --- the models ----------------------------------------------------------------------------


def test_the_flex_random_uniform_ops_become_litert_builtins_in_the_real_model(voice_dir: Path) -> None:
    from ai_edge_litert.interpreter import Interpreter

    from agentcade.voice.neural import RANDOM_UNIFORM, builtin_random_uniform, operator_codes

    original = (voice_dir / "fastspeech2_quan.tflite").read_bytes()
    assert (32, "FlexRandomUniform") in operator_codes(original)  # 32: CUSTOM
    with pytest.raises(RuntimeError, match="Select TensorFlow op"):  # LiteRT cannot run it
        _invoke(Interpreter(model_content=original))
    rewritten = builtin_random_uniform(original)
    codes = operator_codes(rewritten)
    assert not any(custom for _, custom in codes)
    assert (RANDOM_UNIFORM, "") in codes
    mel = _invoke(Interpreter(model_content=rewritten))
    assert mel.shape[0] == 1
    assert mel.shape[2] == 80  # a mel spectrogram, frames as long as the phones say


def _invoke(interpreter: object) -> Any:
    """FastSpeech2 run on a few phone ids; its mel spectrogram."""
    import numpy as np

    it: Any = interpreter
    inputs = it.get_input_details()
    it.resize_tensor_input(inputs[0]["index"], [1, 6])
    it.allocate_tensors()
    values = (np.array([[1, 8, 33, 2, 22, 1]], np.int32), np.array([0], np.int32),
              np.array([1.0], np.float32), np.array([1.0], np.float32), np.array([1.0], np.float32))
    for detail, value in zip(inputs, values, strict=True):
        it.set_tensor(detail["index"], value)
    it.invoke()
    return it.get_tensor(it.get_output_details()[1]["index"])


def test_the_voice_runs_without_tensorflow(voice_dir: Path) -> None:
    code = ("import sys, trio\n"
            "from agentcade.voice.tts import NeuralSynthesizer\n"
            "async def main():\n"
            "    voice = await NeuralSynthesizer.load()\n"
            "    pcm = await voice.synthesize('你好，我是小懒。')\n"
            "    assert len(pcm) > 24000, len(pcm)\n"
            "trio.run(main)\n"
            "assert not any(m == 'tensorflow' or m.startswith('tensorflow.') for m in sys.modules)\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.stdout.strip() == "ok", done.stderr
    assert "XNNPACK" not in done.stderr  # the runtime's own chatter is not shown


async def test_a_sentence_is_24_khz_speech_with_a_pause_per_comma(voice_dir: Path) -> None:
    voice = await NeuralSynthesizer.load()
    one = await voice.synthesize("不对哦")
    two = await voice.synthesize("不对哦，不对哦")
    assert 0.3 < len(one) / 48000 < 2.0
    assert len(two) > 2 * len(one) + int(0.15 * 48000)  # the comma's pause


async def test_a_sentence_begins_with_its_voice_not_with_silence(voice_dir: Path) -> None:
    from agentcade.voice.neural import LEAD_S
    from agentcade.voice.pcm import leading_silence

    voice = await NeuralSynthesizer.load()
    # The model opened these with 263-315 ms of silence (不知道: 44).
    for text in ("七", "结束游戏", "我猜十五", "不对哦，比十还大不少。", "不知道"):
        pcm = await voice.synthesize(text)
        assert leading_silence(pcm, 24000) <= LEAD_S + 0.005, text


async def test_where_the_neural_voice_cannot_load_espeak_speaks_and_one_line_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_program("espeak-ng", package="espeak-ng")
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("AGENTCADE_MODELS_DIR", str(blocker / "models"))
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)  # no bundle either
    said: list[str] = []
    voice = await open_synthesizer(ServiceSettings(provider="neural"), warn=said.append)
    assert isinstance(voice, EspeakSynthesizer)
    assert len(said) == 1
    assert "espeak" in said[0]
    assert "\n" not in said[0]


async def test_the_neural_voice_is_not_made_by_the_synchronous_factory() -> None:
    from agentcade.voice.tts import make_synthesizer

    with pytest.raises(VoiceError):
        make_synthesizer(ServiceSettings(provider="neural"))
