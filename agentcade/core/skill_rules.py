"""The rules of a SKILL.md and the checker that walks one file, problem by problem.

Every rule has a stable ID and a level (:data:`RULES`): ``fail`` breaks the guide's rules
(the game must not load); ``warn`` is legal but probably a mistake (an unknown field is
usually a typo) or blocks catalog submission (no ``author``). :class:`SkillChecker` records
a :class:`SkillProblem` for each thing wrong — what is wrong and what to write instead — so
``check`` shows a game author every problem in one run; :func:`agentcade.core.skill.check_skill`
runs it and builds the ``Skill``.

Pure: imports no trio / h11.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import unicodedata
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml

from agentcade.core.allowlist import KNOWN_CAPABILITIES

__all__ = [
    "DEFAULT_VERSION",
    "KNOWN_FIELDS",
    "MAX_SUMMARY",
    "RULES",
    "Level",
    "SkillChecker",
    "SkillProblem",
    "is_game_id",
    "is_semver",
]

Level = Literal["fail", "warn"]

MAX_SUMMARY = 30
"""Longest ``summary`` in characters: it is read aloud after the game's name at boot."""

DEFAULT_VERSION = "1.0.0"

KNOWN_FIELDS: tuple[str, ...] = (
    "id",
    "name",
    "description",
    "summary",
    "aliases",
    "required_capabilities",
    "version",
    "author",
    "homepage",
    "vocabulary",
)
"""The frontmatter keys of the guide's table, in its order."""

RULES: MappingProxyType[str, Level] = MappingProxyType(
    {
        "SKILL-ENCODING": "fail",
        "SKILL-FRONTMATTER": "fail",
        "SKILL-DUPLICATE-FIELD": "fail",
        "SKILL-ID-FORMAT": "fail",
        "SKILL-ID-FOLDER": "fail",
        "SKILL-NAME": "fail",
        "SKILL-DESCRIPTION": "fail",
        "SKILL-SUMMARY-MISSING": "fail",
        "SKILL-SUMMARY-LENGTH": "fail",
        "SKILL-SUMMARY-PUNCTUATION": "fail",
        "SKILL-ALIASES": "fail",
        "SKILL-VOCABULARY": "fail",
        "SKILL-CAPABILITIES": "fail",
        "SKILL-CAPABILITY-UNKNOWN": "warn",
        "SKILL-VERSION-SEMVER": "fail",
        "SKILL-AUTHOR": "fail",
        "SKILL-AUTHOR-MISSING": "warn",
        "SKILL-HOMEPAGE": "fail",
        "SKILL-UNKNOWN-FIELD": "warn",
        "SKILL-BODY-EMPTY": "fail",
    }
)
"""Every rule ID this module reports -> its level. ``check`` prints these IDs: keep them stable."""

_ID_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
# semver.org's recommended pattern, with [0-9] instead of \d so other scripts' digits fail.
_SEMVER_RE = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
# Sentence punctuation, Chinese and ASCII: the summary is spoken right after the game's
# name in the boot greeting, so a trailing stop or comma breaks the sentence it sits in.
_FINAL_PUNCTUATION = frozenset("。．.！!？?，,、；;：:…‥⋯—–-~～·・")
_DELIMITER = "---"


def is_game_id(value: str) -> bool:
    """Whether ``value`` is a valid game ID: a lowercase letter, then lowercase letters,
    digits and underscores, 64 characters at most. The one rule for SKILL.md ids and the
    folders named after them (``user_data_dir``): such an id can never escape a folder."""
    return _ID_RE.fullmatch(value) is not None


def is_semver(version: str) -> bool:
    """Whether ``version`` is a semantic version ("1.2.0"): the one rule for SKILL.md,
    cards and the catalog."""
    return _SEMVER_RE.fullmatch(version) is not None


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """One broken or doubtful thing in a SKILL.md, with what to write instead."""

    rule: str
    level: Level
    field: str
    message: str
    fix: str

    def format(self, source: str = "SKILL.md") -> str:
        """The one-line form used by ``SkillError`` and ``check``: file, field, message, fix."""
        return f"{source}: {self.field}: {self.message} — {self.fix}"



