"""``agentcade run`` as a family starts it: no ASR set yet, a room option, a recording."""

from __future__ import annotations

import subprocess
import sys
import wave
from pathlib import Path

import httpx
import pytest
import trio

from agentcade.testing.fake_openai import FakeOpenAI
from agentcade.testing.process import AgentcadeProcess
from tests.needs import need_program
from tests.processes import offline_env, run_voice_command


def _voice_env(home: Path) -> dict[str, str]:
    return offline_env(home, "ASR_", "TTS_", "VAD_")


def _run(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``agentcade run ARGS`` with the offline model and no speech settings in ``home``."""
    return run_voice_command(home, "run", *args, timeout=timeout)


def _scenario(folder: Path, text: str) -> str:
    """A ``--say-file`` with ``text`` in ``folder``; its path."""
    path = folder / "s.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _token(html: str) -> str:
    return html.split('name="agentcade-token" content="', 1)[1].split('"', 1)[0]


async def test_run_that_cannot_hear_keeps_running_and_listens_once_the_page_saves_asr(
    nursery: trio.Nursery, fake: FakeOpenAI, tmp_path: Path
) -> None:
    need_program("espeak-ng", package="espeak-ng")
    blocker = tmp_path / "not-a-folder"  # the embedded recogniser cannot be made here
    blocker.write_text("", encoding="utf-8")
    env = {**_voice_env(tmp_path), "AGENTCADE_MODELS_DIR": str(blocker / "models")}
    proc = await AgentcadeProcess.start(nursery, env, "run", "--robot", "sim", "--sim-speed", "4")
    try:
        url = (await proc.expect(r"实时面板：(http://127\.0\.0\.1:\d+/)", limit=60)).group(1)
        asked = await proc.expect(r"ASR_PROVIDER.*#voice", limit=30)
        assert "Traceback" not in proc.output
        async with httpx.AsyncClient() as http:
            home = await http.get(url)
            assert home.status_code == 303
            assert home.headers["location"] == "/settings#voice"
            page = await http.get(url + "settings")
            saved = await http.post(url + "api/settings", headers={"X-Agentcade-Token": _token(page.text)},
                                    json={"section": "voice", "values": {
                                        "ASR_PROVIDER": "openai", "ASR_BASE_URL": fake.url}})
            assert saved.status_code == 200, saved.text
            await proc.expect("小懒在听（openai", after=asked.end(), limit=30)
            assert (await http.get(url)).status_code == 200  # the live view, now that it hears
    finally:
        await proc.stop()
    assert "Traceback" not in proc.output


@pytest.mark.parametrize(("room", "says"), [
    ("loud=3", "unknown key 'loud'"),
    ("noise=9000", "noise must be between 0 and 8000"),
    ("voice=abc", "voice must be a number"),
    ("bursts=maybe", "bursts is on or off"),
])
def test_a_bad_room_is_one_line_and_exit_2(tmp_path: Path, room: str, says: str) -> None:
    done = _run(tmp_path, "--robot", "sim", "--room", room, "--no-pages")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert says in lines[0]


def test_a_room_needs_the_simulated_robot(tmp_path: Path) -> None:
    done = _run(tmp_path, "--robot", "ws://127.0.0.1:9", "--room", "noise=700")
    assert done.returncode == 2
    assert "--robot sim" in done.stderr


def test_an_unwritable_record_folder_is_one_line_and_exit_1(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    done = _run(tmp_path, "--robot", "sim", "--say-file", _scenario(tmp_path, "有什么游戏\n"),
                "--record", str(blocker / "rec"), "--no-pages")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "--record" in lines[0]


def test_a_recorded_session_has_what_was_said_and_heard_in_one_sequence(tmp_path: Path) -> None:
    need_program("espeak-ng", package="espeak-ng")
    folder = tmp_path / "rec"
    done = _run(tmp_path, "--robot", "sim", "--say-file", _scenario(tmp_path, "有什么游戏\n"),
                "--record", str(folder), "--no-pages", "--room", "noise=300", "--sim-speed", "4",
                timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"{i:03d}-{kind}.wav" for i, kind in enumerate(
        [n.split("-", 1)[1].removesuffix(".wav") for n in names], start=1)]
    kinds = [n.split("-", 1)[1] for n in names]
    heard_at = kinds.index("heard.wav")
    assert kinds[:heard_at]
    assert set(kinds[:heard_at]) == {"robot.wav"}
    assert "robot.wav" in kinds[heard_at + 1:]  # then the answer
    for name, rate in ((names[0], 24000), (names[heard_at], 16000)):
        with wave.open(str(folder / name), "rb") as wav:
            assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (rate, 1, 2)
            assert wav.getnframes() / rate > 0.3


def test_settings_name_the_trace_file_and_record_folder_of_a_run_given_no_options(
    tmp_path: Path,
) -> None:
    """An Application gets no arguments: AGENTCADE_TRACE_FILE and AGENTCADE_RECORD_DIR."""
    need_program("espeak-ng", package="espeak-ng")
    trace, folder = tmp_path / "logs" / "trace.jsonl", tmp_path / "rec"
    env = {**_voice_env(tmp_path), "AGENTCADE_TRACE_FILE": str(trace),
           "AGENTCADE_RECORD_DIR": str(folder)}
    done = subprocess.run(
        [sys.executable, "-m", "agentcade", "run", "--robot", "sim", "--say-file",
         _scenario(tmp_path, "有什么游戏\n"), "--no-pages", "--sim-speed", "4"],
        capture_output=True, text=True, env=env, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r["text"] for r in _records(trace, "utterance")] == ["有什么游戏"]
    kinds = {p.name.split("-", 1)[1] for p in folder.iterdir()}
    assert kinds == {"robot.wav", "heard.wav"}


def _records(path: Path, kind: str) -> list[dict[str, object]]:
    import json

    lines = path.read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("type") == kind]


def _problems(stderr: str) -> list[str]:
    """What ``run`` said on stderr besides the notice that it uses the offline model."""
    return [line for line in stderr.splitlines() if "离线模型" not in line]


def test_by_default_a_child_talking_over_the_robot_stops_it(tmp_path: Path) -> None:
    """The family's default barge-in (``BARGE_IN`` unset) at real time: a line over the
    greeting starts the game, a line over the riddle ends it; both stop the robot by voice.

    Spoken with espeak-ng both ways under a quiet fan and recognised by script: the room
    where what the model of the robot's echo leaves of espeak's buzz is heard (the robot must
    not take it for a child: in 3 runs of 15 it did while the model was trusted by its
    sound alone, before Silero was asked too)."""
    need_program("espeak-ng", package="espeak-ng")
    scenario = _scenario(tmp_path, "/over 3000 玩猜谜语\n/over 900 结束游戏\n")
    trace = tmp_path / "trace.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "agentcade", "run", "--robot", "sim", "--say-file", scenario,
         "--no-pages", "--room", "noise=300,child=espeak", "--trace-file", str(trace)],
        capture_output=True, text=True, timeout=240, check=False,
        env={**_voice_env(tmp_path), "ASR_PROVIDER": "scripted", "TTS_PROVIDER": "espeak"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r["by"] for r in _records(trace, "barge_in")] == ["voice", "voice"]
    assert [r["text"] for r in _records(trace, "utterance")] == ["玩猜谜语", "结束游戏"]
    assert [r["game"] for r in _records(trace, "game_cleared")] == ["riddle"]
    assert _problems(done.stderr) == []


def test_a_simulated_robot_faster_than_twice_real_time_is_stopped_by_touch_and_says_so(
    tmp_path: Path,
) -> None:
    need_program("espeak-ng", package="espeak-ng")
    done = _run(tmp_path, "--robot", "sim", "--say-file", _scenario(tmp_path, "有什么游戏\n"),
                "--no-pages", "--sim-speed", "8", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = _problems(done.stderr)
    assert "8 倍" in line
    assert "摸后背" in line
    assert "--sim-speed 2" in line
    assert "它说话时摸一下后背可以打断它" in done.stdout
