"""The ``agentcade`` command: one program, one subcommand per job of the guide's command table.

Each subcommand lives in its own module and is imported only when it runs, so
``agentcade --version`` and ``--help`` stay fast in the one-file executable.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from agentcade import __version__

# name -> (module with ``add_arguments(parser)`` and ``run(args) -> int``, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "play": ("agentcade.commands.play", "the whole pipeline in text: main agent and every game"),
    "chat": ("agentcade.commands.chat", "the text simulator: talk to one game directly"),
    "serve": ("agentcade.commands.serve", "serve one game over A2A (trio + h11)"),
    "build-game": ("agentcade.commands.build_game", "build one game as a standalone binary"),
    "check": ("agentcade.commands.check", "compliance check of a game folder or URL"),
    "catalog": ("agentcade.commands.catalog", "validate a game catalog file"),
    "env-example": ("agentcade.commands.env_example", "write a game folder's .env.example from settings.yaml"),
    "run": ("agentcade.commands.run", "run on the robot (desktop Daemon or WatcheRobot Application)"),
}

NOT_BUILT = 2


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; only the ``selected`` subcommand's module is imported.

    ``--help`` needs just the names and one-line helps of the table above, so a slow or
    broken subcommand module never costs the others anything.
    """
    parser = argparse.ArgumentParser(
        prog="agentcade",
        description="agentcade — the game host of the WatcheRobot desktop robot (小懒).",
    )
    parser.add_argument("--version", action="version", version=f"agentcade {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        module = _load(module_name) if name == selected else None
        if module is None:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        else:
            module.add_arguments(p)
    return parser


def _load(module_name: str) -> ModuleType | None:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    selected = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(selected if selected in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    module = _load(SUBCOMMANDS[args.command][0])
    if module is None:
        print(f"agentcade {args.command}: not built yet in this version.", file=sys.stderr)
        return NOT_BUILT
    code = 130  # the shell's code for Ctrl-C
    try:
        code = module.run(args)
    except* KeyboardInterrupt:  # trio delivers it inside an exception group
        print(file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
