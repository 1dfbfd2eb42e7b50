"""``games/catalog.json``: schema, the offline rules, and ``--online`` against a real card."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import trio

from agentcade.a2a.card import build_card
from agentcade.a2a.server import serve_a2a
from agentcade.check.catalog import Catalog, CatalogEntry, check_catalog, check_online, load_catalog
from agentcade.commands import catalog as catalog_cmd
from tests.a2a_peers import EchoHandler, FakeSkill

ROOT = Path(__file__).resolve().parents[1]


def entry(**changes: Any) -> dict[str, Any]:
    base = {
        "id": "star_quiz",
        "name": "星星问答",
        "summary": "我问你答的星星知识",
        "url": "https://star-quiz.example/",
        "version": "1.0.0",
        "author": "someone",
        "required_capabilities": ["motion"],
        "homepage": "https://example.org/star",
        "reviewed_version": "1.0.0",
    }
    return {**base, **changes}


def rules(*entries: dict[str, Any], builtins: tuple[str, ...] = ("riddle",)) -> list[str]:
    catalog = Catalog.model_validate({"version": 1, "games": list(entries)})
    return [p.rule for p in check_catalog(catalog, builtins=builtins)]


def test_shipped_catalog_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(file=str(ROOT / "games" / "catalog.json"), online=False)
    assert catalog_cmd.run(args) == 0
    assert "PASSED" in capsys.readouterr().out
    catalog, problems = load_catalog(ROOT / "games" / "catalog.json")
    assert problems == []
    assert catalog is not None
    assert catalog.games[0].reviewed_version == "1.0.0"


def test_good_entry_has_no_problems() -> None:
    assert rules(entry()) == []


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({"id": "Star-Quiz"}, "SKILL-ID-FORMAT"),
        ({"summary": "很长" * 20}, "SKILL-SUMMARY-LENGTH"),
        ({"summary": "我问你答。"}, "SKILL-SUMMARY-PUNCTUATION"),
        ({"version": "1.0"}, "SKILL-VERSION-SEMVER"),
        ({"homepage": "not a url"}, "SKILL-HOMEPAGE"),
        ({"url": "http://star-quiz.example/"}, "CATALOG-URL-HTTPS"),
        ({"reviewed_version": "v1"}, "CATALOG-REVIEWED-VERSION"),
        ({"id": "riddle"}, "CATALOG-ID-BUILTIN"),
    ],
)
def test_entry_errors(changes: dict[str, Any], rule: str) -> None:
    assert rule in rules(entry(**changes))


def test_warnings_do_not_fail(tmp_path: Path) -> None:
    catalog = Catalog.model_validate({"games": [entry(required_capabilities=["teleport"],
                                                      version="1.1.0")]})
    problems = check_catalog(catalog, builtins=())
    assert {(p.rule, p.level) for p in problems} == {
        ("SKILL-CAPABILITY-UNKNOWN", "warn"),
        ("CATALOG-UNREVIEWED", "warn"),
    }
    path = tmp_path / "c.json"
    path.write_text(catalog.model_dump_json(), encoding="utf-8")
    assert catalog_cmd.run(argparse.Namespace(file=str(path), online=False)) == 0


def test_duplicate_ids() -> None:
    assert rules(entry(), entry(name="别的")) == ["CATALOG-ID-DUPLICATE"]


def test_builtin_ids_come_from_the_games_folder() -> None:
    from agentcade.check.catalog import builtin_ids

    assert {"riddle", "guess_number"} <= builtin_ids()
    catalog = Catalog.model_validate({"games": [entry(id="guess_number")]})
    assert [p.rule for p in check_catalog(catalog)] == ["CATALOG-ID-BUILTIN"]


@pytest.mark.parametrize(
    "data",
    ["{not json", json.dumps({"version": 2, "games": []}),
     json.dumps({"games": [{**entry(), "extra": 1}]}),
     json.dumps({"games": [{k: v for k, v in entry().items() if k != "author"}]})],
)
def test_format_errors_exit_1(tmp_path: Path, data: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(data, encoding="utf-8")
    _catalog, problems = load_catalog(path)
    assert {p.rule for p in problems} == {"CATALOG-FORMAT"}
    assert catalog_cmd.run(argparse.Namespace(file=str(path), online=False)) == 1
    assert "CATALOG-FORMAT" in capsys.readouterr().out


async def test_online_reports_differences_and_unreachable(nursery: trio.Nursery) -> None:
    skill = FakeSkill(id="star_quiz", name="星星问答", version="1.2.0", summary="我问你答的星星知识",
                      author="someone", required_capabilities=("motion", "light"))
    listeners = await nursery.start(
        serve_a2a, EchoHandler(), lambda port: build_card(skill, f"http://127.0.0.1:{port}/"), 0
    )
    url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"
    same = CatalogEntry(**entry(url=url, version="1.2.0", required_capabilities=["light", "motion"]))
    stale = CatalogEntry(**entry(url=url, name="旧名字"))
    with __import__("socket").socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead_port = sock.getsockname()[1]
    dead = CatalogEntry(**entry(url=f"http://127.0.0.1:{dead_port}/"))
    problems = await check_online(Catalog(games=[same, stale, dead]), timeout=5)
    assert [(p.where.split(" ")[0], p.rule) for p in problems] == [
        ("games[1]", "CATALOG-ONLINE-NAME"),
        ("games[1]", "CATALOG-ONLINE-VERSION"),
        ("games[1]", "CATALOG-ONLINE-CAPABILITIES"),
        ("games[2]", "CATALOG-ONLINE-UNREACHABLE"),
    ]


async def test_online_compares_id_summary_and_author_with_the_card(nursery: trio.Nursery) -> None:
    skill = FakeSkill(id="star_quiz_v2", name="星星问答", version="1.0.0", summary="新的一句介绍",
                      author="someone else", required_capabilities=("motion",))
    listeners = await nursery.start(
        serve_a2a, EchoHandler(), lambda port: build_card(skill, f"http://127.0.0.1:{port}/"), 0
    )
    url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"
    problems = await check_online(Catalog(games=[CatalogEntry(**entry(url=url))]), timeout=5)
    assert [p.rule for p in problems] == [
        "CATALOG-ONLINE-ID",
        "CATALOG-ONLINE-SUMMARY",
        "CATALOG-ONLINE-AUTHOR",
    ]
    assert "'star_quiz' here but 'star_quiz_v2' in the card" in problems[0].message
