"""Tests that need a program or module the machine may lack (a Debian package, a browser).

On a developer's machine without it such a test is skipped, with a reason that names the
package to install. In CI nothing may silently stop being tested: ``.ci/run`` installs the
packages and sets ``AGENTCADE_TESTS_REQUIRE_ALL=1``, which turns every such skip into a
failure. One home for this rule: use ``need_program`` / ``need_module``, never a bare
``pytest.skip`` for a missing dependency.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

REQUIRE_ALL = "AGENTCADE_TESTS_REQUIRE_ALL"


def _missing(what: str, install: str) -> None:
    reason = f"needs {what} (install: {install})"
    if os.environ.get(REQUIRE_ALL, "") not in ("", "0"):
        pytest.fail(f"{reason}; {REQUIRE_ALL} is set, so this may not be skipped", pytrace=False)
    pytest.skip(reason)


def need_program(program: str, *, package: str) -> str:
    """The path of ``program``; skip (or fail in CI) naming the Debian ``package``."""
    path = shutil.which(program)
    if path is None:
        _missing(f"the program {program!r}", f"apt-get install {package}")
        raise AssertionError("unreachable")  # pragma: no cover
    return path


def need_module(module: str, *, install: str) -> ModuleType:
    """Import ``module``; skip (or fail in CI) saying how to ``install`` it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        _missing(f"the Python module {module!r}", install)
        raise AssertionError("unreachable") from None  # pragma: no cover


def need_pip_program(program: str, *, install: str) -> str:
    """The path of ``program`` a Python package installs (in this venv or on PATH)."""
    here = Path(sys.executable).parent
    path = shutil.which(program, path=os.pathsep.join([str(here), os.environ.get("PATH", "")]))
    if path is None:
        _missing(f"the program {program!r}", install)
        raise AssertionError("unreachable")  # pragma: no cover
    return path


def need_private_network() -> None:
    """A private network namespace can be made here (Linux, root, util-linux, iproute2):
    the real Daemon's pairing broadcasts, so it runs only inside one."""
    from agentcade.sim.netns import namespace_unavailable

    reason = namespace_unavailable()
    if reason is not None:
        _missing(f"a private network namespace ({reason})", "run as root on Linux with util-linux and iproute2")


def need_speech_models() -> Path:
    """The folder of the embedded recogniser's and the neural voice's models, made here
    (blocking: hashing, maybe pip); skip (or fail in CI) when they cannot be."""
    from agentcade.voice.models import (
        VOICE_INSTALL,
        ModelMissing,
        baker_voice_dir,
        models_dir,
        whisper_base_dir,
    )

    try:
        whisper_base_dir()
        baker_voice_dir()
    except ModelMissing as exc:
        _missing(f"the speech models ({exc})", VOICE_INSTALL)
    return models_dir()
