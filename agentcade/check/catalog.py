"""The game catalog (``games/catalog.json``): its schema and its checks.

The catalog lists reviewed remote games users can install from the settings page
("发现更多游戏"). Schema (documented for authors in ``docs/catalog.md``)::

    {"version": 1, "games": [{"id", "name", "summary", "url", "version", "author",
                              "required_capabilities": [...], "homepage", "reviewed_version"}]}

``check_catalog`` validates a file: the schema (pydantic), unique ids, no clash with a
built-in game, https URLs, and the declaration rules of ``agentcade.core.skill`` (the entry is
checked as the SKILL.md frontmatter it summarizes, so the rule IDs are the same:
``SKILL-ID-FORMAT``, ``SKILL-SUMMARY-LENGTH``, ``SKILL-VERSION-SEMVER``,
``SKILL-CAPABILITY-UNKNOWN`` ...). ``check_online`` fetches each game's card and reports
entries whose id, name, summary, author, version or capabilities differ from it, and
unreachable games.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import trio
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentcade.a2a.client import A2AClient, GameRemoteError
from agentcade.core.skill import SkillProblem, check_skill, is_semver

__all__ = [
    "Catalog",
    "CatalogEntry",
    "CatalogProblem",
    "builtin_ids",
    "check_catalog",
    "check_online",
    "id_problems",
    "load_catalog",
]

Level = Literal["fail", "warn"]


class CatalogEntry(BaseModel):
    """One reviewed remote game."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="SKILL.md id: lower-case letter first, a-z 0-9 _, at most 64")
    name: str = Field(description="SKILL.md name")
    summary: str = Field(description="SKILL.md summary: at most 30 characters, no final punctuation")
    url: str = Field(description="the address users enter (https)")
    version: str = Field(description="the version the game's card declares now (semver)")
    author: str = Field(description="SKILL.md author (provider.organization in the card)")
    required_capabilities: list[str] = Field(default_factory=list)
    homepage: str | None = Field(default=None, description="SKILL.md homepage")
    reviewed_version: str = Field(description="the version the reviewers played (semver)")


class Catalog(BaseModel):
    """The whole catalog file."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    games: list[CatalogEntry] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CatalogProblem:
    """One problem of the catalog; ``where`` is the entry (``games[2] (riddle)``) or file."""

    rule: str
    level: Level
    where: str
    message: str
    fix: str

    def format(self) -> str:
        mark = "✗" if self.level == "fail" else "!"
        return f"{mark} {self.rule}: {self.where}: {self.message}\n    fix: {self.fix}"


def builtin_ids() -> set[str]:
    """Ids of the built-in games (their folder names); a catalog game may not reuse one."""
    from agentcade.game.loader import builtin_games_dir

    root = builtin_games_dir()
    if not root.is_dir():
        return set()
    return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}


def _same_url(a: str, b: str) -> bool:
    return a.strip().rstrip("/").lower() == b.strip().rstrip("/").lower()


def id_problems(
    game_id: str,
    *,
    where: str,
    builtins: Iterable[str] | None = None,
    catalog: Catalog | None = None,
    url: str | None = None,
    author: str | None = None,
) -> list[CatalogProblem]:
    """The rule both ``catalog`` and ``check`` apply to a game's id: no built-in game has
    it (``CATALOG-ID-BUILTIN``) and, given ``catalog``, no other catalog game
    (``CATALOG-ID-DUPLICATE``).

    A catalog entry with the id is the same game, not a clash, when it is at ``url`` or
    has the same ``author`` (its author checking a new version before updating the entry).
    """
    problems = []
    if game_id in set(builtin_ids() if builtins is None else builtins):
        problems.append(CatalogProblem(
            "CATALOG-ID-BUILTIN", "fail", where, f"the id {game_id!r} is a built-in game's",
            "rename the game (SKILL.md id) so it does not replace a built-in game"))
    for i, entry in enumerate(catalog.games if catalog is not None else ()):
        if entry.id != game_id:
            continue
        if (url is not None and _same_url(url, entry.url)) or (author and author == entry.author):
            continue
        problems.append(CatalogProblem(
            "CATALOG-ID-DUPLICATE", "fail", where,
            f"the id {game_id!r} is also the catalog's games[{i}] (by {entry.author}, at {entry.url})",
            "each game has its own id; rename the game (SKILL.md id)"))
    return problems


def load_catalog(path: str | Path) -> tuple[Catalog | None, list[CatalogProblem]]:
    """Read and schema-check a catalog file; a broken file gives ``CATALOG-FORMAT``."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, [CatalogProblem("CATALOG-FORMAT", "fail", where, f"cannot read JSON: {exc}",
                                     "write the file as UTF-8 JSON (see docs/catalog.md)")]
    try:
        return Catalog.model_validate(data), []
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "file"
            problems.append(CatalogProblem(
                "CATALOG-FORMAT", "fail", where, f"{loc}: {err['msg']}",
                "follow the schema in docs/catalog.md (field names, types, no extra fields)"))
        return None, problems


