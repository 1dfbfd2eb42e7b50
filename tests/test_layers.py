"""The layers hold: every import in ``agentcade/`` and ``games/`` follows the layer table.

The table is written once, in ``docs/internals.md``, and read from there; the public game
API is written here and in the guide (a test keeps them equal).
Imports are read from the AST, including imports inside functions, so a lazy import
cannot hide an arrow the table forbids.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

INTERNALS = ROOT / "docs" / "internals.md"


def read_layer_table(text: str) -> list[tuple[str, tuple[str, ...], frozenset[str]]]:
    """The layer table between the ``layers`` markers of ``docs/internals.md``.

    One row per layer, lowest first: ``| layer | `module`, ... | layer, ... |``. The table is
    written once, there; this test reads it, so the documentation is the rule.
    """
    block = text.split("<!-- layers:begin -->", 1)[1].split("<!-- layers:end -->", 1)[0]
    rows = [line for line in block.strip().splitlines()[2:] if line.startswith("|")]
    table = []
    for row in rows:
        layer, modules, may = (cell.strip() for cell in row.strip("|").split("|"))
        table.append(
            (layer, tuple(re.findall(r"`([^`]+)`", modules)), frozenset(m.strip() for m in may.split(",")))
        )
    return table


# (layer, module prefixes, layers it may import). Order: lowest first.
LAYERS = read_layer_table(INTERNALS.read_text(encoding="utf-8"))

# What a game may import from agentcade: module -> names (None: the whole module).
PUBLIC_GAME_API: dict[str, frozenset[str] | None] = {
    "agentcade.effects": None,
    "agentcade.judge": frozenset(
        {"Deck", "asks_restart", "asks_verdict", "fuzzy_syllable", "help_request", "is_match", "judge_guess",
         "looks_like_guess", "normalize", "parse_number", "round_request", "rules_question",
         "small_talk"}
    ),
    "agentcade.llm": frozenset({"ChatModel", "ModelError", "make_model"}),
    "agentcade.settings": frozenset({"AgentSettings", "LLMSettings", "user_data_dir"}),
    "agentcade.skill": frozenset({"Skill"}),
    "agentcade.skill_agent": frozenset({"SkillAgent", "Turn"}),
    "agentcade.tools": frozenset({"tool"}),
    "agentcade.vector": frozenset({"Stroke", "VectorError", "encode_vector", "star"}),
}


# --- the checker -------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One ``agentcade`` import: where it is and the module (or module.name) it names."""

    path: Path
    line: int
    target: str
    names: tuple[str, ...] = ()


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> Iterator[Import]:
    """Every import of ``agentcade`` in a file, wherever it is (functions included)."""
    package = module_name(path, root).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "agentcade":
                    yield Import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: resolve against the file's package
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, module] if module else base)
            if module.split(".")[0] == "agentcade":
                yield Import(path, node.lineno, module, tuple(a.name for a in node.names))


def layer_of(module: str) -> str | None:
    best: tuple[int, str] | None = None
    for layer, prefixes, _ in LAYERS:
        for prefix in prefixes:
            exact_only = prefix == "agentcade"
            matches = module == prefix or (not exact_only and module.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), layer)
    return None if best is None else best[1]


def targets(imp: Import, root: Path) -> list[str]:
    """The modules an import reaches: ``from agentcade import effects`` reaches
    ``agentcade.effects``; ``from agentcade.skill import Skill`` reaches ``agentcade.skill``."""
    out = []
    for name in imp.names:
        candidate = f"{imp.target}.{name}"
        as_path = root.joinpath(*candidate.split("."))
        if as_path.with_suffix(".py").is_file() or (as_path / "__init__.py").is_file():
            out.append(candidate)
    if not out or len(out) < len(imp.names):
        out.append(imp.target)
    return out


def layering_violations(root: Path) -> list[str]:
    """Every import in ``root/agentcade`` that its layer may not make, one line each."""
    allowed = {layer: may for layer, _, may in LAYERS}
    problems = []
    for path in sorted((root / "agentcade").rglob("*.py")):
        source = module_name(path, root)
        layer = layer_of(source)
        if layer is None:
            problems.append(f"{source}: in no layer; add it to the layer table")
            continue
        for imp in imports_of(path, root):
            for target in targets(imp, root):
                target_layer = layer_of(target)
                if target_layer is None or target_layer not in allowed[layer]:
                    problems.append(
                        f"{path.relative_to(root)}:{imp.line}: {source} ({layer}) imports "
                        f"{target} ({target_layer or 'no layer'})"
                    )
    return problems


