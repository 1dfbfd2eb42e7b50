"""``agentcade check``: every rule fails on a broken game and passes on a good one.

Folder rules use copies of the probe game; session rules use small in-process handlers
behind our A2A server (fast) and two games written directly on a2a-sdk's server
(``tests/check_peers``, one subprocess each for the whole module).
"""

from __future__ import annotations

import argparse
import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from agentcade.a2a.card import build_card
from agentcade.a2a.client import A2AClient
from agentcade.a2a.server import serve_a2a
from agentcade.check import (
    RULES,
    CheckResult,
    catalog_entry,
    format_text as check_mod_format,
    run_check,
    session as check_mod,
    to_junit,
)
from agentcade.check.catalog import Catalog, check_catalog
from agentcade.check.rules import _SESSION_RULES
from agentcade.commands import check as check_cmd
from agentcade.core.protocol import Directive, GameInput, GameReply
from tests.a2a_peers import FakeSkill
from tests.check_peers import PeerProcess

ROOT = Path(__file__).resolve().parents[1]
RIDDLE = ROOT / "games" / "riddle"
GOOD_SKILL = FakeSkill(required_capabilities=("motion",), author="tests", homepage="https://example.org/g")


@pytest.fixture(autouse=True)
def _no_public_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PUBLIC_URL", raising=False)
    monkeypatch.delenv("SPACE_HOST", raising=False)


@pytest.fixture(scope="module")
def peers() -> Any:
    with PeerProcess("compliant") as good, PeerProcess("violating") as bad, \
            PeerProcess("old_version") as old:
        yield {"compliant": good.url, "violating": bad.url, "old_version": old.url}


# --- a configurable game behind our own server ---------------------------------------------

Behaviour = Callable[[str, GameInput, Any], Any]


class Scripted:
    """A compliant game; ``overrides[kind]`` replaces what it does for one kind of input."""

    def __init__(self, **overrides: Behaviour) -> None:
        self.live: set[str] = set()
        self.overrides = overrides

    def has_session(self, context_id: str) -> bool:
        return context_id in self.live

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        if game_input.kind == "start":
            self.live.add(context_id)
        elif context_id not in self.live:  # the check's message to a missing session
            await emit(GameReply(text="结束了", session="ended"), final=True)
            return
        override = self.overrides.get(game_input.kind)
        if override is not None:
            await override(context_id, game_input, emit)
            return
        if game_input.kind == "start":
            await emit(GameReply(text="开始啦"), final=True)
        elif game_input.kind == "end":
            self.live.discard(context_id)
            await emit(GameReply(text="再见", session="ended"), final=True)
        else:
            await emit(GameReply(text="不对哦"), final=True)


async def serve(nursery: trio.Nursery, handler: Any, *, card: Callable[[int], dict] | None = None,
                **card_kw: Any) -> str:
    def make(port: int) -> dict:
        if card is not None:
            return card(port)
        return build_card(GOOD_SKILL, f"http://127.0.0.1:{port}/", **card_kw)

    listeners = await nursery.start(serve_a2a, handler, make, 0)
    return f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"


async def check_url(nursery: trio.Nursery, handler: Any = None, **kw: Any) -> CheckResult:
    timeout = kw.pop("timeout", 5.0)
    url = await serve(nursery, handler or Scripted(), **kw)
    return await run_check(url, timeout=timeout)


def statuses(result: CheckResult, rule: str) -> set[str]:
    return set(result.statuses(rule))


# --- folder checks -------------------------------------------------------------------------


def game_copy(tmp_path: Path, name: str = "my_riddle") -> Path:
    """A copy of the riddle game with the id ``name`` (not under games/: not a built-in)."""
    dest = tmp_path / name
    shutil.copytree(RIDDLE, dest, ignore=shutil.ignore_patterns("__pycache__", ".env"))
    if name != "riddle":
        edit(dest / "SKILL.md", "id: riddle\n", f"id: {name}\n")
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


