"""Every knob of the listening path lives in one table (agentcade/voice/tuning.py)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import agentcade.voice
from agentcade.core.settings import load_settings_spec
from agentcade.voice.config import SETTINGS_FILE, load_voice_settings, voice_settings_spec
from agentcade.voice.tuning import SETTING_KNOBS, TUNING, Tuning

VOICE = Path(agentcade.voice.__file__).parent
LISTENING = ("listener", "turn_taking", "vad", "echo", "echo_model")
"""The modules that decide what is heard and when the robot stops."""

ALLOWED: dict[str, dict[float, str]] = {
    "*": {0: "zero", 1: "one", 2: "bytes per sample, halves", 1000: "ms per second"},
    "vad": {512: "Silero's chunk (the model's input size)", 3: "a third of the chunks heard "
            "before judging", 64: "a chunk's margin of pre-roll beyond a start"},
    "echo": {1e-9: "no division by zero", 256: "frames of clock kept", 10: "10**12: never",
             12: "10**12: never", 64: "frames of the robot's loudness kept (> lag + reverb)",
             16: "the fastest simulated robot", 500: "a voice's highest pitch (Hz)",
             60: "a voice's lowest pitch (Hz)", 0.5: "an octave down (half the period)"},
    "echo_model": {4: "a quarter of the frames measured before judging",
                   32767: "int16", 32768: "int16"},
}
"""Numeric literals that are units, sizes or arithmetic, not knobs (and why)."""


def _literals(module: str) -> set[float]:
    tree = ast.parse((VOICE / f"{module}.py").read_text(encoding="utf-8"))
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)}


def test_no_listening_module_holds_a_number_that_is_not_in_the_tuning_table() -> None:
    stray = {module: sorted(_literals(module) - set(ALLOWED["*"]) - set(ALLOWED.get(module, {})))
             for module in LISTENING}
    assert {module: numbers for module, numbers in stray.items() if numbers} == {}


def test_the_listener_stays_a_thin_edge_of_the_turn_taking_machine() -> None:
    """What is decided lives in the sans-IO machine and the table; the trio edge only feeds
    it frames and carries out its decisions (issue: an edge of at most 200 lines)."""
    lines = (VOICE / "listener.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200


def test_every_knob_says_what_it_trades() -> None:
    source = (VOICE / "tuning.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    [table] = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Tuning"]
    body = table.body
    undocumented = [
        stmt.target.id for i, stmt in enumerate(body)
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        and not (i + 1 < len(body) and isinstance(body[i + 1], ast.Expr)
                 and isinstance(body[i + 1].value, ast.Constant))  # type: ignore[attr-defined]
    ]
    assert undocumented == []
    assert len(dataclasses.fields(Tuning)) >= 51


def test_the_voice_settings_defaults_are_written_once_in_the_table() -> None:
    written = {spec.key: spec.default for spec in load_settings_spec(SETTINGS_FILE)}
    assert all(written[key] is None for key in SETTING_KNOBS)  # settings.yaml writes none
    shown = {spec.key: spec.default for spec in voice_settings_spec()}
    assert shown["VAD_SILENCE_MS"] == str(TUNING.silence_ms)
    assert shown["VAD_THRESHOLD"] == f"{TUNING.threshold:g}"
    assert shown["VAD_DETECTOR"] == TUNING.detector


def test_settings_left_unset_run_with_the_table(tmp_path: Path) -> None:
    settings = load_voice_settings({"AGENTCADE_HOME": str(tmp_path)}, env_files=[])
    assert settings.vad == TUNING


def test_a_voice_setting_changes_only_its_knob(tmp_path: Path) -> None:
    settings = load_voice_settings({"VAD_SILENCE_MS": "500"}, env_files=[])
    assert settings.vad == dataclasses.replace(TUNING, silence_ms=500)