def game_api_violations(root: Path) -> list[str]:
    """Every import in ``root/games`` of something outside the public game API."""
    problems = []
    for path in sorted((root / "games").rglob("*.py")):
        for imp in imports_of(path, root):
            if imp.target == "agentcade" and imp.names:
                modules = [f"agentcade.{n}" for n in imp.names]
                bad = [m for m in modules if m not in PUBLIC_GAME_API or PUBLIC_GAME_API[m] is not None]
            elif imp.target in PUBLIC_GAME_API:
                names = PUBLIC_GAME_API[imp.target]
                bad = [] if names is None else [n for n in imp.names if n not in names]
                if not imp.names and names is not None:
                    bad = [imp.target]
            else:
                bad = [imp.target]
            for what in bad:
                problems.append(f"{path.relative_to(root)}:{imp.line}: {what} is not public game API")
    return problems


# --- the tests ---------------------------------------------------------------------------


def test_agentcade_imports_follow_the_layer_table() -> None:
    assert layering_violations(ROOT) == []


def test_games_import_only_the_public_game_api() -> None:
    assert game_api_violations(ROOT) == []


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "agentcade", tmp_path / "agentcade", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "games", tmp_path / "games", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_a_planted_import_from_game_to_a2a_fails(tree_copy: Path) -> None:
    assert layering_violations(tree_copy) == []
    planted = tree_copy / "agentcade" / "game" / "planted.py"
    planted.write_text(
        "def lazy() -> None:\n    from agentcade.a2a.client import A2AClient  # hidden in a function\n",
        encoding="utf-8",
    )
    assert layering_violations(tree_copy) == [
        "agentcade/game/planted.py:2: agentcade.game.planted (game) imports "
        "agentcade.a2a.client (a2a)"
    ]


def test_a_planted_core_import_of_the_device_layer_fails(tree_copy: Path) -> None:
    skill = tree_copy / "agentcade" / "core" / "skill.py"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nfrom agentcade.device import validate\n", encoding="utf-8")
    problems = layering_violations(tree_copy)
    assert len(problems) == 1
    assert "agentcade.core.skill (core) imports agentcade.device.validate (device)" in problems[0]


def test_a_planted_import_of_the_commands_from_below_them_fails(tree_copy: Path) -> None:
    """The CLI is the top: ``check`` (and everything below) never borrows from a command."""
    planted = tree_copy / "agentcade" / "check" / "planted.py"
    planted.write_text("def lazy() -> None:\n    from agentcade.commands.test import run\n", encoding="utf-8")
    assert layering_violations(tree_copy) == [
        "agentcade/check/planted.py:2: agentcade.check.planted (app) imports "
        "agentcade.commands.test (commands)"
    ]


def test_a_game_importing_an_internal_module_fails(tree_copy: Path) -> None:
    agent = tree_copy / "games" / "riddle" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "\nfrom agentcade.game.turn import Turn\n", encoding="utf-8")
    problems = game_api_violations(tree_copy)
    assert len(problems) == 1
    assert "agentcade.game.turn is not public game API" in problems[0]


def test_no_layer_but_the_test_kit_itself_imports_the_test_kit() -> None:
    # The product (the wiring, the commands, main, voice, device, the simulated robot)
    # never imports agentcade.testing: --robot sim is agentcade.sim.
    assert [layer for layer, _, may in LAYERS if "testing" in may] == ["testing"]


def test_the_wiring_and_the_commands_may_import_the_simulated_robot() -> None:
    allowed = {layer: may for layer, _, may in LAYERS}
    assert layer_of("agentcade.sim.device") == "sim"
    assert "sim" in allowed["wiring"]
    assert "sim" in allowed["app"]
    assert "sim" not in allowed["device"]
    assert "sim" not in allowed["voice"]


