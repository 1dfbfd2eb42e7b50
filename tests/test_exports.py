"""The public faces: the guide's import paths re-export the layer folders and hold no code.

A game author imports ``agentcade.skill``, ``.skill_agent``, ``.tools``, ``.effects``,
``.vector``, ``.settings`` and ``.judge`` (and ``agentcade.llm``, ``agentcade.testing``);
the code behind them lives in ``core/``, ``device/`` and ``game/``. Like httpx's
``test_exported_members``, each face's ``__all__`` is checked against what it re-exports,
so a name added inside cannot be forgotten outside, or the other way round.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentcade"

FACES = {
    "agentcade.skill": "agentcade.core.skill",
    "agentcade.skill_agent": "agentcade.game.skill_agent",
    "agentcade.tools": "agentcade.core.tools",
    "agentcade.effects": "agentcade.device.effects",
    "agentcade.vector": "agentcade.core.vector",
    "agentcade.settings": "agentcade.core.settings",
    "agentcade.judge": "agentcade.core.judge",
}
# Top-level modules that are not faces: the package itself, ``python -m`` and the CLI.
NOT_FACES = {"__init__.py", "__main__.py", "cli.py"}
FACE_MAX_LINES = 60


@pytest.mark.parametrize(("face", "inner"), sorted(FACES.items()))
def test_a_face_exports_exactly_what_its_module_exports(face: str, inner: str) -> None:
    face_module = importlib.import_module(face)
    inner_module = importlib.import_module(inner)
    assert len(set(face_module.__all__)) == len(face_module.__all__)
    assert sorted(face_module.__all__) == sorted(inner_module.__all__)
    for name in face_module.__all__:
        assert getattr(face_module, name) is getattr(inner_module, name), name


def test_every_top_level_module_is_a_face_or_the_entry_points() -> None:
    top = {p.name for p in PACKAGE.glob("*.py")} - NOT_FACES
    assert top == {name.split(".")[1] + ".py" for name in FACES}


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_holds_no_code_of_its_own(face: str) -> None:
    path = PACKAGE / (face.split(".")[1] + ".py")
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= FACE_MAX_LINES
    for node in ast.parse(text).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom):
            assert node.module == FACES[face], ast.unparse(node)
            assert all(alias.asname == alias.name for alias in node.names), ast.unparse(node)
            continue
        where = f"{path.name}:{node.lineno}: a face holds only re-exports and __all__"
        assert isinstance(node, ast.Assign), where
        assert ast.unparse(node.targets[0]) == "__all__", where


def test_the_testing_package_exports_what_it_documents() -> None:
    testing = importlib.import_module("agentcade.testing")
    assert len(set(testing.__all__)) == len(testing.__all__)
    for name in testing.__all__:
        assert getattr(testing, name) is not None
        assert f"``{name}``" in (testing.__doc__ or ""), f"agentcade.testing.{name} is undocumented"


def test_the_entry_modules_hold_no_more_than_their_job() -> None:
    assert len((PACKAGE / "__init__.py").read_text(encoding="utf-8").splitlines()) <= FACE_MAX_LINES
    assert len((PACKAGE / "__main__.py").read_text(encoding="utf-8").splitlines()) <= FACE_MAX_LINES
