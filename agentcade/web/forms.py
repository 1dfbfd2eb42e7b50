"""The settings forms: fields made from a ``settings.yaml`` and the checks of a submission.

Pure functions over data (no I/O): ``section`` turns declared settings plus the values
the family saved into form fields; ``check_submission`` turns a submitted form into the
updates to write, or into one message per bad field (and then nothing is written).

A field's kind comes from the game's ``config.py`` when it has a typed field for the key
(``rounds: int`` -> a whole number), else from the declaration: a secret is a password
field, a key ending in ``_URL`` is an address, a numeric default makes a number field.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from agentcade.core.settings import LLM_KEYS, AgentSettings, LLMSettings, SettingsError, SettingSpec

__all__ = [
    "MAX_VALUE",
    "FormField",
    "Kind",
    "Section",
    "Submission",
    "check_submission",
    "field_kind",
    "section",
]

Kind = Literal["text", "integer", "number", "url", "bool", "secret"]

MAX_VALUE = 2000
"""Longest value accepted (an address or a key is far shorter)."""


@dataclass(frozen=True, slots=True)
class FormField:
    """One input of a settings form, as the page shows it."""

    key: str
    label: str
    kind: Kind
    default: str | None
    required: bool
    value: str
    """What the family saved (``""`` when unset; always ``""`` for a secret)."""
    is_set: bool
    """Whether a value is saved or given otherwise (what a secret shows: set / not set)."""
    from_environment: bool
    """An environment variable of the same name overrides whatever is saved here."""
    missing: bool
    """Required and unset everywhere: the game cannot start."""

    @property
    def secret(self) -> bool:
        return self.kind == "secret"


@dataclass(frozen=True, slots=True)
class Section:
    """One form: the model, the voice, or one game."""

    id: str
    title: str
    note: str
    fields: tuple[FormField, ...]
    config: type[BaseModel] | None = field(default=None, compare=False)
    """The class whose validation the values must pass (``LLMSettings``, a game's ``Settings``)."""

    @property
    def missing(self) -> list[FormField]:
        return [f for f in self.fields if f.missing]

    def get(self, key: str) -> FormField | None:
        return next((f for f in self.fields if f.key == key), None)


@dataclass(frozen=True, slots=True)
class Submission:
    """The outcome of checking a form: updates to write, or errors by key."""

    updates: dict[str, str | None]
    """Key -> new value; ``None`` removes the key (its default applies again)."""
    errors: dict[str, str]
    """Key -> what is wrong, in words for the family (``""`` key: the form as a whole)."""

    @property
    def ok(self) -> bool:
        return not self.errors


_LLM_KINDS: dict[str, Kind] = {
    "LLM_BASE_URL": "url",
    "LLM_API_KEY": "secret",
    "LLM_MODEL": "text",
    "LLM_TIMEOUT": "number",
    "LLM_TEMPERATURE": "number",
}


def _annotation_kind(annotation: Any) -> Kind | None:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _annotation_kind(inner[0]) if len(inner) == 1 else None
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "integer"
    if annotation is float:
        return "number"
    return None


def _is_number(text: str, *, whole: bool) -> bool:
    try:
        number = int(text) if whole else float(text)
    except ValueError:
        return False
    return math.isfinite(number)


def field_kind(spec: SettingSpec, config: type[BaseModel] | None = None) -> Kind:
    """The input kind of a setting (see the module docstring for the order of clues)."""
    if spec.secret:
        return "secret"
    if spec.key in _LLM_KINDS:
        return _LLM_KINDS[spec.key]
    info = config.model_fields.get(spec.key.lower()) if config is not None else None
    if info is not None and (kind := _annotation_kind(info.annotation)) is not None:
        return kind
    if spec.key.endswith("_URL"):
        return "url"
    default = (spec.default or "").strip()
    if default:
        if _is_number(default, whole=True):
            return "integer"
        if _is_number(default, whole=False):
            return "number"
        if default.lower() in ("true", "false"):
            return "bool"
    return "text"


def section(
    id: str,
    title: str,
    specs: Sequence[SettingSpec],
    *,
    saved: Mapping[str, str],
    environ: Mapping[str, str],
    other: Mapping[str, str] | None = None,
    note: str = "",
    config: type[BaseModel] | None = None,
) -> Section:
    """The form of ``specs``.

    Args:
        saved: what the family saved (the user config ``.env``).
        environ: environment variables (they override ``saved``).
        other: values from elsewhere that also count (a game folder's ``.env``).
    """
    fields: list[FormField] = []
    for spec in specs:
        mine = saved.get(spec.key, "")
        given = bool(mine or environ.get(spec.key) or (other or {}).get(spec.key) or spec.default)
        kind = field_kind(spec, config)
        fields.append(
            FormField(
                key=spec.key,
                label=spec.description or spec.key,
                kind=kind,
                default=None if spec.secret else (spec.default or None),
                required=spec.required,
                value="" if kind == "secret" else mine,
                is_set=given,
                from_environment=bool(environ.get(spec.key)),
                missing=spec.required and not given,
            )
        )
    return Section(id=id, title=title, note=note, fields=tuple(fields), config=config)


def _check_value(f: FormField, value: str) -> str | None:
    """What is wrong with one non-empty value, or None."""
    if len(value) > MAX_VALUE:
        return f"太长了（最多 {MAX_VALUE} 个字符）"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "不能有换行或控制字符"
    if f.kind == "integer" and not _is_number(value, whole=True):
        return "请填一个整数，比如 5"
    if f.kind == "number" and not _is_number(value, whole=False):
        return "请填一个数字，比如 0.7"
    if f.kind == "bool" and value.lower() not in ("true", "false"):
        return "请选“是”或“否”"
    if f.kind == "url":
        scheme, _, rest = value.partition("://")
        if scheme.lower() not in ("http", "https") or not rest or rest.startswith("/"):
            return "请填完整的地址，以 http:// 或 https:// 开头"
    return None


def _model_errors(
    sec: Section, values: Mapping[str, str], changed: set[str]
) -> dict[str, str]:
    """Errors the section's settings class finds in ``values``, by key (changed keys only)."""
    config = sec.config
    if config is None:
        return {}
    errors: dict[str, str] = {}
    if config is LLMSettings or (isinstance(config, type) and issubclass(config, AgentSettings)):
        try:
            LLMSettings.from_values(values)
        except SettingsError as exc:
            for key in LLM_KEYS:
                if key in str(exc) and key in changed:
                    errors[key] = str(exc).replace(key, "").strip(" ：:")
    if isinstance(config, type) and issubclass(config, AgentSettings):
        data = {
            name: values[name.upper()]
            for name in config.model_fields
            if name != "llm" and values.get(name.upper())
        }
        try:
            config.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                key = str(error["loc"][0]).upper() if error["loc"] else ""
                if key in changed and error["type"] != "missing":
                    errors.setdefault(key, _plain(error["msg"]))
    return errors


def _plain(message: str) -> str:
    return message.removeprefix("Value error, ")


def check_submission(
    sec: Section,
    submitted: Mapping[str, object],
    *,
    clear: Sequence[str] = (),
    current: Mapping[str, str],
) -> Submission:
    """Check a submitted form of ``sec``.

    Args:
        submitted: key -> value as typed. An empty value removes the saved one (the
            default applies again); for a secret, empty means "keep what is saved".
        clear: secrets to remove.
        current: every value resolved now (defaults, ``.env`` files, environment), the
            base the submitted values are checked against together.

    Returns:
        The updates, or the errors (then ``updates`` is empty: nothing may be written).
    """
    errors: dict[str, str] = {}
    updates: dict[str, str | None] = {}
    known = {f.key for f in sec.fields}
    for key in [*submitted, *clear]:
        if key not in known:
            errors[""] = f"这一栏没有 {key} 这一项，请刷新页面再试"
    for key in clear:
        f = sec.get(key)
        if f is not None and f.secret:
            updates[key] = None
    for key, raw in submitted.items():
        f = sec.get(key)
        if f is None:
            continue
        if not isinstance(raw, str):
            errors[key] = "值应该是文字"
            continue
        value = raw.strip()
        if f.kind == "bool":
            value = value.lower()
        if not value:
            if f.secret:
                continue  # never sent back, so empty means unchanged
            if f.required and not f.from_environment:
                errors[key] = "必填，不能空着"
                continue
            updates[key] = None
            continue
        if (problem := _check_value(f, value)) is not None:
            errors[key] = problem
            continue
        updates[key] = value
    for key in clear:
        f = sec.get(key)
        if f is not None and f.required and not f.from_environment and not updates.get(key):
            errors[key] = "必填的密钥不能清除"
    if not errors:
        merged = dict(current)
        for key, update in updates.items():
            if update is None:
                merged.pop(key, None)
                if (f := sec.get(key)) is not None and f.default:
                    merged[key] = f.default
            else:
                merged[key] = update
        errors = _model_errors(sec, merged, {k for k, v in updates.items() if v is not None})
    if errors:
        return Submission(updates={}, errors=errors)
    return Submission(updates=updates, errors={})