def _where(i: int, entry: CatalogEntry) -> str:
    return f"games[{i}] ({entry.id})"


def check_catalog(catalog: Catalog, *, builtins: Iterable[str] | None = None) -> list[CatalogProblem]:
    """Every rule on a schema-valid catalog; problems in entry order."""
    taken = set(builtin_ids() if builtins is None else builtins)
    problems: list[CatalogProblem] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(catalog.games):
        where = _where(i, entry)

        def add(rule: str, message: str, fix: str, level: Level = "fail", where: str = where) -> None:
            problems.append(CatalogProblem(rule, level, where, message, fix))

        if entry.id in seen:
            add("CATALOG-ID-DUPLICATE", f"the id {entry.id!r} is also games[{seen[entry.id]}]",
                "each game has its own id; remove the duplicate entry or rename the game")
        seen.setdefault(entry.id, i)
        problems.extend(id_problems(entry.id, where=where, builtins=taken))
        if not entry.url.startswith("https://") or len(entry.url) <= len("https://"):
            add("CATALOG-URL-HTTPS", f"url {entry.url!r} is not an https address",
                "serve the game over https and put that address here")
        if not is_semver(entry.reviewed_version):
            add("CATALOG-REVIEWED-VERSION", f"reviewed_version {entry.reviewed_version!r} is not semver",
                "write the reviewed version as MAJOR.MINOR.PATCH, e.g. 1.0.0")
        elif entry.reviewed_version != entry.version:
            add("CATALOG-UNREVIEWED", f"version {entry.version} is not the reviewed {entry.reviewed_version}",
                "review the new version and set reviewed_version to it; users see "
                "“当前版本未经审核” until then", level="warn")
        for p in _skill_problems(entry):
            add(p.rule, f"{p.field}: {p.message}", p.fix, level=p.level)
    return problems


def _skill_problems(entry: CatalogEntry) -> list[SkillProblem]:
    """The entry's declaration fields checked by ``agentcade.core.skill`` (same rule IDs)."""
    front = {
        "id": entry.id,
        "name": entry.name,
        "description": entry.summary,  # the catalog has no description; summary stands in
        "summary": entry.summary,
        "required_capabilities": entry.required_capabilities,
        "version": entry.version,
        "author": entry.author,
    }
    if entry.homepage is not None:
        front["homepage"] = entry.homepage
    text = "---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False) + "---\n(catalog)\n"
    _skill, problems = check_skill(text, source="catalog")
    return problems


async def check_online(
    catalog: Catalog, *, client: A2AClient | None = None, timeout: float = 20.0  # noqa: ASYNC109
) -> list[CatalogProblem]:
    """Fetch every entry's card; report unreachable games and fields that differ from it."""
    a2a = client or A2AClient(reply_timeout=timeout, connect_timeout=min(timeout, 10.0))
    found: dict[int, list[CatalogProblem]] = {}

    async def one(i: int, entry: CatalogEntry) -> None:
        where = _where(i, entry)
        out = found.setdefault(i, [])
        try:
            with trio.fail_after(timeout):
                _raw, card = await a2a.fetch_card(entry.url)
        except (GameRemoteError, trio.TooSlowError) as exc:
            out.append(CatalogProblem("CATALOG-ONLINE-UNREACHABLE", "fail", where,
                                      f"cannot read the card at {entry.url}: {str(exc) or 'timed out'}",
                                      "check the url, and that the game is deployed and running"))
            return
        for rule, name, ours, theirs in (
            ("CATALOG-ONLINE-ID", "id", entry.id, card.game_id),
            ("CATALOG-ONLINE-NAME", "name", entry.name, card.name),
            ("CATALOG-ONLINE-SUMMARY", "summary", entry.summary, card.summary),
            ("CATALOG-ONLINE-AUTHOR", "author", entry.author, card.author),
            ("CATALOG-ONLINE-VERSION", "version", entry.version, card.version),
            ("CATALOG-ONLINE-CAPABILITIES", "required_capabilities",
             sorted(set(entry.required_capabilities)), sorted(set(card.capabilities))),
        ):
            if ours != theirs:
                out.append(CatalogProblem(rule, "fail", where,
                                          f"{name} is {ours!r} here but {theirs!r} in the card",
                                          f"update the entry's {name} (and review the new version)"))

    async with trio.open_nursery() as nursery:
        for i, entry in enumerate(catalog.games):
            nursery.start_soon(one, i, entry)
    return [p for i in sorted(found) for p in found[i]]
