"""A served game's settings: read once, read again only when their files or environment change.

``wiring.games._FreshSettings`` gives each new session the settings as they are now. The
settings page writes the ``.env`` files while the program runs, so a changed file is read
again (no restart); an unchanged one is not (a ``stat`` per file instead of PyYAML and
validation for every session).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentcade.core.dotenv import write_dotenv
from agentcade.core.trace import Trace
from agentcade.game.loader import load_game
from agentcade.wiring.games import _FreshSettings

PROBE = Path(__file__).parent / "data" / "games" / "probe"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("LLM_", "OPENAI_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("AGENTCADE_CONFIG_DIR", str(tmp_path / "config"))
    return Path(shutil.copytree(PROBE, tmp_path / "probe"))


def fresh_settings(folder: Path, records: list[dict[str, object]] | None = None) -> _FreshSettings:
    trace = Trace(records.append) if records is not None else Trace()
    return _FreshSettings(load_game(folder, builtin=False), trace)


def rewrite_keeping_the_stamp(path: Path, text: str) -> None:
    """Change a file's content in place, same size, and put its modification time back."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    with path.open("w", encoding="utf-8") as f:
        f.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_the_settings_page_saving_the_game_env_takes_effect_for_the_next_session(folder: Path) -> None:
    fresh = fresh_settings(folder)
    assert fresh().llm.model == "fake-model"  # settings.yaml's default
    write_dotenv(folder / ".env", {"LLM_MODEL": "model-b"})
    assert fresh().llm.model == "model-b"


def test_a_new_user_config_env_takes_effect_for_the_next_session(folder: Path, tmp_path: Path) -> None:
    fresh = fresh_settings(folder)
    fresh()
    write_dotenv(tmp_path / "config" / ".env", {"LLM_MODEL": "from-the-user"})
    assert fresh().llm.model == "from-the-user"


def test_settings_whose_files_did_not_change_are_not_read_again(folder: Path) -> None:
    env = folder / ".env"
    env.write_text("LLM_MODEL=model-a\n", encoding="utf-8")
    fresh = fresh_settings(folder)
    assert fresh().llm.model == "model-a"
    rewrite_keeping_the_stamp(env, "LLM_MODEL=model-z\n")
    assert fresh().llm.model == "model-a"  # same size, time and inode: not read
    os.utime(env, ns=(env.stat().st_atime_ns, env.stat().st_mtime_ns + 1_000_000))
    assert fresh().llm.model == "model-z"  # its time moved: read again


def test_a_changed_environment_is_read_again(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = fresh_settings(folder)
    fresh()
    monkeypatch.setenv("LLM_MODEL", "from-the-environment")
    assert fresh().llm.model == "from-the-environment"


def test_unusable_new_settings_keep_the_last_good_ones_and_are_told_once(folder: Path) -> None:
    records: list[dict[str, object]] = []
    fresh = fresh_settings(folder, records)
    write_dotenv(folder / ".env", {"LLM_TIMEOUT": "not-a-number"})
    assert fresh().llm.model == "fake-model"
    assert fresh().llm.model == "fake-model"
    assert [r["type"] for r in records if r["type"] == "settings_error"] == ["settings_error"]


def test_each_session_gets_its_own_settings_object(folder: Path) -> None:
    fresh = fresh_settings(folder)
    assert fresh() is not fresh()
