"""``agentcade e2e``: the guide's robot test, spoken on the simulated robot and judged.

The steps are each game's own: the ``robot:`` list of its ``scenarios.yaml``, played by the
one scenario engine (``agentcade.check.scenarios``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentcade.check.robot_steps import gesture_of, judge_robot_step
from agentcade.check.scenarios import (
    Step,
    fill_line,
    load_robot_scenarios,
)
from agentcade.cli import main
from agentcade.commands.e2e import builtin_plans
from tests.needs import need_module
from tests.processes import offline_env, run_voice_command

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_voice_command(tmp_path, "e2e", *args, timeout=300)


def test_every_builtin_game_has_robot_steps_from_the_guides_table() -> None:
    plans = builtin_plans([])
    assert [p.game for p in plans] == ["draw_guess", "guess_number", "riddle", "turtle_soup"]
    for plan in plans:
        whats = " ".join(s.name for s in plan.steps)
        assert "start by name" in whats
        assert "start by alias" in whats
        assert "reveals" in whats
        assert any(s.route == "end" for s in plan.steps)


def test_the_e2e_command_names_no_game_and_reads_no_game_attribute() -> None:
    source = (ROOT / "agentcade" / "commands" / "e2e.py").read_text(encoding="utf-8")
    for word in ("guess_number", "draw_guess", "riddle", "turtle_soup", ".target", ".deck", ".puzzle"):
        assert word not in source


def test_a_game_played_by_voice_on_the_sim_passes_every_step(tmp_path: Path) -> None:
    """The child's lines in the neural voice, heard by the robot's own recogniser."""
    need_module("faster_whisper", install="pip install -e '.[voice]'")
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    done = _run(tmp_path, "riddle")
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.splitlines()
    assert table[0].startswith("| game")
    [plan] = builtin_plans(["riddle"])
    assert sum(" ok |" in row for row in table) == len(plan.steps)
    assert "Traceback" not in done.stderr


def test_an_unknown_game_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["e2e", "chess"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentcade e2e: no built-in game chess")
    assert len(err.strip().splitlines()) == 1


def test_a_broken_scenarios_file_of_a_game_is_one_line_with_its_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "scenarios.yaml").write_text(
        "scenarios:\n  - name: x\n    steps:\n      - start: 玩\n"
        "robot:\n  - name: y\n    steps:\n      - say: 玩\n      - shout: 你好\n",
        encoding="utf-8",
    )
    assert main(["e2e", "--game", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'scenarios.yaml'}:9: robot scenario 'y', step 2: unknown step kind or key ['shout']" in err
    assert len(err.strip().splitlines()) == 1


def test_a_robot_step_is_said_not_started(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scenarios.yaml").write_text(
        "scenarios:\n  - name: x\n    steps:\n      - start: 玩\n"
        "robot:\n  - name: y\n    steps:\n      - start: 玩\n",
        encoding="utf-8",
    )
    assert main(["e2e", "--game", str(tmp_path)]) == 2
    assert ":8: robot scenario 'y', step 1: a robot step is said (say:)" in capsys.readouterr().err


def test_a_game_at_an_address_needs_its_scenarios_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["e2e", "--game", "http://127.0.0.1:9/"]) == 2
    err = capsys.readouterr().err
    assert "needs --scenarios FILE" in err
    assert len(err.strip().splitlines()) == 1


def test_under_the_daemon_outside_a_private_network_it_is_refused_in_one_line_exit_4(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Daemon's pairing broadcasts UDP: it never runs on this machine's own network."""
    from agentcade.commands import e2e

    monkeypatch.delenv("ASR_PROVIDER", raising=False)
    monkeypatch.setattr(e2e, "namespace_unavailable", lambda: "making a private network namespace needs root")
    assert main(["e2e", "--robot", "daemon", "riddle"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("agentcade e2e: --robot daemon runs the SDK's real Daemon only inside a "
                          "private network namespace")
    assert "needs root" in err
    assert len(err.strip().splitlines()) == 1


def test_under_the_daemon_a_game_of_ones_own_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["e2e", "--robot", "daemon", "--game", str(ROOT / "games" / "riddle")]) == 2
    err = capsys.readouterr().err
    assert "--robot daemon plays the built-in games" in err
    assert len(err.strip().splitlines()) == 1


def test_a_real_robot_is_not_heard_by_the_scenarios_script(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agentcade", "e2e", "--robot", "ws://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**offline_env(tmp_path, "ASR_", "TTS_", "VAD_"), "ASR_PROVIDER": "scripted"})
    assert done.returncode == 2
    assert "ASR_PROVIDER=scripted" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_answer_is_what_the_game_reports_unrevealed_and_a_wrong_one_is_not_it() -> None:
    step = Step("message", "{wrong}还是{answer}", line=7, wrong=("桌子", "一张桌子", "雨伞"))
    assert fill_line(step, ["桌子"]) == ("雨伞还是桌子", None)


def test_an_answer_from_a_game_that_reports_nothing_is_a_clear_line() -> None:
    step = Step("message", "是{answer}吗", line=7)
    line, why = fill_line(step, None)
    assert line == ""
    assert why is not None
    assert "this game reports none" in why
    assert "nothing to stand for" in str(fill_line(step, [])[1])


def _move(pan: int, tilt: int) -> dict[str, object]:
    return {"type": "directive_executed", "call": "motion.move_to",
            "directive": f"motion.move_to(pan_deg={pan}, tilt_deg={tilt}, duration_ms=250)"}


def test_a_shake_and_a_nod_are_told_apart_from_the_moves() -> None:
    assert gesture_of([_move(70, 115), _move(110, 115), _move(90, 115)]) == "shake"
    assert gesture_of([_move(90, 127), _move(90, 103), _move(90, 115)]) == "nod"
    assert gesture_of([]) == "none"


def _judged(step: Step, *records: dict[str, object], playing: bool = True) -> list[str]:
    said = {"type": "speech_text", "text": "不对哦，再猜猜"}
    return judge_robot_step(step, [*records, said], revealed=None, secrets=[], heard=True,
                            shown=False, playing=playing)


def test_a_step_fails_when_it_is_routed_or_judged_otherwise() -> None:
    step = Step("message", "是不是桌子", name="wrong answer", route="forward", judged=True, gesture="shake")
    right: list[dict[str, object]] = [{"type": "main_route", "route": "forward", "game": "riddle"},
             {"type": "turn", "judged": True}, _move(70, 115), _move(110, 115)]
    assert _judged(step, *right) == []
    assert _judged(step, {"type": "main_route", "route": "model"}, *right[1:]) == [
        "routed model, expected forward"]
    assert _judged(step, right[0], {"type": "turn", "judged": False}) == [
        "not judged by code", "gesture none, expected shake"]


def test_a_step_expecting_the_game_ended_fails_while_it_runs() -> None:
    step = Step("message", "不玩了", route="end", session="ended")
    routed: dict[str, object] = {"type": "main_route", "route": "end"}
    assert _judged(step, routed, playing=False) == []
    assert _judged(step, routed, playing=True) == ["the game still runs"]


def test_a_step_expecting_a_directive_fails_without_it() -> None:
    step = Step("message", "我猜是大象", device=("motion.play_action",))
    assert _judged(step, _move(70, 115)) == ["expected device call motion.play_action; got ['motion.move_to']"]


def test_a_hidden_answer_said_too_early_fails_the_step() -> None:
    step = Step("message", "给我提示", route="forward")
    records = [{"type": "main_route", "route": "forward"},
               {"type": "speech_text", "text": "提示：答案是茶壶"}]
    problems = judge_robot_step(step, records, revealed=None, secrets=["茶壶"], heard=True,
                                shown=False, playing=True)
    assert problems == ["the hidden answer was said"]


def test_the_guides_robot_steps_example_loads(tmp_path: Path) -> None:
    guide = (ROOT / "docs" / "guide.zh-CN.md").read_text(encoding="utf-8")
    section = guide.split("#### 写真机测试的台词", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "scenarios.yaml"
    path.write_text(example, encoding="utf-8")
    [scenario] = load_robot_scenarios(path)
    assert [s.route for s in scenario.steps] == ["start", "forward", None, "end"]


def test_an_answer_pattern_says_the_part_of_the_reported_answer_it_names() -> None:
    step = Step("message", "我猜{answer}", line=7, answer="数是(.+)")
    assert fill_line(step, ["数是八", "就是八"]) == ("我猜八", None)
    assert "matches 'answer'" in str(fill_line(step, ["八"])[1])
