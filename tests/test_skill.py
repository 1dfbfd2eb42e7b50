"""SKILL.md loading and validation: every rule ID has a failing and a passing case."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentcade.core.allowlist import KNOWN_CAPABILITIES
from agentcade.core.skill import RULES, Skill, SkillError, SkillProblem, check_skill

RIDDLE = Path(__file__).parent / "data" / "skills" / "riddle" / "SKILL.md"

# Raw YAML text per field, so a case can write exactly what an author would (quoted or not).
BASE_FIELDS: dict[str, str] = {
    "id": "riddle",
    "name": "猜谜语",
    "aliases": "[谜语, 猜谜]",
    "description": "我出一个谜语，你来猜谜底。",
    "summary": "我出一个谜语，你来猜谜底",
    "required_capabilities": "[motion, expression.runtime.v3]",
    "version": '"1.0.2"',
    "author": "left0ver",
    "homepage": "https://github.com/left0ver/agentcade/tree/main/templates/riddle",
}
BODY = "# 猜谜语\n- 用户说出一个答案：调用 check_answer，按 correct 字段说对错。\n"


def make(body: str = BODY, **changes: str | None) -> str:
    """A SKILL.md from BASE_FIELDS with some fields changed (None removes a field)."""
    fields = {**BASE_FIELDS, **changes}
    lines = [f"{key}: {value}" for key, value in fields.items() if value is not None]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


def rules_of(problems: list[SkillProblem]) -> list[str]:
    return [p.rule for p in problems]


# --- loading a valid file -----------------------------------------------------------------


def test_riddle_example_loads_every_field() -> None:
    skill = Skill.load(RIDDLE, expect_id="riddle")
    assert skill.id == "riddle"
    assert skill.name == "猜谜语"
    assert skill.aliases == ("谜语", "猜谜")
    assert skill.description.startswith("我出一个谜语，你来猜谜底。猜对了我会点头")
    assert skill.summary == "我出一个谜语，你来猜谜底"
    assert skill.required_capabilities == ("motion", "expression.runtime.v3")
    assert skill.version == "1.0.2"
    assert skill.author == "left0ver"
    assert skill.homepage == "https://github.com/left0ver/agentcade/tree/main/templates/riddle"
    assert skill.body.startswith("# 猜谜语\n## 流程\n")
    assert skill.warnings == ()


def test_load_uses_path_as_source() -> None:
    assert Skill.load(RIDDLE).source == str(RIDDLE)


def test_load_does_not_infer_expected_id_from_folder(tmp_path: Path) -> None:
    other = tmp_path / "other_folder" / "SKILL.md"
    other.parent.mkdir()
    shutil.copy(RIDDLE, other)
    assert Skill.load(other).id == "riddle"
    with pytest.raises(SkillError) as info:
        Skill.load(other, expect_id="other_folder")
    assert rules_of(info.value.problems) == ["SKILL-ID-FOLDER"]


def test_defaults_when_optional_fields_absent() -> None:
    text = make(aliases=None, required_capabilities=None, version=None, author=None, homepage=None)
    skill = Skill.parse(text)
    assert skill.aliases == ()
    assert skill.required_capabilities == ()
    assert skill.version == "1.0.0"
    assert skill.author is None
    assert skill.homepage is None
    assert skill.source == "SKILL.md"


def test_empty_optional_fields_count_as_absent() -> None:
    skill = Skill.parse(make(aliases="", required_capabilities="", version="", homepage=""))
    assert (skill.aliases, skill.required_capabilities, skill.version, skill.homepage) == (
        (),
        (),
        "1.0.0",
        None,
    )


def test_body_kept_verbatim() -> None:
    body = "\n# 标题  \n\n  缩进的行\t\n```\ncode: 1\n---\n```\n\n\n"
    assert Skill.parse(make(body=body)).body == body


def test_body_line_endings_kept_and_crlf_frontmatter_accepted() -> None:
    text = make(body="第一行\r\n第二行\r\n").replace("\n", "\r\n").replace("\r\r\n", "\r\n")
    skill = Skill.parse(text)
    assert skill.id == "riddle"
    assert skill.body == "第一行\r\n第二行\r\n"


def test_byte_order_mark_is_ignored() -> None:
    assert Skill.parse("\ufeff" + make()).id == "riddle"


def test_text_fields_are_stripped() -> None:
    skill = Skill.parse(make(description=">\n  第一行\n  第二行", summary='"  猜谜底  "'))
    assert skill.description == "第一行 第二行"
    assert skill.summary == "猜谜底"


# --- tool references ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("调用 check_answer", ("check_answer",)),
        ("调用 `get_hint` 拿提示", ("get_hint",)),
        ("调用reveal_answer，再问", ("reveal_answer",)),
        ("调用check_answer判定", ("check_answer",)),
        ("调用\u3000new_round", ("new_round",)),
        ("先调用 a_1，再调用 `B2`。", ("a_1", "B2")),
        ("调用的时候不要说工具名", ()),
        ("调用\nnot_a_ref", ()),
        ("没有提到工具", ()),
    ],
)
def test_tool_references_forms(body: str, expected: tuple[str, ...]) -> None:
    assert Skill.parse(make(body=body)).tool_references == expected


def test_tool_references_deduplicated_in_first_mention_order() -> None:
    body = "调用 b_tool；调用 `a_tool`；再调用b_tool；调用 `a_tool`；调用 c_tool"
    assert Skill.parse(make(body=body)).tool_references == ("b_tool", "a_tool", "c_tool")


def test_riddle_example_tool_references() -> None:
    assert Skill.load(RIDDLE).tool_references == (
        "check_answer",
        "get_hint",
        "reveal_answer",
        "new_riddle",
    )


# --- every rule: failing cases ------------------------------------------------------------

LONG_SUMMARY = "我" * 31

# (rule, text, expect_id): each text breaks exactly the named rule (and no other fail rule).
FAILING: list[tuple[str, str, str | None]] = [
    ("SKILL-FRONTMATTER", "# 猜谜语\n调用 check_answer\n", None),
    ("SKILL-FRONTMATTER", "", None),
    ("SKILL-FRONTMATTER", "\n" + make(), None),
    ("SKILL-FRONTMATTER", make().replace("\n---\n", "\n\n", 1), None),
    ("SKILL-FRONTMATTER", "---\nid: riddle\nname: [unclosed\n---\n" + BODY, None),
    ("SKILL-FRONTMATTER", "---\nid: riddle\ndescription: 玩法: 猜\n---\n" + BODY, None),
    ("SKILL-FRONTMATTER", "---\n- id\n- name\n---\n" + BODY, None),
    ("SKILL-FRONTMATTER", "---\njust text\n---\n" + BODY, None),
    ("SKILL-DUPLICATE-FIELD", make().replace("---\nid", "---\nsummary: 另一句\nid"), None),
    ("SKILL-ID-FORMAT", make(id=None), None),
    ("SKILL-ID-FORMAT", make(id="My-Game"), None),
    ("SKILL-ID-FORMAT", make(id="2048"), None),
    ("SKILL-ID-FORMAT", make(id="_riddle"), None),
    ("SKILL-ID-FORMAT", make(id="猜谜"), None),
    ("SKILL-ID-FORMAT", make(id="a" * 65), None),
    ("SKILL-ID-FOLDER", make(), "riddles"),
    ("SKILL-NAME", make(name=None), None),
    ("SKILL-NAME", make(name="123"), None),
    ("SKILL-NAME", make(name='""'), None),
    ("SKILL-NAME", make(name="yes"), None),
    ("SKILL-NAME", make(name="[猜, 谜]"), None),
    ("SKILL-DESCRIPTION", make(description=None), None),
    ("SKILL-DESCRIPTION", make(description="'  '"), None),
    ("SKILL-DESCRIPTION", make(description="3.5"), None),
    ("SKILL-SUMMARY-MISSING", make(summary=None), None),
    ("SKILL-SUMMARY-MISSING", make(summary='""'), None),
    ("SKILL-SUMMARY-MISSING", make(summary="42"), None),
    ("SKILL-SUMMARY-LENGTH", make(summary=LONG_SUMMARY), None),
    ("SKILL-SUMMARY-PUNCTUATION", make(summary="我出一个谜语，你来猜谜底。"), None),
    ("SKILL-ALIASES", make(aliases="谜语"), None),
    ("SKILL-ALIASES", make(aliases="[谜语, '']"), None),
    ("SKILL-ALIASES", make(aliases="[2048]"), None),
    ("SKILL-ALIASES", make(aliases="{a: b}"), None),
    ("SKILL-VOCABULARY", make(vocabulary="月亮"), None),
    ("SKILL-VOCABULARY", make(vocabulary="[月亮, 7]"), None),
    ("SKILL-CAPABILITIES", make(required_capabilities="motion"), None),
    ("SKILL-CAPABILITIES", make(required_capabilities="[1]"), None),
    ("SKILL-CAPABILITIES", make(required_capabilities="[motion, '']"), None),
    ("SKILL-CAPABILITY-UNKNOWN", make(required_capabilities="[lights]"), None),
    ("SKILL-CAPABILITY-UNKNOWN", make(required_capabilities="[camera]"), None),
    ("SKILL-VERSION-SEMVER", make(version="1.0"), None),
    ("SKILL-VERSION-SEMVER", make(version="1"), None),
    ("SKILL-VERSION-SEMVER", make(version='"1.0"'), None),
    ("SKILL-VERSION-SEMVER", make(version="v1.0.0"), None),
    ("SKILL-VERSION-SEMVER", make(version="01.0.0"), None),
    ("SKILL-VERSION-SEMVER", make(version="1.0.0-"), None),
    ("SKILL-VERSION-SEMVER", make(version="2024-01-01"), None),
    ("SKILL-VERSION-SEMVER", make(version="true"), None),
    ("SKILL-AUTHOR", make(author="123"), None),
    ("SKILL-AUTHOR", make(author="[a, b]"), None),
    ("SKILL-AUTHOR-MISSING", make(author=None), None),
    ("SKILL-AUTHOR-MISSING", make(author='""'), None),
    ("SKILL-HOMEPAGE", make(homepage="ftp://example.com/game"), None),
    ("SKILL-HOMEPAGE", make(homepage="github.com/left0ver/agentcade"), None),
    ("SKILL-HOMEPAGE", make(homepage='"https://"'), None),
    ("SKILL-HOMEPAGE", make(homepage='"https://exa mple.com"'), None),
    ("SKILL-HOMEPAGE", make(homepage="8080"), None),
    ("SKILL-UNKNOWN-FIELD", make(summery="拼错了"), None),
    ("SKILL-UNKNOWN-FIELD", make(title="猜谜语"), None),
    ("SKILL-BODY-EMPTY", make(body=""), None),
    ("SKILL-BODY-EMPTY", make(body="\n \t\n\u3000\n"), None),
]


@pytest.mark.parametrize(("rule", "text", "expect_id"), FAILING)
def test_rule_reports_its_failing_case(rule: str, text: str, expect_id: str | None) -> None:
    _, problems = check_skill(text, expect_id=expect_id)
    found = [p for p in problems if p.rule == rule]
    assert found, problems
    assert all(p.level == RULES[rule] for p in found)
    other_fails = [p for p in problems if p.level == "fail" and p.rule != rule]
    assert other_fails == []


@pytest.mark.parametrize(("rule", "text", "expect_id"), FAILING)
def test_failing_case_loads_only_when_the_rule_is_a_warning(
    rule: str, text: str, expect_id: str | None
) -> None:
    skill, _ = check_skill(text, expect_id=expect_id)
    if RULES[rule] == "fail":
        assert skill is None
        with pytest.raises(SkillError):
            Skill.parse(text, expect_id=expect_id)
    else:
        assert skill is not None
        assert rule in [p.rule for p in skill.warnings]


@pytest.mark.parametrize(
    "summary", [f"我出一个谜语{mark}" for mark in "。！？，、；：…!?.,;:~～"] + ["猜谜底。 "]
)
def test_summary_final_punctuation_fails(summary: str) -> None:
    _, problems = check_skill(make(summary=f'"{summary}"'))
    assert rules_of(problems) == ["SKILL-SUMMARY-PUNCTUATION"]


def test_load_non_utf8_file_fails_with_encoding_rule(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(make().encode("gbk"))
    with pytest.raises(SkillError) as info:
        Skill.load(path)
    assert rules_of(info.value.problems) == ["SKILL-ENCODING"]
    assert str(info.value).startswith(f"{path}: file: ")


def test_every_rule_has_a_failing_and_a_passing_case() -> None:
    failing = {rule for rule, _, _ in FAILING} | {"SKILL-ENCODING"}
    passing = {rule for rule, _, _ in PASSING} | {"SKILL-ENCODING"}
    assert failing == set(RULES)
    assert passing == set(RULES)


# --- every rule: passing cases ------------------------------------------------------------

# (rule, text, expect_id): the rule is not reported and the skill loads.
PASSING: list[tuple[str, str, str | None]] = [
    ("SKILL-FRONTMATTER", make(), None),
    ("SKILL-FRONTMATTER", make().replace("\n---\n", "\n---  \n", 1), None),
    ("SKILL-DUPLICATE-FIELD", make(), None),
    ("SKILL-ID-FORMAT", make(id="a"), None),
    ("SKILL-ID-FORMAT", make(id="a" * 64), None),
    ("SKILL-ID-FORMAT", make(id="game_2048"), None),
    ("SKILL-ID-FOLDER", make(), "riddle"),
    ("SKILL-ID-FOLDER", make(), None),
    ("SKILL-NAME", make(name='"123"'), None),
    ("SKILL-DESCRIPTION", make(description="|\n  第一行\n  第二行"), None),
    ("SKILL-SUMMARY-MISSING", make(), None),
    ("SKILL-SUMMARY-LENGTH", make(summary="我" * 30), None),
    ("SKILL-SUMMARY-LENGTH", make(summary="🎲" * 30), None),
    ("SKILL-SUMMARY-PUNCTUATION", make(summary="胜率100%"), None),
    ("SKILL-SUMMARY-PUNCTUATION", make(summary="猜一猜「谜底」"), None),
    ("SKILL-SUMMARY-PUNCTUATION", make(summary="一起玩2048"), None),
    ("SKILL-ALIASES", make(aliases=None), None),
    ("SKILL-ALIASES", make(aliases="[]"), None),
    ("SKILL-ALIASES", make(aliases="['2048']"), None),
    ("SKILL-ALIASES", make(aliases="\n  - 谜语\n  - 猜谜"), None),
    ("SKILL-VOCABULARY", make(vocabulary="[月亮, 彩虹, 是月亮吗]"), None),
    ("SKILL-CAPABILITIES", make(required_capabilities=None), None),
    ("SKILL-CAPABILITIES", make(required_capabilities="[]"), None),
    (
        "SKILL-CAPABILITY-UNKNOWN",
        make(required_capabilities=f"[{', '.join(KNOWN_CAPABILITIES)}]"),
        None,
    ),
    ("SKILL-VERSION-SEMVER", make(version=None), None),
    ("SKILL-VERSION-SEMVER", make(version="1.2.3"), None),
    ("SKILL-VERSION-SEMVER", make(version='"0.0.0"'), None),
    ("SKILL-VERSION-SEMVER", make(version='"1.0.0-alpha.1+build.5"'), None),
    ("SKILL-VERSION-SEMVER", make(version='"10.20.30-rc.1"'), None),
    ("SKILL-AUTHOR", make(author='"123"'), None),
    ("SKILL-AUTHOR-MISSING", make(), None),
    ("SKILL-HOMEPAGE", make(homepage=None), None),
    ("SKILL-HOMEPAGE", make(homepage="http://example.com"), None),
    ("SKILL-HOMEPAGE", make(homepage="https://example.com:8443/game?x=1"), None),
    ("SKILL-UNKNOWN-FIELD", make(), None),
    ("SKILL-BODY-EMPTY", make(body="开局时调用 new_round。"), None),
    ("SKILL-BODY-EMPTY", make(body="x"), None),
]


@pytest.mark.parametrize(("rule", "text", "expect_id"), PASSING)
def test_rule_passes_its_passing_case(rule: str, text: str, expect_id: str | None) -> None:
    skill, problems = check_skill(text, expect_id=expect_id)
    assert rule not in rules_of(problems)
    assert skill is not None, problems


# --- messages and fixes -------------------------------------------------------------------


def test_error_text_names_file_field_message_and_fix() -> None:
    with pytest.raises(SkillError) as info:
        Skill.parse(make(summary=LONG_SUMMARY), source="games/riddle/SKILL.md")
    assert str(info.value) == (
        "games/riddle/SKILL.md: summary: summary is 31 characters long; the limit is 30"
        " — shorten summary to 30 characters or fewer (now 31)"
    )


def test_problem_format_matches_error_line() -> None:
    problem = SkillProblem("SKILL-NAME", "fail", "name", "name is missing", "add it")
    assert problem.format("x/SKILL.md") == "x/SKILL.md: name: name is missing — add it"


def test_skill_error_carries_all_problems_and_lists_only_fails() -> None:
    text = make(id="Bad-Id", name="123", summary=LONG_SUMMARY + "。", author=None, titel="x")
    with pytest.raises(SkillError) as info:
        Skill.parse(text, source="my/SKILL.md")
    error = info.value
    assert isinstance(error, ValueError)
    assert rules_of(error.problems) == [
        "SKILL-ID-FORMAT",
        "SKILL-NAME",
        "SKILL-SUMMARY-LENGTH",
        "SKILL-SUMMARY-PUNCTUATION",
        "SKILL-AUTHOR-MISSING",
        "SKILL-UNKNOWN-FIELD",
    ]
    lines = str(error).splitlines()
    assert len(lines) == 4
    assert all(line.startswith("my/SKILL.md: ") and " — " in line for line in lines)
    assert "author" not in str(error)


def test_check_skill_collects_problems_across_frontmatter_and_body() -> None:
    skill, problems = check_skill(make(id=None, homepage="nope", body=""))
    assert skill is None
    assert rules_of(problems) == ["SKILL-ID-FORMAT", "SKILL-HOMEPAGE", "SKILL-BODY-EMPTY"]


def test_yaml_error_reports_file_line() -> None:
    text = "---\nid: riddle\nname: 猜谜语\ndescription: 玩法: 猜\n---\n" + BODY
    _, problems = check_skill(text)
    assert problems[0].rule == "SKILL-FRONTMATTER"
    assert "line 4" in problems[0].message
    assert "quotes" in problems[0].fix


def test_duplicate_field_reports_its_line() -> None:
    text = make().replace("---\nid", "---\nsummary: 另一句\nid")
    (problem,) = check_skill(text)[1]
    assert problem.field == "summary"
    assert "line 7" in problem.message


def test_float_version_fix_says_to_quote_it() -> None:
    (problem,) = check_skill(make(version="1.10"))[1]
    assert "number" in problem.message
    assert problem.fix.endswith('version: "1.10.0"')


def test_single_string_aliases_fix_suggests_a_list() -> None:
    (problem,) = check_skill(make(aliases="谜语、猜谜"))[1]
    assert problem.fix == "write it as a list: aliases: [谜语, 猜谜]"


def test_non_string_value_fix_suggests_quotes() -> None:
    (problem,) = check_skill(make(name="123"))[1]
    assert "number" in problem.message
    assert problem.fix == 'put the value in quotes: name: "123"'


@pytest.mark.parametrize(
    ("raw", "suggested"), [("My-Game", "my_game"), ("2048", "game_2048"), ("猜谜", "my_game")]
)
def test_bad_id_fix_suggests_a_valid_id(raw: str, suggested: str) -> None:
    (problem,) = check_skill(make(id=raw))[1]
    assert f"id: {suggested}" in problem.fix


def test_id_folder_fix_names_the_folder() -> None:
    (problem,) = check_skill(make(), expect_id="riddles")[1]
    assert problem.fix == "set 'id: riddles' or rename the folder to riddle"


def test_unknown_field_suggests_the_closest_known_name() -> None:
    (problem,) = check_skill(make(summery="x"))[1]
    assert problem.field == "summery"
    assert "'summary'" in problem.fix


def test_unknown_capability_lists_the_known_ones_and_suggests_one() -> None:
    (problem,) = check_skill(make(required_capabilities="[lights]"))[1]
    assert all(capability in problem.message for capability in KNOWN_CAPABILITIES)
    assert "'light'" in problem.fix


def test_summary_length_fix_gives_the_current_length() -> None:
    (problem,) = check_skill(make(summary="a" * 34))[1]
    assert problem.fix == "shorten summary to 30 characters or fewer (now 34)"


def test_summary_punctuation_fix_shows_the_trimmed_summary() -> None:
    (problem,) = check_skill(make(summary="猜谜底！！"))[1]
    assert problem.fix == "remove the final punctuation: summary: 猜谜底"


# --- unicode, warnings, robustness --------------------------------------------------------


@pytest.mark.parametrize(
    ("summary", "ok"),
    [
        ("谜" * 30, True),
        ("谜" * 31, False),
        ("🎲" * 30, True),
        ("e\u0301" * 30, True),  # base + combining accent: one character each once composed
        ("é" * 31, False),
    ],
)
def test_summary_length_counts_characters(summary: str, ok: bool) -> None:
    _, problems = check_skill(make(summary=f'"{summary}"'))
    assert ("SKILL-SUMMARY-LENGTH" not in rules_of(problems)) is ok


def test_warnings_kept_on_the_instance() -> None:
    skill = Skill.parse(make(author=None, required_capabilities="[lights]", colour="red"))
    assert [p.rule for p in skill.warnings] == [
        "SKILL-CAPABILITY-UNKNOWN",
        "SKILL-AUTHOR-MISSING",
        "SKILL-UNKNOWN-FIELD",
    ]
    assert all(p.level == "warn" for p in skill.warnings)
    assert skill.required_capabilities == ("lights",)


def test_warnings_do_not_affect_equality() -> None:
    with_warning = Skill.parse(make(colour="red"))
    without = Skill.parse(make())
    assert with_warning.warnings
    assert not without.warnings
    assert with_warning == without
    assert hash(with_warning) == hash(without)


def test_direct_construction_takes_lists_and_stays_hashable() -> None:
    skill = Skill(id="x", name="X", description="d", summary="s", aliases=["a"])  # type: ignore[arg-type]
    assert skill.aliases == ("a",)
    assert skill.warnings == ()
    assert hash(skill)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "---",
        "---\n",
        "---\n---\n",
        "---\n---\n---\n",
        "---\n: :\n---\nx",
        "---\n[1, 2]: x\n---\nx",
        "---\n? [a]\n: b\n---\nx",
        "---\n*undefined\n---\nx",
        "---\n!!python/object:os.system x\n---\nx",
        "---\nid: !!binary aGVsbG8=\n---\nx",
        "\x00\x01\x02",
        "---\nname: &a [*a]\n---\nx",
    ],
)
def test_check_skill_never_raises_for_content(text: str) -> None:
    skill, problems = check_skill(text)
    assert skill is None
    assert problems
    assert all(p.rule in RULES and p.level == RULES[p.rule] for p in problems)


def test_empty_frontmatter_reports_each_required_field() -> None:
    _, problems = check_skill("---\n---\n" + BODY)
    assert rules_of(problems) == [
        "SKILL-ID-FORMAT",
        "SKILL-NAME",
        "SKILL-DESCRIPTION",
        "SKILL-SUMMARY-MISSING",
        "SKILL-AUTHOR-MISSING",
    ]
