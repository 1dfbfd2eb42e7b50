"""What a command loads: serving a game never imports the main agent, the pages or the voice.

``agentcade serve`` (and a game binary, which is ``serve`` with its game fixed) starts in a
fresh interpreter here, answers its card, and reports ``sys.modules`` at that moment;
``check``, ``chat``, ``build-game`` and ``test`` are imported the way ``agentcade.cli``
dispatches them. A module in a list below is one that command never needs: importing it
would only make the command start slower (the card of ``serve`` within 0.7 s of start from
a venv, ``tests/bench/bench_start.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.a2a_peers import free_port
from tests.processes import offline_env

ROOT = Path(__file__).resolve().parent.parent

PLAYING_ONLY = ("agentcade.main", "agentcade.web", "agentcade.voice")
"""The main agent, the local pages and speech: only ``play``, ``run`` and ``e2e`` need them."""

SERVE_NEVER = (
    *PLAYING_ONLY,
    "openai",  # the offline model needs no model client
    "a2a.client",  # a server builds its own card, it reads none
    "a2a.server.request_handlers",  # the SDK's own server; only an error body borrows it
)

SERVE_UNTIL_THE_CARD = r"""
import http.client, json, signal, sys, threading, time
from agentcade import cli

port, report, game = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def watch():
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/.well-known/agent-card.json")
            if conn.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.02)
    with open(report, "w") as f:
        json.dump(sorted(sys.modules), f)
    signal.raise_signal(signal.SIGINT)

threading.Thread(target=watch, daemon=True).start()
sys.exit(cli.main(["serve", game, "--host", "127.0.0.1", "--port", str(port)]))
"""

IMPORT_COMMAND = r"""
import json, sys
from agentcade import cli

cli.build_parser(sys.argv[1])  # imports the one selected command's module, as main() does
print(json.dumps(sorted(sys.modules)))
"""


def loaded(modules: list[str], never: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in never)]


def test_serve_answers_its_card_without_importing_what_only_playing_needs(tmp_path: Path) -> None:
    report = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", SERVE_UNTIL_THE_CARD, str(free_port()), str(report),
         str(ROOT / "games" / "riddle")],
        env=offline_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(report.read_text())
    assert "agentcade.a2a.server" in modules  # it did serve
    assert loaded(modules, SERVE_NEVER) == []


@pytest.mark.parametrize("command", ["serve", "check", "chat", "build-game", "test"])
def test_a_command_that_does_not_play_imports_no_main_agent_pages_or_voice(
    command: str, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_COMMAND, command], env=offline_env(tmp_path), cwd=ROOT,
        capture_output=True, text=True, timeout=60, check=True,
    )
    modules = json.loads(done.stdout)
    assert f"agentcade.commands.{command.replace('-', '_')}" in modules
    assert loaded(modules, PLAYING_ONLY) == []


def test_a_game_binary_imports_no_main_agent_pages_or_voice(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c",
         "import json, sys, agentcade.commands._game_binary; print(json.dumps(sorted(sys.modules)))"],
        env=offline_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )
    assert loaded(json.loads(done.stdout), SERVE_NEVER) == []