def test_a_planted_wiring_import_of_the_test_kit_fails(tree_copy: Path) -> None:
    robot = tree_copy / "agentcade" / "wiring" / "robot.py"
    robot.write_text(
        robot.read_text(encoding="utf-8") + "\nfrom agentcade.testing.load import cpu_load\n", encoding="utf-8"
    )
    problems = layering_violations(tree_copy)
    assert len(problems) == 1
    assert "agentcade.wiring.robot (wiring) imports agentcade.testing.load (testing)" in problems[0]


def test_the_layer_table_names_every_layer_it_allows() -> None:
    names = [layer for layer, _, _ in LAYERS]
    assert len(names) == len(set(names))
    assert "core" in names
    for layer, _, may in LAYERS:
        assert layer in may, layer
        assert may <= set(names), layer


def test_the_public_game_api_in_the_guide_is_the_one_enforced() -> None:
    text = (ROOT / "docs" / "guide.zh-CN.md").read_text(encoding="utf-8")
    section = text.split("### 游戏能用的接口", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    documented: dict[str, frozenset[str] | None] = {}
    for line in block.strip().splitlines():
        module, _, names = line.partition(":")
        documented[module.strip()] = (
            frozenset(n.strip() for n in names.split(",")) if names.strip() else None
        )
    assert documented == PUBLIC_GAME_API


# I/O libraries the pure core must not import (the core is data and rules; I/O is above it).
IO_LIBRARIES = frozenset({"trio", "h11", "openai", "watcherobot", "a2a", "httpx", "trio_websocket"})


def core_io_imports(root: Path) -> list[str]:
    """Every import of an I/O library by a module of the core layer."""
    problems = []
    for path in sorted((root / "agentcade").rglob("*.py")):
        if layer_of(module_name(path, root)) != "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            problems += [
                f"{path.relative_to(root)}:{node.lineno}: imports {name}"
                for name in names
                if name.split(".")[0] in IO_LIBRARIES
            ]
    return problems


def test_the_pure_core_imports_no_io_library() -> None:
    assert core_io_imports(ROOT) == []


def test_a_planted_trio_import_in_the_core_fails(tree_copy: Path) -> None:
    judge = tree_copy / "agentcade" / "core" / "judge" / "matching.py"
    judge.write_text(judge.read_text(encoding="utf-8") + "\n\ndef f() -> None:\n    import trio\n", encoding="utf-8")
    assert [p.split(": ", 1)[1] for p in core_io_imports(tree_copy)] == ["imports trio"]


# --- import cycles between files ---------------------------------------------------------


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks: imports for the type checker only."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def file_of(module: str, root: Path) -> Path | None:
    as_path = root.joinpath(*module.split("."))
    for candidate in (as_path.with_suffix(".py"), as_path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def import_graph(root: Path) -> dict[Path, set[Path]]:
    """File -> the files it imports (imports inside functions too; not TYPE_CHECKING ones)."""
    graph: dict[Path, set[Path]] = {}
    for path in sorted((root / "agentcade").rglob("*.py")):
        skip = _type_checking_lines(ast.parse(path.read_text(encoding="utf-8")))
        edges = graph.setdefault(path, set())
        for imp in imports_of(path, root):
            if imp.line in skip:
                continue
            for target in targets(imp, root):
                found = file_of(target, root)
                if found is not None and found != path:
                    edges.add(found)
    return graph


def import_cycles(root: Path) -> list[list[str]]:
    """Every group of files that import each other, directly or round about (Tarjan)."""
    graph = import_graph(root)
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    cycles: list[list[str]] = []

    def visit(node: Path) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(str(m.relative_to(root)) for m in group))

    for node in graph:
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_no_two_files_import_each_other() -> None:
    assert import_cycles(ROOT) == []


def test_a_planted_lazy_import_cycle_fails(tree_copy: Path) -> None:
    validate = tree_copy / "agentcade" / "device" / "validate.py"
    validate.write_text(
        validate.read_text(encoding="utf-8")
        + "\n\ndef _lazy() -> None:\n    from agentcade.device.proxy import RobotProxy  # noqa: F401\n",
        encoding="utf-8",
    )
    assert import_cycles(tree_copy) == [["agentcade/device/proxy.py", "agentcade/device/validate.py"]]
