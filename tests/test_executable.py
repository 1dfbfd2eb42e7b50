"""The one-file executable: build it with ``build/build.py`` and run it like a user would.

Set ``AGENTCADE_EXE=/path/to/agentcade`` to test a prebuilt executable instead of
building one (the build takes about a minute; it needs the voice extra, whose speech models
go inside). The executable runs from an empty temp folder with an almost empty environment
(its own empty HOME, no models folder setting), so nothing from the checkout or the
developer's settings and models can leak in: a game that plays proves its code loaded from
inside the bundle, and a line heard proves the recogniser's model came from it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcade import __version__
from agentcade.voice.models import BAKER_VOICE, BUNDLE_FOLDER, WHISPER_BASE, archive_entries
from tests.needs import need_speech_models

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
    need_speech_models()  # the build puts them inside
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


def test_the_speech_models_are_inside_and_a_command_that_does_not_listen_leaves_them(
    exe: Path, run, tmp_path: Path
) -> None:
    """Both models are entries the bootloader keeps in place (never unpacked at a start)."""
    entries = archive_entries(exe)
    for model in (WHISPER_BASE, BAKER_VOICE):
        for name, _digest, size in model.files:
            assert entries[f"{BUNDLE_FOLDER}/{model.name}/{name}"][1] == size
    proc = run("--version")
    assert proc.returncode == 0, _explain(proc)
    assert not list((tmp_path / "home").rglob("*.bin")), "--version copied a model out"


def test_run_hears_and_speaks_with_its_own_models_and_no_voice_setting(run, tmp_path: Path) -> None:
    """No ASR_PROVIDER, no TTS_PROVIDER, an empty home: the child (the neural voice, from the
    executable's models) is heard by the embedded recogniser and answered in the neural
    voice; PyAV (the microphone's Opus) and Silero detection are bundled too."""
    scenario = tmp_path / "s.txt"
    scenario.write_text("有什么游戏\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    proc = run("run", "--robot", "sim", "--say-file", str(scenario), "--no-pages", "--sim-speed", "8",
               "--trace-file", str(trace))
    assert proc.returncode == 0, _explain(proc)
    assert "local:whisper-base 识别，neural:baker 说话" in proc.stdout, _explain(proc)
    assert "剧本说完了" in proc.stdout, _explain(proc)
    assert "改用音量检测" not in proc.stderr, _explain(proc)  # Silero loaded
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    heard = [r for r in records if r["type"] == "asr_final"]
    assert [r["recognizer"] for r in heard] == ["local:whisper-base"], _explain(proc)
    assert "游戏" in heard[0]["text"], heard
    assert any(r["type"] == "main_route" and r["route"] == "list" for r in records), heard
    assert any(r["type"] == "speech_end" and r["outcome"] == "completed" for r in records)
    copied = tmp_path / "home" / ".local" / "share" / "agentcade" / "models"
    if sys.platform.startswith("linux"):  # where platformdirs puts the data folder here
        assert sorted(p.parent.name for p in copied.glob("*/.verified")) == ["baker-zh", "whisper-base"]