class SkillChecker:
    """Collects problems while walking one SKILL.md; each method checks one part."""

    def __init__(self) -> None:
        self.problems: list[SkillProblem] = []
        self._version_raw: str | None = None

    def add(self, rule: str, field_name: str, message: str, fix: str) -> None:
        self.problems.append(SkillProblem(rule, RULES[rule], field_name, message, fix))

    # structure

    def split(self, text: str) -> tuple[str, str] | None:
        """Frontmatter text and body, or None (problem recorded) if the delimiters are off."""
        lines = text.splitlines(keepends=True)
        if not lines or lines[0].rstrip() != _DELIMITER:
            first = next((line.strip() for line in lines if line.strip()), "")
            if first == _DELIMITER:
                message = "the file starts with blank lines before the opening ---"
                fix = "remove everything before the opening --- so it is the first line"
            elif not text.strip():
                message = "the file is empty"
                fix = (
                    "start the file with a --- line, the fields (id, name, ...), and a closing ---"
                )
            else:
                message = "the file does not start with --- frontmatter"
                fix = (
                    "put the declaration first: a --- line, the fields (id, name, ...), "
                    "a closing --- line, then the host prompt"
                )
            self.add("SKILL-FRONTMATTER", "frontmatter", message, fix)
            return None
        for index in range(1, len(lines)):
            if lines[index].rstrip() == _DELIMITER:
                return "".join(lines[1:index]), "".join(lines[index + 1 :])
        self.add(
            "SKILL-FRONTMATTER",
            "frontmatter",
            "the frontmatter opened with --- on line 1 is never closed",
            "add a line with only --- after the last field, before the host prompt",
        )
        return None

    def frontmatter(self, front_text: str) -> dict[Any, Any] | None:
        """The parsed frontmatter mapping, or None (problem recorded)."""
        loader = _Loader(front_text)
        try:
            data = loader.get_single_data()
        except yaml.YAMLError as exc:
            self.add("SKILL-FRONTMATTER", "frontmatter", _describe_yaml_error(exc), _YAML_FIX)
            return None
        finally:
            loader.dispose()
        if data is None:  # an empty block: report the missing required fields instead
            data = {}
        if not isinstance(data, dict):
            self.add(
                "SKILL-FRONTMATTER",
                "frontmatter",
                f"the frontmatter is {_kind(data)}, not a set of fields",
                "write one 'field: value' per line, e.g. 'id: riddle'",
            )
            return None
        for key, line in loader.duplicates:
            self.add(
                "SKILL-DUPLICATE-FIELD",
                str(key),
                f"{key} is given more than once (again on line {line + 2})",
                f"keep one {key} line and delete the others",
            )
        match = re.search(r"^version[ \t]*:[ \t]*([^\s#]+)", front_text, re.MULTILINE)
        self._version_raw = match.group(1) if match else None
        return data

    def body(self, body: str) -> None:
        if not body.strip():
            self.add(
                "SKILL-BODY-EMPTY",
                "body",
                "there is no host prompt after the frontmatter",
                "after the closing ---, write how the model hosts the game: for each event "
                "and user intent, which tool to call and what to say",
            )

    # fields

    def fields(self, front: dict[Any, Any], expect_id: str | None) -> dict[str, Any]:
        """Check every field; return the Skill keyword arguments (valid when no fail)."""
        values: dict[str, Any] = {
            "id": self.id(front, expect_id),
            "name": self.text(front, "name", "SKILL-NAME", "the game's name, e.g. 猜谜语"),
            "description": self.text(
                front, "description", "SKILL-DESCRIPTION", "how the game is played"
            ),
            "summary": self.summary(front),
            "aliases": self.string_list(front, "aliases", "SKILL-ALIASES"),
            "required_capabilities": self.capabilities(front),
            "version": self.version(front),
            "author": self.author(front),
            "homepage": self.homepage(front),
            "vocabulary": self.string_list(front, "vocabulary", "SKILL-VOCABULARY"),
        }
        self.unknown(front)
        return values

    def id(self, front: dict[Any, Any], expect_id: str | None) -> str:
        value = front.get("id")
        if value is None:
            example = expect_id if expect_id and is_game_id(expect_id) else "my_game"
            self.add(
                "SKILL-ID-FORMAT",
                "id",
                "id is missing",
                f"add 'id: {example}' (lowercase letters, digits and underscores)",
            )
            return ""
        if not isinstance(value, str):
            self.add(
                "SKILL-ID-FORMAT",
                "id",
                f"id must be text, not {_kind(value)} ({value!r})",
                f"use an id that starts with a letter, e.g. 'id: {_suggest_id(str(value))}'",
            )
            return ""
        if not is_game_id(value):
            self.add(
                "SKILL-ID-FORMAT",
                "id",
                f"id {value!r} is not a valid game ID",
                "use a lowercase letter first, then only lowercase letters, digits and "
                f"underscores, at most 64 characters, e.g. 'id: {_suggest_id(value)}'",
            )
        if expect_id is not None and value != expect_id:
            rename = f" or rename the folder to {value}" if is_game_id(value) else ""
            self.add(
                "SKILL-ID-FOLDER",
                "id",
                f"id {value!r} differs from its folder name {expect_id!r}",
                f"set 'id: {expect_id}'{rename}",
            )
        return value

    def text(self, front: dict[Any, Any], key: str, rule: str, what: str) -> str:
        """A required, non-empty text field (name, description)."""
        value = front.get(key)
        if value is None:
            self.add(rule, key, f"{key} is missing", f"add '{key}: ...' with {what}")
            return ""
        if not isinstance(value, str):
            self.add(
                rule,
                key,
                f"{key} must be text, not {_kind(value)} ({value!r})",
                f'put the value in quotes: {key}: "{_plain(value)}"',
            )
            return ""
        if not value.strip():
            self.add(rule, key, f"{key} is empty", f"write {what} after '{key}:'")
        return value.strip()

    def summary(self, front: dict[Any, Any]) -> str:
        value = front.get("summary")
        if value is None or (isinstance(value, str) and not value.strip()):
            self.add(
                "SKILL-SUMMARY-MISSING",
                "summary",
                "summary is missing" if value is None else "summary is empty",
                "add 'summary: ...': one phrase read after the game's name in the boot "
                f"greeting, at most {MAX_SUMMARY} characters, no final punctuation",
            )
            return ""
        if not isinstance(value, str):
            self.add(
                "SKILL-SUMMARY-MISSING",
                "summary",
                f"summary must be text, not {_kind(value)} ({value!r})",
                f'put the value in quotes: summary: "{_plain(value)}"',
            )
            return ""
        summary = value.strip()
        # NFC so a letter typed as base + combining mark counts once, as it is read.
        length = len(unicodedata.normalize("NFC", summary))
        if length > MAX_SUMMARY:
            self.add(
                "SKILL-SUMMARY-LENGTH",
                "summary",
                f"summary is {length} characters long; the limit is {MAX_SUMMARY}",
                f"shorten summary to {MAX_SUMMARY} characters or fewer (now {length})",
            )
        if summary[-1] in _FINAL_PUNCTUATION:
            trimmed = summary.rstrip("".join(_FINAL_PUNCTUATION) + " \t\u3000")
            self.add(
                "SKILL-SUMMARY-PUNCTUATION",
                "summary",
                f"summary ends with punctuation {summary[-1]!r}; it is read in the middle "
                "of the boot greeting",
                f"remove the final punctuation: summary: {trimmed}",
            )
        return summary

    def string_list(self, front: dict[Any, Any], key: str, rule: str) -> tuple[str, ...]:
        """An optional list of non-empty strings (aliases, required_capabilities)."""
        value = front.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            parts = [p.strip() for p in re.split(r"[,，、;；]", value) if p.strip()]
            self.add(
                rule,
                key,
                f"{key} must be a list, not a single text",
                f"write it as a list: {key}: [{', '.join(parts) or '...'}]",
            )
            return ()
        if not isinstance(value, list):
            self.add(
                rule,
                key,
                f"{key} must be a list, not {_kind(value)}",
                f"write it as a list: {key}: [first, second]",
            )
            return ()
        items: list[str] = []
        for index, item in enumerate(value):
            if isinstance(item, str) and item.strip():
                items.append(item.strip())
            elif isinstance(item, str) or item is None:
                self.add(
                    rule,
                    key,
                    f"{key} item {index + 1} is empty",
                    f"remove the empty item from {key}",
                )
            else:
                self.add(
                    rule,
                    key,
                    f"{key} item {index + 1} must be text, not {_kind(item)} ({item!r})",
                    f'put it in quotes: "{_plain(item)}"',
                )
        return tuple(items)

    def capabilities(self, front: dict[Any, Any]) -> tuple[str, ...]:
        key = "required_capabilities"
        capabilities = self.string_list(front, key, "SKILL-CAPABILITIES")
        known = sorted(KNOWN_CAPABILITIES)
        for capability in capabilities:
            if capability in KNOWN_CAPABILITIES:
                continue
            close = difflib.get_close_matches(capability, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            self.add(
                "SKILL-CAPABILITY-UNKNOWN",
                key,
                f"unknown capability {capability!r}; known: {', '.join(known)}",
                f"{hint}use one of the known capabilities, or remove {capability!r}",
            )
        return capabilities

    def version(self, front: dict[Any, Any]) -> str:
        value = front.get("version")
        if value is None:
            return DEFAULT_VERSION
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.add(
                "SKILL-VERSION-SEMVER",
                "version",
                f'version must be text like "1.0.0", not {_kind(value)}',
                f'write it as a quoted semantic version: version: "{DEFAULT_VERSION}"',
            )
            return DEFAULT_VERSION
        if not isinstance(value, str):
            raw = self._version_raw or str(value)
            self.add(
                "SKILL-VERSION-SEMVER",
                "version",
                f"version {raw} was read as a number because it is not quoted, "
                "and is not MAJOR.MINOR.PATCH",
                f'quote it as a full semantic version: version: "{_suggest_semver(raw)}"',
            )
            return DEFAULT_VERSION
        version = value.strip()
        if not is_semver(version):
            self.add(
                "SKILL-VERSION-SEMVER",
                "version",
                f"version {value!r} is not a semantic version (MAJOR.MINOR.PATCH, "
                "optionally -prerelease and +build)",
                f'write e.g. version: "{_suggest_semver(version)}"',
            )
        return version

    def author(self, front: dict[Any, Any]) -> str | None:
        value = front.get("author")
        if value is None or (isinstance(value, str) and not value.strip()):
            self.add(
                "SKILL-AUTHOR-MISSING",
                "author",
                "no author; the game catalog requires one",
                "add 'author: <your name or GitHub account>'",
            )
            return None
        if not isinstance(value, str):
            self.add(
                "SKILL-AUTHOR",
                "author",
                f"author must be text, not {_kind(value)} ({value!r})",
                f'put the value in quotes: author: "{_plain(value)}"',
            )
            return None
        return value.strip()

    def homepage(self, front: dict[Any, Any]) -> str | None:
        value = front.get("homepage")
        if value is None:
            return None
        fix = "write a full http(s) address, e.g. homepage: https://github.com/you/your_game"
        if not isinstance(value, str):
            self.add(
                "SKILL-HOMEPAGE", "homepage", f"homepage must be text, not {_kind(value)}", fix
            )
            return None
        url = value.strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc or re.search(r"\s", url):
            self.add("SKILL-HOMEPAGE", "homepage", f"homepage {value!r} is not an http(s) URL", fix)
        return url

    def unknown(self, front: dict[Any, Any]) -> None:
        for key in front:
            if key in KNOWN_FIELDS:
                continue
            name = str(key)
            close = difflib.get_close_matches(name, KNOWN_FIELDS, n=1, cutoff=0.6)
            if close:
                fix = f"did you mean {close[0]!r}? rename it, or remove it"
            else:
                fix = f"remove it; the known fields are {', '.join(KNOWN_FIELDS)}"
            self.add(
                "SKILL-UNKNOWN-FIELD",
                name,
                f"unknown field {name!r} is ignored",
                fix,
            )


# --- YAML ---------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """SafeLoader that records duplicate keys: PyYAML silently keeps the last one, which
    hides an author's edit (two ``summary`` lines, only one of them used)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[Any, int]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if node is self._root():
            seen: set[Any] = set()
            for key_node, _value in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    is_dup = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key; the base class reports it
                    continue
                if is_dup:
                    self.duplicates.append((key, key_node.start_mark.line))
        return super().construct_mapping(node, deep=deep)

    def _root(self) -> Any:
        root: Any = getattr(self, "_root_node", None)
        return root

    def construct_document(self, node: yaml.Node) -> Any:
        self._root_node = node
        return super().construct_document(node)


_YAML_FIX = (
    "check the indentation (spaces, not tabs) and put quotes around values that contain "
    "': ', ' #' or start with [ { * & ! | > ' \" % @ `"
)


def _describe_yaml_error(exc: yaml.YAMLError) -> str:
    """The YAML error with its line in the file (frontmatter line 1 is file line 2)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if mark is not None:
            return f"the frontmatter is not valid YAML at line {mark.line + 2}: {what}"
        return f"the frontmatter is not valid YAML: {what}"
    return f"the frontmatter is not valid YAML: {exc}"


# --- helpers ------------------------------------------------------------------------------


def _kind(value: object) -> str:
    """How YAML read a value, in an author's words (YAML turns yes/1.0/2024-01-01 into
    non-text values, which is the usual cause of a type problem)."""
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a set of fields"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bytes):
        return "binary data"
    if isinstance(value, (dt.date, dt.datetime)):
        return "a date"
    return f"a {type(value).__name__}"


def _plain(value: object) -> str:
    """A value as an author would have typed it, for "put it in quotes" fixes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _suggest_id(value: str) -> str:
    """A valid ID close to what the author wrote, e.g. 'My-Game' -> 'my_game'."""
    text = re.sub(r"[^a-z0-9_]+", "_", value.strip().lower()).strip("_")
    text = re.sub(r"_+", "_", text)
    if not text:
        return "my_game"
    if not text[0].isalpha():
        text = f"game_{text}"
    return text[:64]


def _suggest_semver(raw: str) -> str:
    """Pad/clean a version-like text to MAJOR.MINOR.PATCH, e.g. '1.2' -> '1.2.0'."""
    numbers = re.findall(r"[0-9]+", raw.strip().lstrip("vV").split("-")[0].split("+")[0])
    parts = [str(int(n)) for n in numbers[:3]]
    while len(parts) < 3:
        parts.append("0")
    if parts == ["0", "0", "0"]:
        return DEFAULT_VERSION
    return ".".join(parts)