async def test_builtin_riddle_passes_offline() -> None:
    result = await run_check(str(ROOT / "games" / "riddle"))
    assert result.passed, result.problems()
    assert result.problems() == []
    assert result.offline
    rules = {f.rule for f in result.findings}
    # every rule a folder check can report ran and passed, but the one nothing exercises:
    # the riddle's config.py reads no setting of its own
    assert rules == set(RULES)
    assert {f.rule for f in result.findings if f.status != "pass"} == {"SETTINGS-UNDECLARED"}
    assert result.statuses("SETTINGS-UNDECLARED") == ["skip"]
    entry = catalog_entry(result)
    assert entry is not None
    assert entry["id"] == "riddle"
    assert entry["author"] == "agentcade"


def test_a_folder_s_catalog_entry_has_a_placeholder_url_and_says_to_change_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_cmd.run(_args(str(game_copy(tmp_path)), tmp_path)) == 0
    out = capsys.readouterr().out
    assert '"url": "https://your-game.example/"' in out
    assert "url 换成用户填写的地址" in out


async def test_game_copy_passes(tmp_path: Path) -> None:
    result = await run_check(str(game_copy(tmp_path)))
    assert result.problems() == []
    assert "SKILL-ID-FOLDER" not in {f.rule for f in result.findings}  # not a built-in


