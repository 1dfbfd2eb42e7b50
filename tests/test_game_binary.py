"""``agentcade build-game``: the riddle template as one standalone binary, run like a server would.

Set ``AGENTCADE_GAME_EXE=/path/to/riddle`` to test a prebuilt binary instead of building
one. The binary runs from an empty folder with an almost empty environment (no Python,
no checkout, no model settings), and the real ``agentcade check`` and ``chat`` talk to it
over A2A. The deploy recipes' command lines (Dockerfile ``CMD``, systemd ``ExecStart``)
are run as written, with only the port changed to a free one.

The template is built the way its README tells an author to deploy it: copied and renamed
first, here to ``riddle_remote`` (the catalog's id for the deployed template), since a
remote game may not take a built-in game's id (``check`` fails ``CATALOG-ID-BUILTIN``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcade import __version__
from agentcade.commands.build_game import clean_env
from tests.a2a_peers import free_port

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
RIDDLE = ROOT / "games" / "riddle"
DEPLOY = RIDDLE / "deploy"
GAME_ID = "riddle_remote"
EXE_NAME = f"{GAME_ID}.exe" if sys.platform == "win32" else GAME_ID
BUILD_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The riddle binary: ``$AGENTCADE_GAME_EXE``, or a fresh ``agentcade build-game``."""
    prebuilt = os.environ.get("AGENTCADE_GAME_EXE")
    if prebuilt:
        path = Path(prebuilt).resolve()
        assert path.is_file(), f"AGENTCADE_GAME_EXE={prebuilt}: no such file"
        return path
    import importlib.util

    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (pip install -e '.[build]')")
    out = tmp_path_factory.mktemp("out")
    work = tmp_path_factory.mktemp("work")
    game = tmp_path_factory.mktemp("src") / GAME_ID
    shutil.copytree(RIDDLE, game, ignore=shutil.ignore_patterns("__pycache__", ".env"))
    skill = game / "SKILL.md"
    text, renamed = re.subn(r"^id: riddle$", f"id: {GAME_ID}", skill.read_text(encoding="utf-8"),
                            count=1, flags=re.M)
    assert renamed == 1, "the template's SKILL.md no longer says id: riddle"
    skill.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "agentcade", "build-game", str(game), "--out", str(out),
         "--work", str(work)],
        cwd=tmp_path_factory.mktemp("cwd"),
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, f"build-game failed:\n{proc.stdout}\n{proc.stderr[-6000:]}"
    for figure in ("build time:", "size:", "cold start:"):
        assert figure in proc.stdout, proc.stdout
    path = out / EXE_NAME
    assert path.is_file(), f"build-game succeeded but made no {path}"
    return path



class Running:
    """The binary serving on a port; its output collected in a file."""

    def __init__(self, proc: subprocess.Popen[str], port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log
        self.url = f"http://127.0.0.1:{port}/"

    def card(self) -> dict[str, object]:
        with urllib.request.urlopen(self.url + ".well-known/agent-card.json", timeout=10) as r:
            card: dict[str, object] = json.loads(r.read())
            return card

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8")


@pytest.fixture
def start(exe: Path, tmp_path: Path) -> Iterator:
    """Start the binary (argv[0] replaced by it) in an empty folder; waits for its card."""
    started: list[Running] = []

    def _start(argv: list[str], **extra_env: str) -> Running:
        port = free_port()
        args = [str(exe), *argv[1:]]
        args[args.index("--port") + 1] = str(port)
        cwd = tmp_path / f"run{len(started)}"
        cwd.mkdir()
        log = cwd.parent / f"run{len(started)}.log"
        with log.open("w") as sink:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(
                args, cwd=cwd, env={**clean_env(cwd), **extra_env}, stdout=sink,
                stderr=subprocess.STDOUT, text=True,
            )
        running = Running(proc, port, log)
        started.append(running)
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            try:
                running.card()
                return running
            except OSError:
                assert proc.poll() is None, f"the binary exited:\n{running.output()}"
                assert time.monotonic() < deadline, f"no card after {RUN_TIMEOUT_S} s"
                time.sleep(0.05)

    yield _start
    for running in started:
        # SIGTERM, not SIGKILL: the one-file bootloader passes it on to the Python process
        # it started; killing the bootloader would leave that one serving.
        if running.proc.poll() is None:
            running.proc.terminate()
        try:
            running.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            running.proc.kill()
            running.proc.wait()


def _agentcade(*args: str, stdin: str = "", home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "OPENAI_"))}
    env["AGENTCADE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "agentcade", *args], input=stdin, capture_output=True, text=True,
        encoding="utf-8", env=env, timeout=RUN_TIMEOUT_S, check=False,
    )


