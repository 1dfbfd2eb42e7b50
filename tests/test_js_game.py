"""A game written in JavaScript on the official A2A SDK (``@a2a-js/sdk``, npm), not with agentcade.

``docs/examples/js_riddle`` is the guide's example for games in other languages (不用 Python 写):
a leading ``task`` event, bare-``Message`` replies and directives with ``timing``. Its
packages come from the npm registry (``npm ci`` against its package-lock.json, into a copy of
the folder); then ``agentcade check`` and ``agentcade test`` run against it as an author would.
Without node/npm the tests skip naming the Debian packages (a failure in CI, tests/needs.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcade.cli import main
from tests.needs import need_module, need_program
from tests.processes import run_voice_command

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "js_riddle"


@pytest.fixture(scope="module")
def js_game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example game running on a free port; its address."""
    node = need_program("node", package="nodejs")
    npm = need_program("npm", package="npm")
    folder = tmp_path_factory.mktemp("js") / "js_riddle"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("node_modules"))
    installed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder,
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert installed.returncode == 0, f"npm ci failed:\n{installed.stderr[-3000:]}"
    with subprocess.Popen(
        [node, "game.mjs"], cwd=folder, env={"PATH": str(Path(node).parent), "PORT": "0"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # "listening on http://127.0.0.1:PORT/"
            assert line.startswith("listening on "), f"the game did not start: {line}{proc.stdout.read()}"
            yield line.split()[-1]
        finally:
            proc.terminate()
            proc.wait(10)


def test_check_passes_a_game_on_the_js_sdk_and_exercises_its_directives(
    js_game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", js_game, "--timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert "✗" not in out
    assert "\n! " not in out
    assert "✓ DIRECTIVE-UNDECLARED: every directive's capability is declared" in out
    assert "✓ REPLY-ENDED-EARLY" in out  # its start streams an intermediate reply
    assert f'"url": "{js_game}"' in out  # the catalog entry names the address checked


def test_test_plays_the_js_games_scenarios(js_game: str, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios = EXAMPLE / "scenarios.yaml"
    assert main(["test", js_game, "--scenarios", str(scenarios), "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert "JS 猜谜语（js_riddle）：5 个场景，每个跑 2 次" in out
    assert "合计：10/10 通过（100%）" in out


def test_e2e_speaks_the_js_games_own_robot_steps_and_every_one_passes(js_game: str, tmp_path: Path) -> None:
    """The guide's robot test of a game in another process: its ``robot:`` steps said in the
    child's voice on the simulated robot, heard by the embedded recogniser, played over A2A."""
    need_module("faster_whisper", install="pip install -e '.[voice]'")
    need_module("ai_edge_litert", install="pip install -e '.[voice]'")
    done = run_voice_command(tmp_path, "e2e", "--game", js_game, "--scenarios",
                             str(EXAMPLE / "scenarios.yaml"), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "—— 5/5 steps passed"
    assert re.search(r"\| js_riddle \| start by alias +\|", done.stdout)


def test_a_scenario_the_js_game_fails_is_reported_with_what_was_heard(
    js_game: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "scenarios.yaml"
    scenarios.write_text(
        "scenarios:\n  - name: 开局\n    steps:\n      - start: 玩\n        spoken: [不会说的话]\n",
        encoding="utf-8",
    )
    assert main(["test", js_game, "--scenarios", str(scenarios)]) == 1
    assert "step 1 (玩): expected speech matching /不会说的话/; heard 「我们来猜谜语！" in capsys.readouterr().out


def test_a_step_judged_by_a_remote_games_code_is_refused_in_one_line_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "scenarios.yaml"
    scenarios.write_text("scenarios:\n  - name: x\n    steps:\n      - start: 玩\n"
                         "      - say: 我猜是水\n        judged: true\n", encoding="utf-8")
    assert main(["test", "http://127.0.0.1:9/", "--scenarios", str(scenarios)]) == 1
    err = capsys.readouterr().err
    assert "scenarios.yaml:5: scenario 'x': 'judged' needs the game's own trace" in err
    assert len(err.strip().splitlines()) == 1


def test_an_answer_step_for_a_game_that_does_not_tell_its_answer_is_a_one_line_error(
    js_game: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = tmp_path / "scenarios.yaml"
    scenarios.write_text("scenarios:\n  - name: x\n    steps:\n      - start: 玩\n"
                         "      - say: 我猜是{answer}\n", encoding="utf-8")
    assert main(["test", js_game, "--scenarios", str(scenarios)]) == 1
    err = capsys.readouterr().err
    assert "scenarios.yaml:5: scenario 'x': {answer}/{wrong} needs the game's unrevealed answer" in err
    assert "agentcade serve --test-mode" in err
    assert len(err.strip().splitlines()) == 1


def test_a_remote_game_without_scenarios_says_to_give_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "http://127.0.0.1:9/"]) == 1
    assert "add --scenarios FILE" in capsys.readouterr().err
