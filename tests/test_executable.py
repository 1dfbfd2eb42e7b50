"""The one-file executable: build it with ``build/build.py`` and run it like a user would.

Set ``AGENTCADE_EXE=/path/to/agentcade`` to test a prebuilt executable instead of
building one (the build takes about a minute). The executable runs from an empty temp
folder with an almost empty environment, so nothing from the checkout or the developer's
settings can leak in: a game that plays proves its code loaded from inside the bundle.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcade import __version__
from tests.needs import need_program

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = ROOT / "build" / "build.py"
EXE_NAME = "agentcade.exe" if sys.platform == "win32" else "agentcade"
BUILD_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 120


def _checkout_games() -> list[str]:
    """Ids of the complete game folders in the checkout (the ones the spec must ship)."""
    games = ROOT / "games"
    return sorted(
        p.name
        for p in games.iterdir()
        if p.is_dir() and all((p / f).is_file() for f in ("SKILL.md", "agent.py", "__init__.py"))
    )


@pytest.fixture(scope="module")
def exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The executable under test: ``$AGENTCADE_EXE``, or a fresh build in a temp folder."""
    prebuilt = os.environ.get("AGENTCADE_EXE")
    if prebuilt:
        path = Path(prebuilt).resolve()
        assert path.is_file(), f"AGENTCADE_EXE={prebuilt}: no such file"
        return path
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (pip install -e '.[build]')")
    # Own work folder too: a clean build is barely slower than a cached one, and two test
    # runs at once must not share PyInstaller's build/work.
    dist = tmp_path_factory.mktemp("dist")
    work = tmp_path_factory.mktemp("work")
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--dist", str(dist), "--work", str(work)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, f"build/build.py failed:\n{proc.stdout}\n{proc.stderr[-6000:]}"
    path = dist / EXE_NAME
    assert path.is_file(), f"build/build.py succeeded but made no {path}"
    return path


@pytest.fixture
def run(exe: Path, tmp_path: Path):
    """Run the executable in an empty folder with only PATH, HOME and AGENTCADE_HOME set."""
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "AGENTCADE_HOME": str(home),
    }
    if sys.platform == "win32":  # Windows cannot start a process without these
        env.update({k: os.environ[k] for k in ("SYSTEMROOT", "TEMP", "TMP") if k in os.environ})

    def _run(*args: str, stdin: str = "", **more_env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(exe), *args],
            input=stdin,
            cwd=cwd,
            env={**env, **more_env},
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    return _run


def _explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def test_version(run) -> None:
    proc = run("--version")
    assert proc.returncode == 0, _explain(proc)
    assert proc.stdout.strip() == f"agentcade {__version__}"


def test_subcommand_help(run) -> None:
    proc = run("check", "--help")
    assert proc.returncode == 0, _explain(proc)
    assert "usage: agentcade check" in proc.stdout


def test_build_game_says_in_one_line_why_the_executable_cannot_build(run) -> None:
    proc = run("build-game", str(ROOT / "games" / "riddle"))
    assert proc.returncode == 2, _explain(proc)
    assert proc.stderr.count("\n") == 1, _explain(proc)
    assert "cannot build games" in proc.stderr, _explain(proc)


def test_chat_riddle_plays_from_the_bundle(run) -> None:
    proc = run("chat", "riddle", stdin="我猜是水\n/quit\n")
    assert proc.returncode == 0, _explain(proc)
    assert "—— 猜谜语（riddle）" in proc.stdout, _explain(proc)
    assert "Traceback" not in proc.stderr, _explain(proc)


@pytest.mark.parametrize("game_id", _checkout_games())
def test_every_builtin_game_opens(run, game_id: str) -> None:
    """Each complete game folder in the checkout is shipped and its imports are bundled."""
    proc = run("chat", game_id, stdin="/quit\n")
    assert proc.returncode == 0, _explain(proc)
    assert f"（{game_id}）" in proc.stdout, _explain(proc)
    assert "Traceback" not in proc.stderr, _explain(proc)


def test_the_local_pages_are_served_from_the_bundle(exe: Path, tmp_path: Path) -> None:
    """``play`` in the executable serves the pages, their stylesheet and script, and the voice form."""
    import re
    import urllib.request

    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(tmp_path), "AGENTCADE_HOME": str(tmp_path)}
    if sys.platform == "win32":
        env.update({k: os.environ[k] for k in ("SYSTEMROOT", "TEMP", "TMP") if k in os.environ})
    with subprocess.Popen(
        [str(exe), "play", "--pages-port", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, cwd=tmp_path, env=env, text=True, encoding="utf-8",
    ) as proc:  # leaving the block closes the pipes
        try:
            assert proc.stdout is not None
            assert proc.stdin is not None
            url = None
            for _ in range(20):
                line = proc.stdout.readline()
                if found := re.search(r"(http://127\.0\.0\.1:\d+/)", line):
                    url = found.group(1)
                    break
            assert url is not None, "play did not say where the pages are"
            fetched = {}
            for path in ("settings", "static/app.css", "static/app.js"):
                with urllib.request.urlopen(url + path, timeout=30) as response:
                    fetched[path] = response.read().decode("utf-8")
            assert "VAD_SILENCE_MS" in fetched["settings"]  # agentcade/voice/settings.yaml is bundled
            assert "--accent" in fetched["static/app.css"]
            assert "agentcade-token" in fetched["static/app.js"]
            proc.stdin.write("/quit\n")
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_run_plays_a_spoken_scenario_on_the_simulated_robot_from_the_bundle(run, tmp_path: Path) -> None:
    """The voice is bundled: PyAV (the microphone's Opus, resampling) and Silero detection.
    The embedded recogniser and the neural voice are not in the one-file executable yet (see
    the README): the scenario is recognised by script and spoken by espeak-ng here."""
    need_program("espeak-ng", package="espeak-ng")
    scenario = tmp_path / "s.txt"
    scenario.write_text("有什么游戏\n", encoding="utf-8")
    proc = run("run", "--robot", "sim", "--say-file", str(scenario), "--no-pages", "--sim-speed", "8",
               "--room", "child=espeak", ASR_PROVIDER="scripted", TTS_PROVIDER="espeak")
    assert proc.returncode == 0, _explain(proc)
    assert "剧本说完了" in proc.stdout, _explain(proc)
    assert "改用音量检测" not in proc.stderr, _explain(proc)  # Silero loaded
