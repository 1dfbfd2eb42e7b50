"""``agentcade env-example <dir>``: write the game folder's ``.env.example`` from ``settings.yaml``.

The guide's step after writing ``settings.yaml``: every key the game reads, its description
as a comment and its default (secrets empty), so whoever runs the game copies it to ``.env``
and fills in the keys. ``check`` warns (``SETTINGS-ENV-EXAMPLE``) when the file is missing
or no longer what this command would write. The text is ``agentcade.core.settings.env_example``.
"""

from __future__ import annotations

import argparse
import sys

from agentcade.core.settings import SettingsError, env_example, env_example_specs
from agentcade.game.loader import GameLoadError, resolve_game

EXAMPLE_NAME = ".env.example"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``agentcade env-example``."""
    p.add_argument("game", help="game folder (or built-in game id) whose settings.yaml to use")


def run(args: argparse.Namespace) -> int:
    """Write ``<game>/.env.example``; 0 on success, 1 with one line saying what to fix."""
    try:
        folder = resolve_game(args.game)
        text = env_example(folder)
        keys = [spec.key for spec in env_example_specs(folder)]
    except (GameLoadError, SettingsError) as exc:
        print(f"agentcade env-example: {exc}", file=sys.stderr)
        return 1
    path = folder / EXAMPLE_NAME
    try:
        unchanged = path.is_file() and path.read_text(encoding="utf-8") == text
        if not unchanged:
            path.write_text(text, encoding="utf-8", newline="\n")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"agentcade env-example: cannot write {path}: {exc}", file=sys.stderr)
        return 1
    state = "already up to date" if unchanged else "wrote"
    print(f"{state} {path} ({len(keys)} keys: {', '.join(keys)})")
    return 0