def _explain(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"



def test_the_binary_carries_no_speech_model_nor_runtime(exe: Path) -> None:
    """The robot's ears and voice are the host executable's: a game server has none of them."""
    from PyInstaller.archive.readers import CArchiveReader  # type: ignore[import-untyped]

    from agentcade.commands._bundle import HOST_ONLY

    archive = CArchiveReader(str(exe))
    modules = list(archive.open_embedded_archive("PYZ.pyz").toc)
    names = [*archive.toc, *modules]
    speech = (*HOST_ONLY, "onnxruntime", "agentcade-models")
    assert "yaml" in modules  # (the modules are listed)
    assert not [n for n in names if n.replace("\\", "/").split("/")[0].split(".")[0] in speech]
    assert not [n for n in names if n.endswith((".tflite", "model.bin"))]


def test_the_binary_holds_the_one_game_and_nothing_else_from_games(exe: Path) -> None:
    from PyInstaller.archive.readers import CArchiveReader

    names = set(CArchiveReader(str(exe)).toc)
    prefix = f"game/{GAME_ID}/"
    game = {n.removeprefix(prefix) for n in names if n.startswith(prefix)}
    assert {"SKILL.md", "agent.py", "config.py", "riddles.yaml", "settings.yaml"} <= game
    assert not [n for n in names if n.startswith("games/")]
    assert not [n for n in names if n.startswith("game/") and not n.startswith(prefix)]
    assert not [n for n in game if n.startswith(("deploy/", ".")) or "/." in n]


def test_version_names_the_game_and_the_runtime(exe: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True,
                          env=clean_env(tmp_path), cwd=tmp_path, timeout=RUN_TIMEOUT_S, check=False)
    assert proc.returncode == 0, _explain(proc)
    assert proc.stdout.strip() == f"{GAME_ID} 1.0.0 (agentcade {__version__})"


def test_help_lists_the_serve_options(exe: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True,
                          env=clean_env(tmp_path), cwd=tmp_path, timeout=RUN_TIMEOUT_S, check=False)
    assert proc.returncode == 0, _explain(proc)
    for option in ("--port", "--host", "--public-url", "--max-sessions", "--version"):
        assert option in proc.stdout
    assert proc.stdout.startswith(f"usage: {GAME_ID}")


def test_check_passes_and_chat_plays_a_round_against_the_binary(start, tmp_path: Path) -> None:
    game = start(["riddle", "--port", "0", "--host", "127.0.0.1"])
    checked = _agentcade("check", game.url, home=tmp_path)
    assert checked.returncode == 0, _explain(checked)
    assert "PASSED" in checked.stdout, _explain(checked)

    chat = _agentcade("chat", game.url, stdin="我猜是水\n/quit\n", home=tmp_path)
    assert chat.returncode == 0, _explain(chat)
    assert f"—— 猜谜语（{GAME_ID}）" in chat.stdout, _explain(chat)
    assert re.search(r"你：我猜是水\n(.*\n)*小懒：\S+", chat.stdout), _explain(chat)
    assert "Traceback" not in chat.stderr + game.output()


def test_sigterm_ends_the_binary_cleanly(start) -> None:
    if sys.platform == "win32":
        pytest.skip("SIGTERM is a POSIX signal; Windows stops the process with Ctrl-C")
    game = start(["riddle", "--port", "0", "--host", "127.0.0.1"])
    game.proc.send_signal(signal.SIGTERM)
    assert game.proc.wait(timeout=60) == 0, game.output()
    assert "正在退出" in game.output()


def _dockerfile_cmd() -> list[str]:
    (line,) = [ln for ln in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines()
               if ln.startswith("CMD ")]
    cmd: list[str] = json.loads(line.removeprefix("CMD "))
    return cmd


def test_the_container_command_serves_with_the_space_address(start) -> None:
    """The Dockerfile's CMD as written; in a Space, SPACE_HOST makes the card's address."""
    game = start(_dockerfile_cmd(), SPACE_HOST="someone-riddle.hf.space")
    card = game.card()
    interfaces = card["supportedInterfaces"]
    assert isinstance(interfaces, list)
    assert interfaces[0]["url"] == "https://someone-riddle.hf.space/"


def test_the_systemd_command_serves_on_loopback(start) -> None:
    unit = (DEPLOY / "riddle.service").read_text(encoding="utf-8")
    (exec_start,) = re.findall(r"^ExecStart=(.+)$", unit, flags=re.M)
    argv = shlex.split(exec_start)
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    game = start(argv, PUBLIC_URL="https://riddle.example.com")
    interfaces = game.card()["supportedInterfaces"]
    assert isinstance(interfaces, list)
    assert interfaces[0]["url"] == "https://riddle.example.com/"
