"""``agentcade e2e``: the guide's robot test, spoken on the simulated robot and judged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentcade.commands.e2e import PLANS, Step, _gesture, _judge
from tests.needs import need_module
from tests.processes import offline_env, run_voice_command


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_voice_command(tmp_path, "e2e", *args, timeout=300)


def test_every_builtin_game_has_a_script_from_the_guides_table() -> None:
    assert set(PLANS) == {"guess_number", "draw_guess", "riddle", "turtle_soup"}
    for plan in PLANS.values():
        whats = " ".join(s.what for s in plan.steps)
        assert "start by name" in whats
        assert "start by alias" in whats
        assert "reveals" in whats
        assert any(s.route == "end" for s in plan.steps)


def test_a_game_played_by_voice_on_the_sim_passes_every_step(tmp_path: Path) -> None:
    """The child's lines in the neural voice, heard by the robot's own recogniser."""
    need_module("faster_whisper", install="pip install -e '.[voice]'")
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    done = _run(tmp_path, "riddle")
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.splitlines()
    assert table[0].startswith("| game")
    assert sum(" ok |" in row for row in table) == len(PLANS["riddle"].steps)
    assert "Traceback" not in done.stderr


def test_an_unknown_game_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _run(tmp_path, "chess")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "chess" in done.stderr


def test_a_real_robot_is_not_heard_by_the_scenarios_script(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agentcade", "e2e", "--robot", "ws://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**offline_env(tmp_path, "ASR_", "TTS_", "VAD_"), "ASR_PROVIDER": "scripted"})
    assert done.returncode == 2
    assert "ASR_PROVIDER=scripted" in done.stderr
    assert "Traceback" not in done.stderr


def _move(pan: int, tilt: int) -> dict[str, object]:
    return {"type": "directive_executed", "call": "motion.move_to",
            "directive": f"motion.move_to(pan_deg={pan}, tilt_deg={tilt}, duration_ms=250)"}


def test_a_shake_and_a_nod_are_told_apart_from_the_moves() -> None:
    assert _gesture([_move(70, 115), _move(110, 115), _move(90, 115)]) == "shake"
    assert _gesture([_move(90, 127), _move(90, 103), _move(90, 115)]) == "nod"
    assert _gesture([]) == "none"


def _judged(step: Step, *records: dict[str, object]) -> list[str]:
    said = {"type": "speech_text", "text": "不对哦，再猜猜"}
    return _judge("riddle", step, [*records, said], revealed=None, secrets=[], heard=True,
                  shown=False).problems


def test_a_step_fails_when_it_is_routed_or_judged_otherwise() -> None:
    step = Step("是不是桌子", "wrong answer", route="forward", judged=True, gesture="shake")
    right: list[dict[str, object]] = [{"type": "main_route", "route": "forward", "game": "riddle"},
             {"type": "turn", "judged": True}, _move(70, 115), _move(110, 115)]
    assert _judged(step, *right) == []
    assert _judged(step, {"type": "main_route", "route": "model"}, *right[1:]) == [
        "routed model, expected forward"]
    assert _judged(step, right[0], {"type": "turn", "judged": False}) == [
        "not judged by code", "gesture none, expected shake"]


def test_a_hidden_answer_said_too_early_fails_the_step() -> None:
    step = Step("给我提示", "hint", route="forward")
    records = [{"type": "main_route", "route": "forward"},
               {"type": "speech_text", "text": "提示：答案是茶壶"}]
    problems = _judge("riddle", step, records, revealed=None, secrets=["茶壶"], heard=True,
                      shown=False).problems
    assert problems == ["the hidden answer was said"]
