"""Every package the code imports is declared in pyproject.toml.

A package that is only installed because another one brings it (websockets through the
robot SDK, protobuf through a2a-sdk) can disappear or change with that package's next
release; what agentcade and the built-in games import must be their own dependency.
Reads every import (AST, also inside functions) of ``agentcade/`` and ``games/``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = {"agentcade", "games"}
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
TEST_EXTRAS = {"test"}
"""Extras only tests may import from: agentcade and games never use them."""


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(requirements: list[str]) -> set[str]:
    return {_canon(Requirement(r).name) for r in requirements}


DECLARED = _names(PYPROJECT["dependencies"])
OPTIONAL = {
    extra: _names(reqs)
    for extra, reqs in PYPROJECT["optional-dependencies"].items()
    if extra not in TEST_EXTRAS
}
"""Optional features (build, e2e, ear): imported only inside the function that needs them."""


def _imports(path: Path) -> Iterator[tuple[str, bool]]:
    """(top-level module, imported inside a function) for every absolute import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            in_function.update(id(inner) for inner in ast.walk(node) if inner is not node)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            yield module.split(".")[0], id(node) in in_function


PROVIDERS = importlib.metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    """The distributions that provide ``module`` (its own name when none is installed)."""
    found = PROVIDERS.get(module)
    return {_canon(d) for d in found} if found else {_canon(module)}


def _undeclared() -> list[str]:
    wrong = []
    for folder in ("agentcade", "games"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for module, lazy in _imports(path):
                if module in FIRST_PARTY or module in sys.stdlib_module_names:
                    continue
                dists = _distributions(module)
                if dists & DECLARED:
                    continue
                extras = [extra for extra, names in OPTIONAL.items() if dists & names]
                if extras and lazy:
                    continue
                where = path.relative_to(ROOT).as_posix()
                why = f"only in the [{extras[0]}] extra, imported at module level" if extras else "not declared"
                wrong.append(f"{where}: {module} ({'/'.join(sorted(dists))}) {why}")
    return wrong


def test_every_package_imported_by_the_code_is_declared() -> None:
    assert _undeclared() == []


def test_test_only_packages_are_not_dependencies() -> None:
    test_only = _names(PYPROJECT["optional-dependencies"]["test"]) - DECLARED
    assert {"pytest", "pytest-trio", "playwright"} <= test_only
