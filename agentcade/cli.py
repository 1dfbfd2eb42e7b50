"""The ``agentcade`` command: one program, one subcommand per job of the guide's command table.

Each subcommand lives in its own module and is imported only when it runs, so
``agentcade --version`` and ``--help`` stay fast in the one-file executable.

Error handling: whatever a subcommand lets escape ends here as one line on stderr and a
documented exit code (the README's "Exit codes"), never a traceback; ``--debug``
(anywhere on the line, or ``AGENTCADE_DEBUG=1``) prints the traceback too.
"""

from __future__ import annotations

import argparse
import importlib
import io
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from agentcade import __version__
from agentcade.core.errors import AgentcadeError

# name -> (module with ``add_arguments(parser)`` and ``run(args) -> int``, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "play": ("agentcade.commands.play", "the whole pipeline in text: main agent and every game"),
    "chat": ("agentcade.commands.chat", "the text simulator: talk to one game directly"),
    "serve": ("agentcade.commands.serve", "serve one game over A2A (trio + h11)"),
    "build-game": ("agentcade.commands.build_game", "build one game as a standalone binary"),
    "check": ("agentcade.commands.check", "compliance check of a game folder or URL"),
    "catalog": ("agentcade.commands.catalog", "validate a game catalog file"),
    "test": ("agentcade.commands.test", "scenario tests of a game folder, pass rate per scenario"),
    "env-example": ("agentcade.commands.env_example", "write a game folder's .env.example from settings.yaml"),
    "run": ("agentcade.commands.run", "run on the robot (desktop Daemon or WatcheRobot Application)"),
    "e2e": ("agentcade.commands.e2e", "the guide's robot test: speak each game's lines, judge from the trace"),
}

NOT_BUILT = 2
FAILED = 1
"""What was given is wrong or could not be used (a file, a setting, an address, a game)."""
INTERNAL = 70
"""A bug in agentcade (BSD ``EX_SOFTWARE``): one line, the traceback with ``--debug``."""
INTERRUPTED = 130
"""Ctrl-C (the shell's code for SIGINT)."""


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
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of an internal error (also AGENTCADE_DEBUG=1)")
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
    _tolerant_output()
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("AGENTCADE_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]
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
    from agentcade.commands._logging import OneLineHandler

    handler = OneLineHandler(args.command, debug=debug)
    logging.getLogger().addHandler(handler)
    try:
        code: int = module.run(args)
    except BaseException as exc:  # noqa: BLE001 - the last boundary: one line, an exit code
        return failed(args.command, exc, debug=debug)
    finally:
        logging.getLogger().removeHandler(handler)
    return code


def _tolerant_output() -> None:
    """A console whose code page cannot show a character (GBK has no ✓) prints ``?``
    instead of failing: output to a Chinese Windows console or pipe never raises."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="replace")


def failed(command: str, exc: BaseException, *, debug: bool = False) -> int:
    """Say in one line what went wrong and return its exit code (see the module docstring).

    trio hands errors over inside exception groups; the first leaf that says most is the
    one told: Ctrl-C, then an ``AgentcadeError`` (its message says what to fix), then an
    ``OSError``, then anything else (a bug).
    """
    leaves = list(_leaves(exc))
    if any(isinstance(e, KeyboardInterrupt) for e in leaves):
        print(file=sys.stderr)
        return INTERRUPTED
    exits = [e for e in leaves if isinstance(e, SystemExit)]
    if exits and isinstance(exits[0].code, int):
        return exits[0].code
    if debug:
        traceback.print_exception(exc)
    told = next((e for e in leaves if isinstance(e, AgentcadeError)), None)
    if told is not None:
        print(f"agentcade {command}: {told}", file=sys.stderr)
        return FAILED
    oserror = next((e for e in leaves if isinstance(e, OSError)), None)
    if oserror is not None:
        where = f"{oserror.filename}: " if oserror.filename else ""
        print(f"agentcade {command}: {where}{oserror.strerror or oserror}", file=sys.stderr)
        return FAILED
    first = leaves[0] if leaves else exc
    hint = "" if debug else "；加 --debug 可以看到详细信息"
    print(f"agentcade {command}: 内部错误：{type(first).__name__}: {first}{hint}。"
          "请把这一行报告给开发者。", file=sys.stderr)
    return INTERNAL


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


if __name__ == "__main__":
    raise SystemExit(main())
