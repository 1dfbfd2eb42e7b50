"""Loading a game folder: from a path, from the built-in ``games/``, or inside the executable.

A game folder is a small Python package (``__init__.py``, ``agent.py`` with
``GameAgent``, ``config.py``, ``settings.yaml``, ``SKILL.md``) whose modules import each
other relatively (``from .config import Settings``). It is imported under a private
package name derived from its path, so two folders with the same id (a built-in game and
the one in development that replaces it) never collide in ``sys.modules``, and nothing
depends on the folder being on ``sys.path``.

The built-in games are imported as ``agentcade.games.<id>``, under the runtime's own
namespace: their folders are at the top of the repository (``games/``), installed as the
``agentcade.games`` package (a ``package-dir`` mapping in ``setup.py``), so a game author's
own ``games`` package in the current folder can never shadow them. Inside the PyInstaller
executable they are data files under ``sys._MEIPASS/games`` and load the same way under
the same names; their third-party imports are bundled by the spec's hidden imports.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from agentcade.core.errors import GameLoadError
from agentcade.core.settings import AgentSettings, load_game_settings
from agentcade.core.skill import Skill, SkillError
from agentcade.game.skill_agent import SkillAgent

__all__ = [
    "GameLoadError",
    "LoadedGame",
    "builtin_games_dir",
    "is_builtin_folder",
    "list_builtin_games",
    "load_game",
    "resolve_game",
]

REQUIRED_FILES = ("SKILL.md", "agent.py", "__init__.py")


@dataclass(frozen=True)
class LoadedGame:
    """A game class ready to make sessions, and where it came from."""

    id: str
    path: Path
    skill: Skill
    agent_cls: type[SkillAgent]
    builtin: bool = False

    def load_settings(self, environ: os._Environ[str] | dict[str, str] | None = None) -> AgentSettings:
        """Settings from settings.yaml defaults, the folder's ``.env``, then the environment."""
        env = dict(os.environ if environ is None else environ)
        return load_game_settings(self.agent_cls.config, self.path, env)

    def new_agent(self, settings: AgentSettings) -> SkillAgent:
        """One ``GameAgent`` for one session."""
        return self.agent_cls(settings)


BUILTIN_PACKAGE = "agentcade.games"


def builtin_games_dir() -> Path:
    """Where the built-in games live: inside the executable, the wheel, or the checkout."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root is not None:
        return Path(frozen_root) / "games"
    try:
        spec = importlib.util.find_spec(BUILTIN_PACKAGE)
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / "games"  # a checkout that is not installed


def is_builtin_folder(folder: Path) -> bool:
    """Whether ``folder`` is one of the built-in games' folders."""
    return folder.resolve().parent == builtin_games_dir().resolve()


def list_builtin_games() -> list[LoadedGame]:
    """Every built-in game, sorted by id; a broken one raises GameLoadError."""
    root = builtin_games_dir()
    return [
        load_game(p, builtin=True)
        for p in sorted(root.iterdir())
        if p.is_dir() and (p / "SKILL.md").is_file()
    ]


def resolve_game(arg: str) -> Path:
    """A folder path as given, or the folder of a built-in game with that id."""
    path = Path(arg).expanduser()
    if path.is_dir():
        return path.resolve()
    builtin = builtin_games_dir() / arg
    if builtin.is_dir():
        return builtin
    raise GameLoadError(f"{arg}: no such game folder, and no built-in game with that id")


def load_game(path: str | Path, *, builtin: bool = False) -> LoadedGame:
    """Import the game folder at ``path`` and check it.

    Raises:
        GameLoadError: a file is missing, SKILL.md is invalid, agent.py fails to import,
            or ``GameAgent`` is missing or not a ``SkillAgent``. The message names the file.
    """
    folder = Path(path).resolve()
    if not folder.is_dir():
        raise GameLoadError(f"{folder}: not a folder; a game is a folder with SKILL.md and agent.py")
    for name in REQUIRED_FILES:
        if not (folder / name).is_file():
            raise GameLoadError(f"{folder / name}: missing; every game folder needs {', '.join(REQUIRED_FILES)}")
    try:
        skill = Skill.load(folder / "SKILL.md", expect_id=folder.name if builtin else None)
    except SkillError as exc:
        raise GameLoadError(str(exc)) from None
    package = _import_builtin(folder) if builtin else _import_package(folder)
    agent_path = folder / "agent.py"
    try:
        module = importlib.import_module(f"{package.__name__}.agent")
    except SyntaxError as exc:
        raise GameLoadError(f"{agent_path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:
        raise GameLoadError(f"{agent_path}: failed to import: {type(exc).__name__}: {exc}") from exc
    agent_cls = getattr(module, "GameAgent", None)
    if not (isinstance(agent_cls, type) and issubclass(agent_cls, SkillAgent)):
        raise GameLoadError(f"{agent_path}: must define `class GameAgent(SkillAgent)`")
    if getattr(agent_cls, "skill", None) is None:
        raise GameLoadError(f"{agent_path}: GameAgent.skill is not set; add skill = Skill.load(...)")
    if agent_cls.skill.id != skill.id:
        raise GameLoadError(
            f"{agent_path}: GameAgent.skill has id {agent_cls.skill.id!r} but the folder's "
            f"SKILL.md says {skill.id!r}; load the SKILL.md next to agent.py"
        )
    return LoadedGame(id=skill.id, path=folder, skill=skill, agent_cls=agent_cls, builtin=builtin)


def _import_builtin(folder: Path) -> ModuleType:
    """Import a built-in game as ``agentcade.games.<id>``.

    ``agentcade.games`` is the installed package when there is one (wheel, editable
    install); inside the executable, where the games are data files, it is made here as a
    package whose path is their folder.
    """
    parent = sys.modules.get(BUILTIN_PACKAGE)
    if parent is None:
        try:
            parent = importlib.import_module(BUILTIN_PACKAGE)
        except ImportError:
            parent = ModuleType(BUILTIN_PACKAGE, "The built-in games.")
            parent.__path__ = [str(folder.parent)]
            sys.modules[BUILTIN_PACKAGE] = parent
    return _exec_package(f"{BUILTIN_PACKAGE}.{folder.name}", folder)


def _import_package(folder: Path) -> ModuleType:
    """Import the folder as a package under a private name unique to its path."""
    digest = hashlib.sha1(str(folder).encode()).hexdigest()[:10]
    return _exec_package(f"agentcade_game_{folder.name}_{digest}", folder)


def _exec_package(name: str, folder: Path) -> ModuleType:
    existing = sys.modules.get(name)
    if existing is not None:
        return existing
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise GameLoadError(f"{folder / '__init__.py'}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise GameLoadError(f"{folder / '__init__.py'}: failed to import: {exc}") from exc
    return module
