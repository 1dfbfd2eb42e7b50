"""The desktop CI workflow (``.github/workflows/desktop.yml``), checked on Linux.

It cannot run here (no Windows or macOS runner), so its shape is read and its commands are
run: the test step is the README's test command, the build step's options are the build
script's, and the smoke test runs as written against this checkout (the executable stood in
for by ``python -m agentcade``), so a command that would fail on the runners fails here.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.needs import need_pip_program, need_program
from tests.processes import offline_env

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "desktop.yml"


def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def job() -> dict[str, Any]:
    (only,) = workflow()["jobs"].values()
    return dict(only)


def step(name: str) -> dict[str, Any]:
    return next(s for s in job()["steps"] if s.get("name", "").startswith(name))


def readme_test_command() -> str:
    """The README's test command, after the install: ``.venv/bin/ruff check . && ...``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "ruff check" in line and "pytest" in line)
    return line[line.index(".venv/bin/ruff") :].strip()


def test_it_runs_on_windows_and_macos_for_every_push() -> None:
    data = workflow()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request"} <= set(triggers or ())
    assert job()["strategy"]["matrix"]["os"] == ["windows-latest", "macos-latest"]
    assert job()["runs-on"] == "${{ matrix.os }}"
    assert job()["defaults"]["run"]["shell"] == "bash"  # one script for both, Git Bash on Windows


def test_it_installs_with_the_test_build_and_voice_extras_on_python_3_11() -> None:
    """The voice extra too: the executable carries the speech runtimes and models."""
    setup = next(s for s in job()["steps"] if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "3.11"
    install = step("Install")["run"]
    assert "-m pip install -q -e '.[test,build,voice]'" in install
    assert ".venv/Scripts" in install  # a Windows venv keeps its programs there


def test_the_test_step_is_the_readmes_test_command() -> None:
    assert step("Test")["run"] == readme_test_command().replace(".venv/bin/", "$BIN/")


def test_the_build_step_uses_the_build_scripts_own_options() -> None:
    run = step("Build")["run"]
    assert run.startswith("$BIN/python build/build.py")
    options = set(re.findall(r"--[a-z-]+", run))
    shown = subprocess.run(
        [sys.executable, str(ROOT / "build" / "build.py"), "--help"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout
    assert options <= set(re.findall(r"--[a-z-]+", shown))


def test_the_executable_is_kept_as_an_artifact() -> None:
    upload = next(s for s in job()["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert upload["with"]["path"] == "dist/agentcade*"  # agentcade.exe on Windows
    assert upload["with"]["if-no-files-found"] == "error"
    assert "runner.os" in upload["with"]["name"]


def test_app_json_declares_both_desktops_and_passes_the_sdks_check() -> None:
    manifest = json.loads((ROOT / "app.json").read_text(encoding="utf-8"))
    assert sorted(manifest["supported_host_platforms"]) == ["macos", "windows"]
    watcherobot = need_pip_program("watcherobot", install="pip install watcherobot")
    done = subprocess.run([watcherobot, "app", "check", str(ROOT)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "watcherobot app check ." in step("The WatcheRobot")["run"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.skipif(sys.platform == "win32", reason="the runner runs the real smoke step there")
def test_the_smoke_test_passes_as_written_against_this_checkout(tmp_path: Path) -> None:
    """The smoke step's script, run by bash as GitHub runs it (``-eo pipefail``), with
    ``dist/agentcade`` standing for the executable: --version, serve's card, play < a
    scenario offline, check of a built-in game."""
    need_program("curl", package="curl")
    script = step("Smoke-test")["run"].replace("7861", str(_free_port()))
    dist = tmp_path / "dist"
    dist.mkdir()
    shim = dist / "agentcade"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentcade "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = offline_env(tmp_path / "home")
    env.update({"RUNNER_TEMP": str(tmp_path), "PYTHONUTF8": workflow()["jobs"]["desktop"]["env"]["PYTHONUTF8"],
                "PYTHONPATH": str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")})
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "PASSED" in done.stdout
    assert "小懒：不对哦" in (tmp_path / "play.txt").read_text(encoding="utf-8")
