"""The program inside a game binary built by ``agentcade build-game``: serve the one game.

``riddle --port 7860 [--host H] [--public-url URL] [--max-sessions N]`` is
``agentcade serve <the bundled folder>`` with the same options and the same environment
(``PUBLIC_URL``, ``SPACE_HOST``, ``LLM_*``, ``AGENTCADE_HOME``'s ``.env``); only the
game is fixed. The folder sits at ``sys._MEIPASS/game/<id>`` inside the binary. No
``.env`` is ever bundled: secrets come from the environment of the server it runs on.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agentcade import __version__
from agentcade.commands import serve
from agentcade.commands._bundle import BUNDLED_GAMES
from agentcade.core.skill import Skill, SkillError

__all__ = ["BUNDLED_GAMES", "bundled_game", "main"]

def bundled_game() -> Path:
    """The game folder inside this binary."""
    root = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / BUNDLED_GAMES
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if len(folders) != 1:
        raise SystemExit(f"{Path(sys.argv[0]).name}: this binary holds no game; rebuild it with agentcade build-game")
    return folders[0]


def build_parser(skill: Skill) -> argparse.ArgumentParser:
    """The binary's options: ``agentcade serve``'s, named after the game."""
    parser = argparse.ArgumentParser(
        prog=skill.id,
        description=f"{skill.name}（{skill.id}）：{skill.summary}。通过 A2A 提供这一个游戏"
        f"（和 agentcade serve 同样的选项和环境变量）。",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{skill.id} {skill.version or '1.0.0'} (agentcade {__version__})",
    )
    serve.add_serve_options(parser)
    return parser


def main(argv: Sequence[str] | None = None, game_dir: Path | None = None) -> int:
    """Serve the bundled game (or ``game_dir``) until Ctrl-C or SIGTERM; the exit code."""
    folder = game_dir or bundled_game()
    try:
        skill = Skill.load(folder / "SKILL.md")
    except SkillError as exc:  # only a broken build gets here: build-game loads it first
        print(f"{folder.name}: {exc}", file=sys.stderr)
        return 1
    args = build_parser(skill).parse_args(argv)
    args.game = str(folder)
    code = 130  # the shell's code for Ctrl-C
    try:
        code = serve.run(args)
    except* KeyboardInterrupt:  # trio delivers it inside an exception group
        print(file=sys.stderr)
    return code
