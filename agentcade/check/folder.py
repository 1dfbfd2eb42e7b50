"""Checking a game folder: SKILL.md, the game import, the tools, then a served session.

SKILL.md (``check_skill``; its own rule IDs), the game import (``GAME-LOAD``), the tools
(``TOOLS-*``, ``SKILL-TOOL-MISSING``), then the folder is served on a free 127.0.0.1 port
and checked like a URL (``agentcade.check.session``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from agentcade.a2a.client import A2AClient
from agentcade.check.ids import ID_RULES, check_id
from agentcade.check.rules import (
    _GAME_RULES,
    _SESSION_RULES,
    DEFAULT_SAY,
    DEFAULT_TIMEOUT,
    CheckResult,
)
from agentcade.check.scenarios import SCENARIO_FILE, load_scenarios
from agentcade.check.session import GameCalls, ScenarioLines, check_session
from agentcade.core.errors import InputError
from agentcade.core.settings import AgentSettings
from agentcade.core.skill import RULES as SKILL_RULES, Skill, check_skill
from agentcade.core.trace import Trace

if TYPE_CHECKING:
    from agentcade.core.tools import Tool

__all__ = ["run_check"]


async def run_check(
    target: str,
    *,
    say: str = DEFAULT_SAY,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - per request, not for the whole check
    client: A2AClient | None = None,
) -> CheckResult:
    """Check a game folder (or built-in id) or an http(s) URL; never raises for game problems."""
    from agentcade.wiring.games import is_url

    if is_url(target):
        result = CheckResult(target)
        await check_session(result, target, say=say, timeout=timeout, client=client)
        return result
    return await _check_folder(target, say=say, timeout=timeout, client=client)


async def _check_folder(
    target: str, *, say: str, timeout: float, client: A2AClient | None  # noqa: ASYNC109
) -> CheckResult:
    from agentcade.core.settings import SettingsError
    from agentcade.core.tools import BUILTIN_TOOL_NAMES, ToolDefinitionError, collect_tools
    from agentcade.game.loader import GameLoadError, is_builtin_folder, load_game, resolve_game
    from agentcade.wiring.games import open_local_game
    from agentcade.wiring.serve import serve_game

    result = CheckResult(target)
    try:
        path = resolve_game(target)
    except GameLoadError as exc:
        result.problem("GAME-LOAD", str(exc), "give the path of a game folder (with SKILL.md and agent.py)")
        return result
    builtin = is_builtin_folder(path)  # the same rule as open_local_game
    _check_env_example(result, path)

    skill_ok, declared = _check_skill_file(result, path, expect_id=path.name if builtin else None)
    if declared is not None:
        check_id(result, declared.id, author=declared.author, folder=path)
    else:
        for rule in ID_RULES:
            result.skip(rule, "not checked: SKILL.md has no usable id")
    if not skill_ok:
        for rule in _GAME_RULES:
            result.skip(rule, "not checked: SKILL.md has errors")
        _skip_session(result, "not checked: the game did not load")
        return result
    try:
        game = load_game(path, builtin=builtin)
        tools = collect_tools(game.agent_cls)
    except (GameLoadError, ToolDefinitionError) as exc:
        cause = exc if isinstance(exc, ToolDefinitionError) else exc.__cause__
        if isinstance(cause, ToolDefinitionError):
            result.problem("TOOLS-DEFINITION", str(cause), "fix the @tool declaration as the message says")
            result.ok("GAME-LOAD", "the game folder loads apart from its tools")
        else:
            result.problem("GAME-LOAD", str(exc), "fix the file named in the message, then run check again")
            result.skip("TOOLS-DEFINITION", "not checked: the game did not load")
        for rule in _GAME_RULES[2:]:
            result.skip(rule, "not checked: the game did not load")
        _skip_session(result, "not checked: the game did not load")
        return result
    result.skill = game.skill
    result.ok("GAME-LOAD")
    result.ok("TOOLS-DEFINITION")
    _check_tool_mentions(result, game.skill, set(tools), BUILTIN_TOOL_NAMES)
    _check_settings_declared(result, path, game.agent_cls.config)
    _check_blocking(result, game.agent_cls, tools.values())

    game_calls = GameCalls()
    try:
        async with open_local_game(str(path), builtin=builtin, trace=Trace(game_calls)) as local:
            result.offline = bool(local.settings.llm.offline)
            async with trio.open_nursery() as nursery:
                _port, _card_url = await nursery.start(
                    lambda task_status: serve_game(
                        local, port=0, host="127.0.0.1", url=None, task_status=task_status
                    )
                )
                served = f"http://127.0.0.1:{_port}/"
                await check_session(
                    result, served, say=say, timeout=timeout, client=client, local=True,
                    game_calls=game_calls, scenarios=_scenario_lines(result, path),
                )
                nursery.cancel_scope.cancel()
    except (SettingsError, GameLoadError, OSError) as exc:  # settings, start-up
        result.problem(
            "GAME-LOAD",
            f"the game could not be served: {type(exc).__name__}: {exc}",
            "fix settings.yaml / .env as the message says",
        )
        _skip_session(result, "not checked: the game could not be served")
    return result


def _scenario_lines(result: CheckResult, folder: Path) -> list[ScenarioLines]:
    """The lines of ``scenarios.yaml`` (none when it is missing), so check exercises the
    paths the author wrote scenarios for; one that does not load is ``SCENARIOS-FILE``."""
    if not (folder / SCENARIO_FILE).is_file():
        result.skip("SCENARIOS-FILE", "no scenarios.yaml")
        return []
    try:
        scenarios = load_scenarios(folder)
    except InputError as exc:
        result.problem("SCENARIOS-FILE", str(exc), "fix scenarios.yaml at the line named (see the guide, 场景测试)")
        return []
    result.ok("SCENARIOS-FILE")
    return [ScenarioLines(s.name, tuple((step.kind, step.text) for step in s.steps)) for s in scenarios]


def _check_skill_file(
    result: CheckResult, path: Path, *, expect_id: str | None
) -> tuple[bool, Skill | None]:
    """SKILL.md rules; returns whether it has no ``fail`` problem (so the game can load),
    and the declaration when it parses."""
    skill_path = path / "SKILL.md"
    if not skill_path.is_file():
        return True, None  # load_game reports the missing file as GAME-LOAD
    data = skill_path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        result.problem(
            "SKILL-ENCODING", f"SKILL.md is not valid UTF-8 (byte {exc.start})", "save SKILL.md as UTF-8"
        )
        return False, None
    skill, problems = check_skill(text, source=str(skill_path), expect_id=expect_id)
    for p in problems:
        result.problem(p.rule, f"SKILL.md: {p.field}: {p.message}", p.fix)
    for rule in SKILL_RULES:
        if rule == "SKILL-ID-FOLDER" and expect_id is None:
            continue
        result.ok(rule, "SKILL.md follows this rule")
    return not any(p.level == "fail" for p in problems), skill


def _check_tool_mentions(
    result: CheckResult, skill: Skill, tools: set[str], builtins: frozenset[str]
) -> None:
    if not skill.tool_references:
        result.skip("SKILL-TOOL-MISSING", 'not exercised: SKILL.md says "调用 X" for no tool')
    for name in skill.tool_references:
        if name not in tools and name not in builtins:
            close = sorted(tools)
            result.problem(
                "SKILL-TOOL-MISSING",
                f'SKILL.md says "调用 {name}" but the game has no tool {name!r}'
                + (f" (tools: {', '.join(close)})" if close else ""),
                "rename the mention in SKILL.md to the tool's name, or add the tool",
            )
    result.ok("SKILL-TOOL-MISSING")
    if not tools:
        result.skip("TOOLS-UNMENTIONED", "not exercised: the game has no tools")
    for name in sorted(tools):
        if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", skill.body):
            result.problem(
                "TOOLS-UNMENTIONED",
                f"the tool {name!r} is never mentioned in SKILL.md",
                f'say when to use it in the flow, e.g. "调用 {name}", or remove the tool',
            )
    result.ok("TOOLS-UNMENTIONED")


def _check_blocking(result: CheckResult, agent_cls: type, tools: Iterable[Tool]) -> None:
    from agentcade.check.blocking import blocking_calls, tool_and_hook_functions

    clean = True
    functions = tool_and_hook_functions(agent_cls, tools)
    if not functions:
        result.skip("TOOLS-BLOCKING", "not exercised: the game has no tools and no hooks")
        return
    for where, fn in functions:
        for call, instead in blocking_calls(fn):
            clean = False
            result.problem(
                "TOOLS-BLOCKING",
                f"{where} calls {call}(), which blocks: the family waits in silence meanwhile",
                f"make it async and use {instead}, or keep the tool cheap",
            )
    if clean:
        result.ok("TOOLS-BLOCKING")


def _check_settings_declared(result: CheckResult, folder: Path, config_cls: type[AgentSettings]) -> None:
    """A field of config.py that settings.yaml does not list is still read, but nobody
    learns it exists: no description, no default, nothing in a generated .env example."""
    from agentcade.core.settings import LLM_KEYS, SettingsError, load_settings_spec

    spec = folder / "settings.yaml"
    try:
        declared = {s.key for s in load_settings_spec(spec)} if spec.is_file() else set()
    except SettingsError:
        result.skip("SETTINGS-UNDECLARED", "not checked: settings.yaml does not load (see GAME-LOAD)")
        return
    read = [k for k in config_cls.setting_keys() if k not in LLM_KEYS]
    missing = [k for k in read if k not in declared]
    if not read:
        result.skip("SETTINGS-UNDECLARED", "not exercised: config.py reads no setting of its own")
    elif missing:
        result.problem(
            "SETTINGS-UNDECLARED",
            f"config.py reads {', '.join(missing)}, which settings.yaml does not list",
            "add an item (key, description, default) for each to settings.yaml",
        )
    else:
        result.ok("SETTINGS-UNDECLARED")


def _check_env_example(result: CheckResult, folder: Path) -> None:
    """``.env.example`` is what ``agentcade env-example`` writes from settings.yaml now:
    whoever runs the game copies it to ``.env``, so a missing key there is a setting
    nobody knows to fill in."""
    from agentcade.core.dotenv import read_dotenv
    from agentcade.core.settings import SettingsError, env_example

    fix = f"run: agentcade env-example {folder}"
    try:
        expected = env_example(folder)
    except SettingsError:
        result.skip("SETTINGS-ENV-EXAMPLE", "not checked: settings.yaml does not load (see GAME-LOAD)")
        return
    path = folder / ".env.example"
    try:
        found = path.read_text(encoding="utf-8")
        keys = set(read_dotenv(path))
    except FileNotFoundError:
        result.problem("SETTINGS-ENV-EXAMPLE", "the folder has no .env.example", fix)
        return
    except (OSError, UnicodeDecodeError, SettingsError) as exc:
        result.problem("SETTINGS-ENV-EXAMPLE", f".env.example cannot be read: {exc}", fix)
        return
    if found.replace("\r\n", "\n") != expected:
        from agentcade.core.settings import env_example_specs

        wanted = [spec.key for spec in env_example_specs(folder)]
        missing = [k for k in wanted if k not in keys]
        extra = sorted(keys - set(wanted))
        what = "; ".join(
            part for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"not in settings.yaml: {', '.join(extra)}" if extra else "",
            ) if part
        ) or "descriptions or defaults changed"
        result.problem("SETTINGS-ENV-EXAMPLE", f".env.example is out of date with settings.yaml ({what})", fix)
        return
    result.ok("SETTINGS-ENV-EXAMPLE")


def _skip_session(result: CheckResult, why: str) -> None:
    for rule in ("CARD-READABLE", "CARD-STREAMING", "CARD-PROTOCOL", "CARD-URL-MISMATCH",
                 "URL-HTTPS", "PROTOCOL-SUNSET", *_SESSION_RULES):
        result.skip(rule, why)
