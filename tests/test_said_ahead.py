"""Saying what code already knows: the first sound of a reply does not wait for the whole
sentence's synthesis, nor for a clause the voice has said or prepared before.

The real parts: the neural voice on the simulated robot; for the verdict, the whole voice
pipeline (the simulated child's voice into the microphone, Silero, Whisper base with its
speculative recognition and early end, the main agent, 猜数字, the robot's voice).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import OfflineMainModel
from agentcade.sim import SimDevice, open_sim_robot
from agentcade.sim.child import child_voice
from agentcade.testing import recording_trace
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.voice.neural import Said
from agentcade.voice.pcm import leading_silence
from agentcade.voice.phones import clauses, first_clause
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.speaker import REPLY_LEAD_S, VoiceRobot
from agentcade.voice.tts import NeuralSynthesizer, Synthesizer
from agentcade.wiring.pipeline import open_pipeline
from agentcade.wiring.voice import NOT_HEARD, VoiceLoop, running, say_into_microphone
from tests.needs import need_module

SPEED = 4.0


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


@pytest.fixture(scope="module")
def voice() -> NeuralSynthesizer:
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    return trio.run(NeuralSynthesizer.load)


# --- pure parts ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "split"), [
    ("比十还大不少，你还有四次机会。", ("比十还大不少，", "你还有四次机会。")),
    ("给你一个提示：它会飞。", ("给你一个提示：", "它会飞。")),
    ("猜中了！", None),
    ("好，", None),  # nothing after the first clause
    ("1,000个苹果，你信吗？", ("1,000个苹果，", "你信吗？")),  # a number's comma is no clause's end
])
def test_a_sentence_is_cut_after_its_first_clause_when_both_parts_are_spoken(
    text: str, split: tuple[str, str] | None,
) -> None:
    assert first_clause(text) == split


def test_what_the_voice_keeps_drops_the_least_recently_said_first() -> None:
    said = Said(limit=10)
    said.put("一", b"1111")
    said.put("二", b"2222")
    assert said.get("一") == b"1111"  # 一 said again: 二 is now the oldest
    said.put("三", b"3333")
    assert "二" not in said
    assert said.get("一") == b"1111"
    assert said.get("三") == b"3333"


def test_a_voice_that_keeps_nothing_finds_nothing() -> None:
    said = Said()
    said.enabled = False
    said.put("一", b"1111")
    assert said.get("一") is None


# --- the robot's voice ---------------------------------------------------------------------


async def test_a_replys_first_clause_is_played_alone_with_the_pause_after_it(
    voice: NeuralSynthesizer,
) -> None:
    trace, records = recording_trace()
    async with open_sim_robot(device=SimDevice(audio_speed=SPEED)) as sim:
        robot = VoiceRobot(sim, voice, trace=trace, print_speech=False)
        await robot.speak("比十还大不少，你还有四次机会。")
        clips = [clip.pcm for clip in sim.device.audio.clips]
    assert [r["sentence"] for r in records.of("speech_start")] == ["比十还大不少，", "你还有四次机会。"]
    whole = await voice.synthesize("比十还大不少，你还有四次机会。")
    assert whole.endswith(b"".join(clips))  # said in two clips, it is the same sentence,
    assert leading_silence(clips[0], 24000) <= REPLY_LEAD_S  # begun at its voice
    silent = bytes(2 * int(0.15 * 24000))
    assert clips[0].endswith(silent)  # the comma's pause comes before the rest


async def test_a_voice_other_than_the_neural_one_says_each_sentence_whole() -> None:
    class Plain:
        name = "plain"

        async def synthesize(self, text: str) -> bytes:
            await trio.lowlevel.checkpoint()
            return b"\x10\x00" * 2400 * len(text)

        async def aclose(self) -> None:
            await trio.lowlevel.checkpoint()

    trace, records = recording_trace()
    async with open_sim_robot(device=SimDevice(audio_speed=SPEED)) as sim:
        robot = VoiceRobot(sim, Plain(), trace=trace, print_speech=False)
        await robot.speak("比十还大不少，你还有四次机会。")
    assert [r["sentence"] for r in records.of("speech_start")] == ["比十还大不少，你还有四次机会。"]


async def test_lines_prepared_ahead_are_kept_clause_by_clause(voice: NeuralSynthesizer) -> None:
    voice.said.enabled = True
    await voice.prepare(["猜对了，谜底就是彩虹！", "不对哦，再想想。"])
    assert all(clause in voice.said for clause in ("猜对了", "谜底就是彩虹", "不对哦", "再想想"))


async def test_a_voice_heard_stops_what_is_prepared_ahead_after_the_clause_in_progress(
    voice: NeuralSynthesizer,
) -> None:
    voice.said.enabled = True
    lines = ["比一还大不少，你还有四次机会。", "比二还大不少，你还有四次机会。", "比三还大不少，你还有四次机会。"]
    async with open_sim_robot(device=SimDevice(audio_speed=SPEED)) as sim:
        robot = VoiceRobot(sim, voice, print_speech=False)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(robot.prepare, lines)
            await trio.testing.wait_all_tasks_blocked()  # the first clause is being synthesised
            robot.voice_heard()
    assert [clauses(line)[0].text in voice.said for line in lines] == [True, False, False]


async def test_the_first_words_of_the_hosts_own_lines_are_synthesised_once_the_robot_listens(
    voice: NeuralSynthesizer,
) -> None:
    voice.said.enabled = True
    async with open_sim_robot(device=SimDevice(audio_speed=SPEED)) as sim:
        robot = VoiceRobot(sim, voice, print_speech=False)
        async with open_pipeline(robot, builtin_dir=builtin_games_dir(), remote=[],
                                 model=OfflineMainModel) as (agent, _):
            lines = [NOT_HEARD, *agent.fixed_lines()]
            firsts = [clauses(line)[0].text for line in lines]
            loop = VoiceLoop(agent, robot, ScriptedRecognizer([]), greet=False)
            with trio.fail_after(60):
                async with running(loop):
                    await loop.prepared.wait()
    assert [first for first in firsts if first not in voice.said] == []
    assert clauses(NOT_HEARD)[1].text not in voice.said  # the rest is said while they play


# --- a verdict synthesised ahead --------------------------------------------------------------


@pytest.fixture(scope="module")
def recognizer() -> LocalRecognizer:
    need_module("faster_whisper", install="pip install -e '.[voice]'")
    return trio.run(LocalRecognizer.load)


@pytest.fixture(scope="module")
def child() -> Synthesizer:
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    return trio.run(child_voice)


async def test_a_verdict_synthesised_ahead_for_another_guess_is_never_said_for_this_one(
    recognizer: LocalRecognizer, child: Synthesizer,
) -> None:
    # 猜数字 gives the verdict of every number ahead, and the robot's voice synthesises their
    # first words while the child thinks: 十五's among them. The child says 十六: the robot
    # says 十六's verdict, and its sound is that verdict's own.
    trace, records = recording_trace()
    device = SimDevice()
    robot_voice = await NeuralSynthesizer.load()
    fifteen = [f"比十五还{way}{much}" for way in "大小" for much in ("一些", "不少")] + ["猜中了"]
    with trio.fail_after(240):
        async with open_sim_robot(device=device) as sim:
            robot = VoiceRobot(sim, robot_voice, trace=trace, print_speech=False)
            async with open_pipeline(robot, builtin_dir=builtin_games_dir(), remote=[],
                                     model=OfflineMainModel, trace=trace) as (agent, _):
                loop = VoiceLoop(agent, robot, recognizer, trace=trace, greet=False)
                async with running(loop):
                    mic = device.audio.microphone
                    await say_into_microphone(loop, mic, ["玩猜数字"], child.synthesize, trace=trace)
                    await agent.output.wait_prepared()
                    assert any(clause in robot_voice.said for clause in fifteen)
                    mark, clips = len(records), len(device.audio.clips)
                    await say_into_microphone(loop, mic, ["十六"], child.synthesize, trace=trace)
                    # The reply to 十六, said: leaving the game at shutdown then reveals 十五.
                    replied = records[mark:]
    heard = [r["text"] for r in replied if r["type"] == "asr_final"]
    assert [text.rstrip("。") for text in heard] == ["十六"]
    said = [r["sentence"] for r in replied if r["type"] == "speech_start"]
    assert "十六" in "".join(said)
    assert "十五" not in "".join(said)
    fresh = await NeuralSynthesizer.load()  # has said nothing: no audio kept from before
    fresh.said.enabled = False
    first = said[0]  # a first clause said alone keeps its pause
    expected = await fresh.synthesize(first, pause_after=first[-1] in "，、；：—,;:")
    assert expected.endswith(device.audio.clips[clips].pcm)  # begun at its voice
    assert len(device.audio.clips[clips].pcm) > len(expected) - 0.05 * 48000
