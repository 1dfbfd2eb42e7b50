"""What ``check`` prints and writes: the text report, JUnit XML, the catalog entry.

(The JSON report is ``CheckResult.to_json()``.)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from agentcade.check.rules import CheckResult, Finding

__all__ = ["catalog_entry", "format_text", "to_junit"]

_MARK = {"pass": "✓", "fail": "✗", "warn": "!", "skip": "-"}
PLACEHOLDER_URL = "https://your-game.example/"
"""The catalog entry's url for a folder: the address users will enter is not known yet."""


def checked_an_address(result: CheckResult) -> bool:
    """Whether the check's target was an address (not a folder or a built-in id)."""
    return result.target.startswith(("https://", "http://"))


def format_text(result: CheckResult) -> list[str]:
    """The readable report: problems first (with fixes), then what was not exercised, then
    passes, then a summary line. ✓ only for a rule something exercised."""
    lines = [f"agentcade check {result.target}"]
    order = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
    for f in sorted(result.findings, key=lambda f: order[f.status]):
        lines.append(f"{_MARK[f.status]} {f.rule}: {f.message}")
        if f.status in ("fail", "warn") and f.fix:
            lines.append(f"    fix: {f.fix}")
    c = result.counts()
    verdict = "PASSED" if result.passed else "FAILED"
    lines.append(
        f"{verdict}: {c['fail']} failed, {c['warn']} warnings, {c['pass']} passed, "
        f"{c['skip']} not exercised"
    )
    return lines


def to_junit(result: CheckResult) -> str:
    """JUnit XML: one testcase per rule; failures as <failure>, warnings in <system-out>,
    rules that could not run as <skipped>."""
    by_rule: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_rule.setdefault(f.rule, []).append(f)
    c = {"failures": 0, "skipped": 0}
    suite = ET.Element("testsuite", name=f"agentcade check {result.target}")
    for rule, findings in by_rule.items():
        case = ET.SubElement(suite, "testcase", classname="agentcade.check", name=rule)
        fails = [f for f in findings if f.status == "fail"]
        warns = [f for f in findings if f.status == "warn"]
        skips = [f for f in findings if f.status == "skip"]
        if fails:
            c["failures"] += 1
            node = ET.SubElement(case, "failure", message=fails[0].message, type=rule)
            node.text = "\n".join(f"{f.message}\nfix: {f.fix}" for f in fails)
        elif skips and not warns:
            c["skipped"] += 1
            ET.SubElement(case, "skipped", message=skips[0].message)
        if warns:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(f"warning: {f.message}\nfix: {f.fix}" for f in warns)
    suite.set("tests", str(len(by_rule)))
    suite.set("failures", str(c["failures"]))
    suite.set("errors", "0")
    suite.set("skipped", str(c["skipped"]))
    root = ET.Element("testsuites", name="agentcade check", tests=str(len(by_rule)),
                      failures=str(c["failures"]), errors="0", skipped=str(c["skipped"]))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def catalog_entry(result: CheckResult) -> dict[str, Any] | None:
    """The game's catalog entry (``games/catalog.json`` schema), from the card or SKILL.md.

    Its url is the address checked when the target was one (``check URL``), and a
    placeholder for a folder (served on 127.0.0.1 only for the check)."""
    card = result.card
    if card is None:
        return None
    url = result.target if checked_an_address(result) else PLACEHOLDER_URL
    skill = result.skill
    return {
        "id": card.game_id,
        "name": card.name,
        "summary": card.summary,
        "url": url,
        "version": card.version,
        "author": card.author or (skill.author if skill else None),
        "required_capabilities": list(card.capabilities),
        "homepage": card.homepage or (skill.homepage if skill else None),
        "reviewed_version": card.version,
    }