async def test_game_load_fails_on_syntax_error(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    (game / "agent.py").write_text("def broken(:\n", encoding="utf-8")
    result = await run_check(str(game))
    assert result.statuses("GAME-LOAD") == ["fail"]
    assert not result.passed
    assert set(result.statuses("CARD-READABLE")) == {"skip"}


async def test_skill_problems_keep_their_rule_ids(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    skill = game / "SKILL.md"
    edit(skill, "summary: 我出一个谜语，你来猜谜底", "summary: " + "很长" * 20)
    edit(skill, "author: agentcade\n", "")
    result = await run_check(str(game))
    assert result.statuses("SKILL-SUMMARY-LENGTH") == ["fail"]
    assert result.statuses("SKILL-AUTHOR-MISSING") == ["warn"]
    assert result.statuses("GAME-LOAD") == ["skip"]
    assert not result.passed


async def test_tools_definition_fails(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    edit(game / "agent.py", '    @tool("用户要提示时调用，返回一条提示。")',
         '    @tool("坏工具。")\n    def bad(self, n):\n        return {}\n\n'
         '    @tool("用户要提示时调用，返回一条提示。")')
    result = await run_check(str(game))
    assert result.statuses("TOOLS-DEFINITION") == ["fail"]
    assert result.statuses("GAME-LOAD") == ["pass"]


async def test_skill_tool_missing_and_unmentioned(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    edit(game / "SKILL.md", "调用 get_hint，", "调用 get_hints，")
    result = await run_check(str(game))
    assert result.statuses("SKILL-TOOL-MISSING") == ["fail"]
    assert result.statuses("TOOLS-UNMENTIONED") == ["warn"]
    assert "get_hints" in next(f.message for f in result.findings if f.rule == "SKILL-TOOL-MISSING")
    assert "'get_hint'" in next(f.message for f in result.findings if f.rule == "TOOLS-UNMENTIONED")


async def test_settings_read_by_config_but_not_listed_warn(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    edit(game / "config.py", '    """Everything the riddle game reads (settings.yaml lists the keys)."""',
         '    """Everything the riddle game reads."""\n\n    rounds: int = 5')
    result = await run_check(str(game))
    assert result.statuses("SETTINGS-UNDECLARED") == ["warn"]
    assert "ROUNDS" in next(f.message for f in result.findings if f.rule == "SETTINGS-UNDECLARED")
    assert result.passed  # a warning only
    (game / "settings.yaml").write_text(
        (game / "settings.yaml").read_text(encoding="utf-8") + "  - key: ROUNDS\n    default: '5'\n",
        encoding="utf-8",
    )
    assert (await run_check(str(game))).statuses("SETTINGS-UNDECLARED") == ["pass"]


async def test_local_game_robot_calls_it_may_not_make_fail_naming_the_tool_and_call() -> None:
    # bad_robot's tool cheer calls lights.set_color without declaring light (skipped inside
    # the game) and motion.move_to(pan_deg=999) (refused: the tool fails): neither reaches
    # a reply, and check still sees both.
    result = await run_check(str(ROOT / "tests" / "data" / "games" / "bad_robot"))
    assert result.problems() == ["DIRECTIVE-INVALID", "DIRECTIVE-UNDECLARED"]
    assert not result.passed
    [undeclared] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert "'cheer'" in undeclared.message
    assert "lights.set_color('#00FF00')" in undeclared.message
    assert "light" in undeclared.fix
    [invalid] = [f for f in result.findings if f.rule == "DIRECTIVE-INVALID"]
    assert "'cheer'" in invalid.message
    assert "motion.move_to(pan_deg=999" in invalid.message


async def test_local_game_undeclared_call_in_a_hook_names_the_hook(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    edit(game / "agent.py", "    async def on_start(self, turn: Turn) -> dict[str, Any]:\n",
         "    async def on_start(self, turn: Turn) -> dict[str, Any]:\n"
         "        await self.robot.lights.off()\n")
    result = await run_check(str(game))
    assert result.problems() == ["DIRECTIVE-UNDECLARED"]
    [finding] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert "during start, the hook 'on_start' calls lights.off()" in finding.message


ON_MESSAGE = "    async def on_message(self, turn: Turn) -> dict[str, Any] | None:\n"


async def test_local_game_undeclared_call_in_on_message_names_the_hook(tmp_path: Path) -> None:
    """Issue 23: it was called "the tool 'on_message'"."""
    game = game_copy(tmp_path)
    edit(game / "agent.py", ON_MESSAGE, ON_MESSAGE + "        await self.robot.lights.off()\n")
    result = await run_check(str(game))
    assert result.problems() == ["DIRECTIVE-UNDECLARED"]
    [finding] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert "during message, the hook 'on_message' calls lights.off()" in finding.message


async def test_a_blocking_call_in_on_message_is_found(tmp_path: Path) -> None:
    """Issue 23: on_message runs before the model on every line; check did not read it."""
    game = game_copy(tmp_path)
    edit(game / "agent.py", ON_MESSAGE, ON_MESSAGE + "        import time\n        time.sleep(0)\n")
    result = await run_check(str(game))
    [finding] = [f for f in result.findings if f.rule == "TOOLS-BLOCKING"]
    assert finding.message.startswith("on_message calls time.sleep()")


async def test_an_id_of_a_built_in_game_fails_as_the_catalog_would(tmp_path: Path) -> None:
    result = await run_check(str(game_copy(tmp_path, "riddle")))  # the template, not renamed
    assert result.problems() == ["CATALOG-ID-BUILTIN"]
    assert not result.passed  # so no catalog entry is printed
    # the entry check would have printed is one catalog rejects, for the same rule
    entry = catalog_entry(result)
    assert entry is not None
    entry["url"] = "https://my-riddle.example/"
    problems = check_catalog(Catalog.model_validate({"games": [entry]}))
    assert [p.rule for p in problems] == ["CATALOG-ID-BUILTIN"]


async def test_the_built_in_game_itself_keeps_its_id() -> None:
    result = await run_check("riddle")
    assert result.statuses("CATALOG-ID-BUILTIN") == ["pass"]


async def test_an_id_of_another_catalog_game_fails(tmp_path: Path) -> None:
    game = game_copy(tmp_path, "riddle_remote")  # games/catalog.json lists it, by agentcade
    edit(game / "SKILL.md", "author: agentcade\n", "author: someone else\n")
    result = await run_check(str(game))
    assert result.problems() == ["CATALOG-ID-DUPLICATE"]
    assert "https://agentcade-riddle.hf.space/" in next(
        f.message for f in result.findings if f.rule == "CATALOG-ID-DUPLICATE")
    # its own author checking a new version of the catalog game is not a clash
    edit(game / "SKILL.md", "author: someone else\n", "author: agentcade\n")
    assert (await run_check(str(game))).problems() == []


async def test_a_remote_game_with_a_built_in_id_fails(nursery: trio.Nursery) -> None:
    skill = FakeSkill(id="guess_number", required_capabilities=("motion",))
    result = await check_url(nursery, card=lambda port: build_card(skill, f"http://127.0.0.1:{port}/"))
    assert result.problems() == ["CATALOG-ID-BUILTIN"]


async def test_a_missing_env_example_warns_and_env_example_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = game_copy(tmp_path)
    (game / ".env.example").unlink()
    result = await run_check(str(game))
    assert result.problems() == ["SETTINGS-ENV-EXAMPLE"]
    assert result.passed  # a warning only
    finding = next(f for f in result.findings if f.rule == "SETTINGS-ENV-EXAMPLE")
    assert f"agentcade env-example {game}" in finding.fix

    from agentcade.cli import main

    assert main(["env-example", str(game)]) == 0
    assert "wrote" in capsys.readouterr().out
    text = (game / ".env.example").read_text(encoding="utf-8")
    assert "# 大模型服务的密钥\nLLM_API_KEY=\n" in text  # secrets stay empty
    assert "LLM_MODEL=gpt-4o-mini\n" in text
    assert (await run_check(str(game))).problems() == []


async def test_a_stale_env_example_warns_naming_the_missing_key(tmp_path: Path) -> None:
    game = game_copy(tmp_path)
    with (game / "settings.yaml").open("a", encoding="utf-8") as f:
        f.write("  - key: ROUNDS\n    description: 一局几题\n    default: '5'\n")
    result = await run_check(str(game))
    assert result.problems() == ["SETTINGS-ENV-EXAMPLE"]
    assert "missing ROUNDS" in next(
        f.message for f in result.findings if f.rule == "SETTINGS-ENV-EXAMPLE")


def test_env_example_of_a_broken_settings_yaml_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentcade.cli import main

    game = game_copy(tmp_path)
    (game / "settings.yaml").write_text("settings: [1]\n", encoding="utf-8")
    assert main(["env-example", str(game)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "settings.yaml" in err[0]
    assert main(["env-example", str(tmp_path / "nothing")]) == 1


# --- games written on a2a-sdk directly -----------------------------------------------------


async def test_compliant_sdk_peer_passes(peers: dict[str, str]) -> None:
    result = await run_check(peers["compliant"], timeout=10)
    assert result.problems() == []
    assert result.passed
    for rule in ("CARD-STREAMING", "SESSION-MESSAGE-REPLY", "SESSION-END-ENDED",
                 "DIRECTIVE-UNDECLARED", "SKILL-AUTHOR-MISSING", "SKILL-CAPABILITY-UNKNOWN"):
        assert result.statuses(rule) == ["pass"], rule


async def test_violating_sdk_peer_reports_exactly_its_violations(peers: dict[str, str]) -> None:
    result = await run_check(peers["violating"], timeout=10)
    assert result.problems() == [
        "CARD-STREAMING",
        "DIRECTIVE-UNDECLARED",
        "SESSION-END-ENDED",
        "SESSION-MESSAGE-REPLY",
    ]
    assert all(f.level == "fail" for f in result.findings if f.status != "pass")
    assert not result.passed


async def test_reply_in_another_protocol_version_than_negotiated_fails(peers: dict[str, str]) -> None:
    result = await run_check(peers["old_version"], timeout=10)
    assert result.problems() == ["REPLY-PROTOCOL", "SESSION-MESSAGE-REPLY"]
    [finding] = [f for f in result.findings if f.rule == "REPLY-PROTOCOL"]
    assert "'desktop-game/5'" in finding.message
    assert "'agentcade/1'" in finding.message
    assert result.statuses("REPLY-FORMAT") == ["pass"]  # the reply is well formed


# --- card rules ----------------------------------------------------------------------------


async def test_card_readable_fails_when_nothing_listens() -> None:
    from tests.a2a_peers import free_port

    result = await run_check(f"http://127.0.0.1:{free_port()}/", timeout=2)
    assert result.statuses("CARD-READABLE") == ["fail"]
    assert set(result.statuses("SESSION-START-REPLY")) == {"skip"}


async def test_url_https_warns_for_public_http() -> None:
    result = CheckResult("http://192.0.2.1/")
    await check_mod.check_session(result, "http://192.0.2.1/", client=A2AClient(connect_timeout=0.2))
    assert result.statuses("URL-HTTPS") == ["warn"]
    assert result.statuses("CARD-READABLE") == ["fail"]


async def test_card_protocol_fails_without_common_version(nursery: trio.Nursery) -> None:
    result = await check_url(nursery, protocols=["agentcade/9"])
    assert result.statuses("CARD-PROTOCOL") == ["fail"]
    assert set(result.statuses("SESSION-START-REPLY")) == {"skip"}


async def test_protocol_sunset_warns_with_date(nursery: trio.Nursery) -> None:
    result = await check_url(nursery, protocols=["desktop-game/5"])
    assert result.statuses("CARD-PROTOCOL") == ["pass"]
    assert result.statuses("PROTOCOL-SUNSET") == ["warn"]
    assert "2027-03-31" in next(f.message for f in result.findings if f.rule == "PROTOCOL-SUNSET")


async def test_card_url_mismatch_warns(nursery: trio.Nursery) -> None:
    result = await check_url(nursery, card=lambda port: build_card(GOOD_SKILL, "https://elsewhere.example/"))
    assert result.statuses("CARD-URL-MISMATCH") == ["warn"]
    assert result.passed  # requests still go to the entered address


async def test_card_declaration_warnings_for_urls(nursery: trio.Nursery) -> None:
    skill = FakeSkill(required_capabilities=("speaker",), author=None)
    result = await check_url(nursery, card=lambda port: build_card(skill, f"http://127.0.0.1:{port}/"))
    assert result.statuses("SKILL-AUTHOR-MISSING") == ["warn"]
    assert result.statuses("SKILL-CAPABILITY-UNKNOWN") == ["warn"]
    assert result.passed


async def test_scripted_game_passes_every_session_rule_it_exercises(nursery: trio.Nursery) -> None:
    result = await check_url(nursery)
    assert result.problems() == []
    # it sends no directive and only final replies: those rules are not exercised, never ✓
    unexercised = {"DIRECTIVE-INVALID", "DIRECTIVE-UNDECLARED", "REPLY-ENDED-EARLY"}
    for rule in _SESSION_RULES:
        assert result.statuses(rule) == (["skip"] if rule in unexercised else ["pass"]), rule
    [finding] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert finding.message.startswith("not exercised: no robot directive was sent")


# --- never a ✓ for what nothing exercised (issue 38) -----------------------------------------

TINY_AGENT = """from pathlib import Path

from agentcade.core.skill import Skill
from agentcade.game.skill_agent import SkillAgent
from agentcade.judge import help_request, round_request

from .config import Settings


class GameAgent(SkillAgent[Settings]):
    skill = Skill.load(Path(__file__).with_name("SKILL.md"))
    config = Settings

    async def on_start(self, turn) -> dict:
        turn.reply("我们开始吧。")
        return {}

    async def on_message(self, turn) -> dict:
        if WHEN:
            await self.robot.motion.play_action("nod")
        turn.reply("好的。")
        return {}
"""


def tiny_game(tmp_path: Path, when: str, *, motion: bool = False) -> Path:
    """A game whose only directive (a nod) is sent on the lines ``when`` holds for, with
    ``motion`` declared or not."""
    game = tmp_path / "tiny"
    shutil.copytree(ROOT / "tests" / "data" / "games" / "bad_robot", game,
                    ignore=shutil.ignore_patterns("__pycache__"))
    edit(game / "SKILL.md", "id: bad_robot", "id: tiny")
    edit(game / "SKILL.md", "required_capabilities: [motion]", f"required_capabilities: [{'motion' if motion else ''}]")
    edit(game / "SKILL.md", "调用 cheer，", "")
    (game / "agent.py").write_text(TINY_AGENT.replace("WHEN", when), encoding="utf-8")
    return game


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("scenarios:\n  - name: x\n    steps:\n      - start: 开始\nrobot:\n  - name: y\n    steps:\n"
         "      - say: 玩\n      - shout: 你好\n",
         "scenarios.yaml:9: robot scenario 'y', step 2: unknown step kind or key ['shout']"),
        ("scenarios:\n  - name: x\n    steps:\n      - start: 开始\n      - say: [\n",
         "scenarios.yaml:6: cannot be read as YAML"),
    ],
    ids=["robot-unknown-kind", "bad-yaml"],
)
async def test_a_broken_robot_list_or_bad_yaml_is_one_finding_naming_its_line(
    tmp_path: Path, content: str, message: str
) -> None:
    """The same line ``agentcade test`` and ``agentcade e2e`` print (``test_scenarios``)."""
    game = tiny_game(tmp_path, '"芝麻开门" in turn.text')
    (game / "scenarios.yaml").write_text(content, encoding="utf-8")
    result = await run_check(str(game))
    [finding] = [f for f in result.findings if f.rule == "SCENARIOS-FILE"]
    assert finding.status == "fail"
    assert message in finding.message
    assert sum(message in line for line in check_mod_format(result)) == 1


async def test_a_broken_scenarios_file_is_one_finding_naming_its_line(tmp_path: Path) -> None:
    game = tiny_game(tmp_path, '"芝麻开门" in turn.text')
    (game / "scenarios.yaml").write_text(
        "scenarios:\n  - name: 魔法\n    steps:\n      - start: 开始\n      - sing: 芝麻开门\n",
        encoding="utf-8",
    )
    result = await run_check(str(game))
    [finding] = [f for f in result.findings if f.rule == "SCENARIOS-FILE"]
    assert finding.status == "fail"
    assert finding.message.endswith("scenarios.yaml:5: scenario '魔法', step 2: unknown step kind or key "
                                    "['sing']; a step says one of start, say, end, and may have "
                                    "['answer', 'device', 'judged', 'name', 'never', 'session', 'spoken', 'wrong']")


async def test_a_directive_no_line_reaches_is_not_exercised_never_passed(tmp_path: Path) -> None:
    """The author's case: the only directive sits on a path no line of check reaches, and
    motion is not declared. Check cannot see it, so it says so instead of ✓."""
    result = await run_check(str(tiny_game(tmp_path, '"芝麻开门" in turn.text')))
    assert result.statuses("DIRECTIVE-UNDECLARED") == ["skip"]
    assert result.statuses("DIRECTIVE-INVALID") == ["skip"]
    [finding] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert finding.message.startswith("not exercised: no robot directive was sent or tried")
    assert not any(line.startswith("✓ DIRECTIVE") for line in check_mod_format(result))


async def test_a_directive_on_a_scenario_line_is_exercised_and_fails(tmp_path: Path) -> None:
    game = tiny_game(tmp_path, '"芝麻开门" in turn.text')
    (game / "scenarios.yaml").write_text(
        "scenarios:\n  - name: 魔法\n    steps:\n      - start: 开始\n      - say: 芝麻开门\n",
        encoding="utf-8",
    )
    result = await run_check(str(game))
    [finding] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert finding.status == "fail"
    assert "motion.play_action('nod')" in finding.message


@pytest.mark.parametrize(
    "when",
    ['help_request(turn.text) == "hint"', 'help_request(turn.text) == "give_up"',
     'round_request(turn.text) == "next"', 'round_request(turn.text) == "again"',
     'round_request(turn.text) == "repeat"'],
)
async def test_a_directive_on_a_help_or_round_path_is_exercised_and_fails(tmp_path: Path, when: str) -> None:
    result = await run_check(str(tiny_game(tmp_path, when)))
    assert result.statuses("DIRECTIVE-UNDECLARED") == ["fail"]


async def test_a_declared_directive_on_the_hint_path_passes_with_its_count(tmp_path: Path) -> None:
    result = await run_check(str(tiny_game(tmp_path, 'help_request(turn.text) == "hint"', motion=True)))
    [finding] = [f for f in result.findings if f.rule == "DIRECTIVE-UNDECLARED"]
    assert finding.status == "pass"
    assert "1 robot directives in" in finding.message


def test_the_text_report_counts_what_was_not_exercised() -> None:
    result = CheckResult("x")
    result.ok("CARD-STREAMING")
    result.skip("DIRECTIVE-UNDECLARED", "not exercised: no robot directive was sent")
    lines = check_mod_format(result)
    assert "- DIRECTIVE-UNDECLARED: not exercised: no robot directive was sent" in lines
    assert lines[-1].endswith("1 passed, 1 not exercised")


# --- session rules -------------------------------------------------------------------------


async def _fail(context_id: str, game_input: GameInput, emit: Any) -> None:
    raise RuntimeError("boom")


async def test_session_start_and_end_reply_fail(nursery: trio.Nursery) -> None:
    result = await check_url(nursery, Scripted(start=_fail, end=_fail))
    assert result.statuses("SESSION-START-REPLY") == ["fail"]
    assert result.statuses("SESSION-END-REPLY") == ["fail"]
    assert result.statuses("SESSION-END-ENDED") == ["skip"]


async def test_reply_format_fails(nursery: trio.Nursery) -> None:
    async def bad(context_id: str, game_input: GameInput, emit: Any) -> None:
        await emit(GameReply.model_construct(protocol="agentcade/1", text="嗯", directives=[],
                                             session="paused"),  # type: ignore[arg-type]  # the bad reply
                   final=True)

    result = await check_url(nursery, Scripted(message=bad))
    assert "fail" in result.statuses("REPLY-FORMAT")
    assert result.statuses("SESSION-MESSAGE-REPLY") == ["fail"]


class TypoReply(GameReply):
    def to_wire(self) -> dict[str, Any]:
        return {**super().to_wire(), "sesion": "ended"}


async def test_reply_unknown_field_warns(nursery: trio.Nursery) -> None:
    async def typo(context_id: str, game_input: GameInput, emit: Any) -> None:
        await emit(TypoReply(text="不对哦"), final=True)

    result = await check_url(nursery, Scripted(message=typo))
    assert result.statuses("REPLY-UNKNOWN-FIELD") == ["warn"]
    assert "sesion" in next(f.message for f in result.findings if f.rule == "REPLY-UNKNOWN-FIELD")
    assert result.passed


async def test_reply_ended_early_fails(nursery: trio.Nursery) -> None:
    async def early(context_id: str, game_input: GameInput, emit: Any) -> None:
        await emit(GameReply(text="稍等", session="ended"), final=False)
        await emit(GameReply(text="不对哦"), final=True)

    result = await check_url(nursery, Scripted(message=early))
    assert result.statuses("REPLY-ENDED-EARLY") == ["fail"]


async def test_reply_first_slow_warns(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    monkeypatch.setattr(check_mod, "FIRST_REPLY_SLOW", 0.05)

    async def slow(context_id: str, game_input: GameInput, emit: Any) -> None:
        await trio.sleep(0.2)
        await emit(GameReply(text="不对哦"), final=True)

    result = await check_url(nursery, Scripted(message=slow))
    assert result.statuses("REPLY-FIRST-SLOW") == ["warn"]
    assert result.passed


async def test_reply_first_slow_counts_only_a_reply_that_speaks(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    """Issue 23: a progress bar at once, then 9 s of silence, passed: the family heard nothing."""
    monkeypatch.setattr(check_mod, "FIRST_REPLY_SLOW", 0.05)

    async def progress_then_slow(context_id: str, game_input: GameInput, emit: Any) -> None:
        bar = {"call": "expression_runtime.update", "kwargs": {"progress_value": 10}}
        await emit(GameReply(directives=[bar]), final=False)  # type: ignore[list-item]
        await emit(GameReply(text="```\n```"), final=False)  # markup is not speech either
        await trio.sleep(0.2)
        await emit(GameReply(text="不对哦"), final=True)

    result = await check_url(nursery, Scripted(message=progress_then_slow))
    assert result.statuses("REPLY-FIRST-SLOW") == ["warn"]
    assert "spoken" in next(f.message for f in result.findings if f.rule == "REPLY-FIRST-SLOW")


async def test_session_missing_ended_fails(nursery: trio.Nursery) -> None:
    from tests.a2a_peers import EchoHandler  # answers every message "active"

    result = await check_url(nursery, EchoHandler())
    assert result.statuses("SESSION-MISSING-ENDED") == ["fail"]
    assert result.statuses("SESSION-END-ENDED") == ["pass"]


async def test_session_timeout_fails(nursery: trio.Nursery) -> None:
    async def forever(context_id: str, game_input: GameInput, emit: Any) -> None:
        await trio.sleep_forever()

    result = await check_url(nursery, Scripted(message=forever), timeout=0.5)
    assert result.statuses("SESSION-TIMEOUT") == ["fail"]
    assert result.statuses("SESSION-MESSAGE-REPLY") == ["fail"]


async def test_directive_invalid_fails(nursery: trio.Nursery) -> None:
    async def wild(context_id: str, game_input: GameInput, emit: Any) -> None:
        turn = Directive(call="motion.move_to", kwargs={"pan_deg": 999, "tilt_deg": 115})
        spy = Directive(call="camera.capture")
        await emit(GameReply(directives=[turn, spy]), final=False)
        await emit(GameReply(text="不对哦"), final=True)

    result = await check_url(nursery, Scripted(message=wild))
    assert result.statuses("DIRECTIVE-INVALID") == ["fail", "fail"]
    assert result.statuses("DIRECTIVE-UNDECLARED") == ["pass"]


# --- command, reports ----------------------------------------------------------------------


def _args(game: str, tmp_path: Path, **kw: Any) -> argparse.Namespace:
    return argparse.Namespace(game=game, say="我猜是水", timeout=10.0,
                              report=str(tmp_path / "report.json"), junit=str(tmp_path / "junit.xml"),
                              **kw)


def test_command_exit_codes_and_reports(peers: dict[str, str], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert check_cmd.run(_args(peers["compliant"], tmp_path)) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out
    assert '"reviewed_version": "0.1.0"' in out  # the catalog entry
    assert f'"url": "{peers["compliant"]}"' in out  # with the address checked (issue 38)
    assert "your-game.example" not in out

    assert check_cmd.run(_args(peers["violating"], tmp_path)) == 1
    out = capsys.readouterr().out
    assert "✗ CARD-STREAMING" in out
    assert "fix:" in out
    assert "FAILED: 4 failed" in out
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert set(report) == {"target", "passed", "findings"}
    assert report["passed"] is False
    assert report["target"] == peers["violating"]
    for finding in report["findings"]:
        assert set(finding) == {"rule", "level", "status", "message", "fix"}
    failed = {f["rule"] for f in report["findings"] if f["status"] == "fail"}
    assert failed == {"CARD-STREAMING", "DIRECTIVE-UNDECLARED", "SESSION-END-ENDED",
                      "SESSION-MESSAGE-REPLY"}

    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == len({f["rule"] for f in report["findings"]}) == int(suite.get("tests", "0"))
    failures = [c for c in cases if c.find("failure") is not None]
    assert {c.get("name") for c in failures} == failed
    assert suite.get("failures") == root.get("failures") == "4"


def test_junit_warnings_and_skips() -> None:
    result = CheckResult("x")
    result.problem("URL-HTTPS", "http", "use https")
    result.skip("CARD-READABLE", "not checked")
    result.ok("CARD-STREAMING")
    root = ET.fromstring(to_junit(result).split("\n", 1)[1])
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["URL-HTTPS"].find("failure") is None
    assert "use https" in (cases["URL-HTTPS"].findtext("system-out") or "")
    assert cases["CARD-READABLE"].find("skipped") is not None
    assert root.get("skipped") == "1"
    assert root.get("failures") == "0"
    assert result.passed


def test_cli_main_runs_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentcade.cli import main

    try:
        code = main(["check", str(ROOT / "games" / "riddle")])
    except ImportError as exc:  # another subcommand module is mid-edit
        pytest.skip(f"agentcade.cli cannot build its parser: {exc}")
    assert code == 0
    assert "PASSED" in capsys.readouterr().out
