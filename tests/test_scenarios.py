"""``agentcade test``: a game's scenario tests, run through the CLI as a game author would."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agentcade.check.scenarios import SCENARIO_FILE
from agentcade.cli import main

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tests" / "data" / "games" / "probe"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No model configured: the offline model plays; game data goes to a fresh home."""
    for key in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path / "home"))


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    folder = tmp_path / "probe"
    shutil.copytree(PROBE, folder)
    return folder


def write(folder: Path, text: str) -> None:
    (folder / SCENARIO_FILE).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("game", ["guess_number", "riddle", "draw_guess", "turtle_soup"])
def test_every_built_in_game_ships_scenarios_that_pass_offline(game, capsys) -> None:
    assert main(["test", str(ROOT / "games" / game)]) == 0
    out = capsys.readouterr().out
    assert "合计" in out
    assert "编造的判定 0，说出的内部词 0，泄露的答案 0" in out


def test_a_failing_step_is_named_with_what_was_heard_and_the_exit_code_is_1(probe, capsys) -> None:
    write(probe, "scenarios:\n  - name: 开局\n    steps:\n      - start: 玩\n        spoken: [不会说的话]\n")
    assert main(["test", str(probe), "--repeat", "2"]) == 1
    out = capsys.readouterr().out
    assert "✗ 开局: 0/2 通过（0%）" in out
    assert "step 1 (玩): expected speech matching /不会说的话/; heard 「开局口令" in out


def test_pass_rate_and_junit_report(probe, tmp_path, capsys) -> None:
    write(
        probe,
        "scenarios:\n"
        "  - name: 开局说口令\n    steps:\n      - start: 玩\n        spoken: [开局口令]\n        device: []\n"
        "  - name: 结束\n    steps:\n      - start: 玩\n      - end: 不玩了\n        session: ended\n",
    )
    junit = tmp_path / "junit.xml"
    assert main(["test", str(probe), "--repeat", "3", "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert "✓ 开局说口令: 3/3 通过（100%）" in out
    assert "合计：6/6 通过（100%）" in out
    xml = junit.read_text(encoding="utf-8")
    assert 'tests="2" failures="0"' in xml
    assert 'name="开局说口令"' in xml


def test_a_made_up_verdict_counts_and_fails(probe, capsys, monkeypatch) -> None:
    async def verdict(self, turn):  # a game whose code says a verdict nobody judged
        turn.reply("你猜对了！")
        return {}

    monkeypatch.setattr("agentcade.game.skill_agent.SkillAgent.on_message", verdict)
    write(probe, "scenarios:\n  - name: 闲聊\n    steps:\n      - start: 玩\n      - say: 你好\n        judged: false\n")
    assert main(["test", str(probe)]) == 1
    assert "编造的判定 1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "scenarios.yaml: missing"),
        ("scenarios: []", "scenarios.yaml:1: needs a non-empty list under 'scenarios:'"),
        ("scenarios:\n  - name: x\n    steps:\n      - say: 你好\n        heard: [x]\n",
         "scenarios.yaml:4: scenario 'x', step 1: unknown step kind or key ['heard']"),
        ("scenarios:\n  - name: x\n    steps:\n      - start: 玩\n      - ask: 你好\n",
         "scenarios.yaml:5: scenario 'x', step 2: unknown step kind or key ['ask']"),
        ("scenarios:\n  - name: x\n    steps:\n      - say: a\n        spoken: ['(']\n",
         "scenarios.yaml:4: scenario 'x', step 1: 'spoken' pattern '(' is not valid"),
        ("scenarios:\n  - name: x\n    steps:\n      - say: a\n        route: start\n",
         "scenarios.yaml:4: scenario 'x', step 1: ['route'] only a robot step can expect"),
        ("scenarios:\n  - name: x\n    steps:\n      - say: 我猜{wrong}\n",
         "scenarios.yaml:4: scenario 'x', step 1: {wrong} needs the step's 'wrong:' list"),
        ("scenarios:\n  - name: x\n    steps:\n      - say: [\n", "scenarios.yaml:5: cannot be read as YAML"),
    ],
    ids=["missing", "empty", "unknown-key", "unknown-kind", "bad-pattern", "robot-key", "wrong-list", "bad-yaml"],
)
def test_a_bad_scenario_file_is_one_line_saying_what_to_fix(probe, capsys, content, message) -> None:
    if content is not None:
        write(probe, content)
    assert main(["test", str(probe)]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def _heard_numbers(out: str) -> list[str]:
    return re.findall(r"heard 「数字(\d+)", out)


@pytest.fixture
def random_start(probe: Path) -> None:
    """The probe game opens with a random number (as a game draws its question)."""
    agent = probe / "agent.py"
    text = agent.read_text(encoding="utf-8")
    old = '        turn.must_say("开局口令")\n'
    assert old in text
    text = text.replace(old, '        turn.reply(f"数字{random.randint(1, 10**9)}")\n')
    text = text.replace("from __future__ import annotations\n", "from __future__ import annotations\n\nimport random\n")
    agent.write_text(text, encoding="utf-8")


def test_a_scenario_seed_pins_every_repeated_run(probe, capsys, random_start) -> None:
    write(probe, "scenarios:\n  - name: 开局\n    seed: 7\n    steps:\n      - start: 玩\n        spoken: [不会说的话]\n")
    assert main(["test", str(probe), "--repeat", "3"]) == 1
    heard = _heard_numbers(capsys.readouterr().out)
    assert len(heard) == 3
    assert len(set(heard)) == 1


def test_without_a_seed_repeated_runs_differ(probe, capsys, random_start) -> None:
    write(probe, "scenarios:\n  - name: 开局\n    steps:\n      - start: 玩\n        spoken: [不会说的话]\n")
    assert main(["test", str(probe), "--repeat", "3"]) == 1
    heard = _heard_numbers(capsys.readouterr().out)
    assert len(heard) == 3
    assert len(set(heard)) == 3


def test_an_answer_with_nothing_unrevealed_is_a_clear_scenario_error(probe, capsys) -> None:
    write(probe, "scenarios:\n  - name: 说答案\n    steps:\n      - start: 玩\n      - say: 我猜是{answer}\n")
    assert main(["test", str(probe)]) == 1
    out = capsys.readouterr().out
    assert "line 5: step 2 (我猜是{answer}): {answer} has nothing to stand for" in out
    assert "unrevealed() is empty" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("scenarios:\n  - name: x\n    steps:\n      - start: 玩\nrobot:\n  - name: y\n    steps:\n"
         "      - say: 玩\n      - shout: 你好\n",
         "scenarios.yaml:9: robot scenario 'y', step 2: unknown step kind or key ['shout']"),
        ("scenarios:\n  - name: x\n    steps:\n      - start: 玩\nrobot:\n  - name: y\n    steps:\n"
         "      - say: [\n", "scenarios.yaml:9: cannot be read as YAML"),
        ("scenarios:\n  - name: x\n    steps:\n      - start: 玩\nrobot:\n  - name: y\n    steps:\n"
         "      - start: 玩\n", "scenarios.yaml:8: robot scenario 'y', step 1: a robot step is said (say:)"),
    ],
    ids=["unknown-kind", "bad-yaml", "robot-start"],
)
def test_a_broken_file_is_the_same_one_line_from_test_and_e2e(probe, capsys, content, message) -> None:
    """One engine loads the file for the three commands: each says the same line, once
    (``check``'s finding: ``tests/test_check.py``)."""
    write(probe, content)
    assert main(["test", str(probe)]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert main(["e2e", "--game", str(probe)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
