"""The robot's voice, heard: its clips on the simulated speaker recognised by an offline ear.

A 猜数字 session is played by voice on the simulated robot (espeak-ng speaks for the child,
the scripted recogniser hears it, the game answers, espeak-ng speaks for the robot). Every
clip the simulated speaker received is then given to Whisper base
(:class:`agentcade.testing.ear.Ear`) and scored by the share of its sentence's syllables
heard. The default voice must be intelligible (median ≥ 0.4); the same check must fail
Debian's ``cmn`` voice, which reads Chinese through English letter names.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from agentcade.testing.ear import Ear, EarMissing, heard_share
from agentcade.voice.tts import EspeakSynthesizer
from tests.needs import need_module, need_program
from tests.test_voice_e2e import voice_stack

LINES = ["玩猜数字", "五十", "给我一点提示", "二十五", "结束游戏"]
INTELLIGIBLE = 0.4


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


@pytest.fixture(scope="module")
def ear() -> Iterator[Ear]:
    need_module("faster_whisper", install="pip install -e '.[ear]'")
    try:
        yield Ear()
    except EarMissing as exc:  # pragma: no cover - the extra installs both
        pytest.fail(str(exc))


async def _scores(ear: Ear, voice: str) -> list[tuple[str, str, float]]:
    need_program("espeak-ng", package="espeak-ng")
    with trio.fail_after(240):
        async with voice_stack(LINES, tts=EspeakSynthesizer(voice)) as stack:
            await stack.say(*LINES)
    sentences = [r["sentence"] for r in stack.records.of("speech_start")]
    clips = stack.device.audio.clips
    assert len(clips) == len(sentences) >= len(LINES)
    out = []
    for sentence, clip in zip(sentences, clips, strict=True):
        heard = await trio.to_thread.run_sync(ear.hear, clip.pcm, 24000)
        out.append((sentence, heard, heard_share(sentence, heard)))
    return out


def _report(scores: list[tuple[str, str, float]]) -> str:
    return "\n".join(f"{share:.2f}  {sentence}  ->  {heard}" for sentence, heard, share in scores)


async def test_the_robots_default_voice_is_intelligible_to_an_ear(ear: Ear) -> None:
    scores = await _scores(ear, "")
    median = statistics.median(s for _, _, s in scores)
    print(f"default voice: median {median:.2f}\n{_report(scores)}")
    assert median >= INTELLIGIBLE, _report(scores)


async def test_the_same_ear_rejects_the_cmn_voice(ear: Ear) -> None:
    scores = await _scores(ear, "cmn")
    median = statistics.median(s for _, _, s in scores)
    print(f"cmn voice: median {median:.2f}\n{_report(scores)}")
    assert median < INTELLIGIBLE, _report(scores)


def test_heard_share_counts_syllables_in_order_and_spells_numbers() -> None:
    assert heard_share("不对哦，比五十大", "不对哦比50大") == 1.0
    assert heard_share("不对哦，比五十大", "不对") == pytest.approx(2 / 7)
    assert heard_share("猜猜我是谁", "3-3-5-1-5") == 0.0
    assert heard_share("一百零三", "103") == 1.0
