"""Wire models of the game protocol (``agentcade/1``, previously ``desktop-game/5``).

The main agent and a game exchange exactly two kinds of message, each carried in one
A2A DataPart: ``GameInput`` (main -> game) and ``GameReply`` (game -> main). Both carry
``protocol``, the negotiated version name.

Rules that live here because every transport needs them:

* Unknown fields are ignored on receipt, so either side can add optional fields without
  a version bump (the guide's versioning table). ``unknown_fields`` still reports them,
  because ``check`` warns about them: an unknown field is usually a typo.
* The final reply of a request has 1..500 characters of speakable text; intermediate
  replies may carry only directives. Only the final reply may say ``ended``.
* Version negotiation picks the newest version both sides list. Each version may have
  a sunset date so callers can warn before support ends.

Pure pydantic: no I/O, no trio.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentcade.core.errors import ProtocolError

__all__ = [
    "CURRENT",
    "DEFAULT_START",
    "MAX_AHEAD",
    "MAX_AHEAD_TEXT",
    "MAX_TEXT",
    "PREVIOUS",
    "SUPPORTED_VERSIONS",
    "Directive",
    "GameInput",
    "GameReply",
    "ProtocolError",
    "ProtocolVersion",
    "ReplySink",
    "Timing",
    "check_reply_sequence",
    "negotiate",
    "parse_input",
    "parse_reply",
    "sunset_of",
    "unknown_fields",
]

MAX_TEXT = 500
"""Longest speakable text of a reply (the guide: 1..500 characters)."""
MAX_AHEAD = 40
"""Lines a reply may give the host to synthesise ahead (``GameReply.ahead``)."""
MAX_AHEAD_TEXT = 80
"""Characters of one line ahead (only its first words are synthesised)."""

DEFAULT_START = "我们来玩吧"
"""The text of a ``start`` when nobody said anything more specific (``chat``, ``check``)."""


@dataclass(frozen=True, slots=True)
class ProtocolVersion:
    """One protocol version we speak, with the day its support ends (None: not planned)."""

    name: str
    sunset: dt.date | None = None


CURRENT = ProtocolVersion("agentcade/1")
# The design document's name for the same message shapes. Old versions are kept at least
# three months after a new one ships (the guide's versioning table); agentcade/1 shipped
# with agentcade 0.2.0, so desktop-game/5 is scheduled to go three months after that.
PREVIOUS = ProtocolVersion("desktop-game/5", sunset=dt.date(2027, 3, 31))
SUPPORTED_VERSIONS: tuple[ProtocolVersion, ...] = (CURRENT, PREVIOUS)
"""Every version we speak, newest first."""


def _version_key(name: str) -> tuple[int, str]:
    """Order versions: our own list decides; unknown ones sort by their number."""
    for rank, version in enumerate(SUPPORTED_VERSIONS):
        if version.name == name:
            return (len(SUPPORTED_VERSIONS) - rank, name)
    return (0, name)


def negotiate(
    theirs: Iterable[str], ours: Sequence[ProtocolVersion] = SUPPORTED_VERSIONS
) -> str | None:
    """Return the newest version both sides list, or None if they share none.

    ``ours`` is ordered newest first, so the first of ours the peer also lists wins.
    """
    offered = {name.strip() for name in theirs}
    for version in ours:
        if version.name in offered:
            return version.name
    return None


def sunset_of(name: str) -> dt.date | None:
    """The day support for ``name`` ends, or None (not planned, or not a version we know)."""
    for version in SUPPORTED_VERSIONS:
        if version.name == name:
            return version.sunset
    return None


def is_supported(name: str) -> bool:
    """Whether ``name`` is a version we speak."""
    return any(v.name == name for v in SUPPORTED_VERSIONS)


JsonValue = Any


class _Message(BaseModel):
    # Unknown fields are ignored on receipt (see module docstring): a host that does not
    # know an optional field (``GameReply.ahead``) reads the rest.
    model_config = ConfigDict(extra="ignore", frozen=True)

    protocol: str = CURRENT.name


Timing = Literal["queue", "with_text", "after_text"]
"""When the output queue runs a directive, relative to the reply's text.

``queue`` (the guide's rule, the default): in order before the text, a Job waited for at
most 10 s. ``with_text``: starts together with the text, which does not wait for it (the
moves of ``effects.react`` and ``effects.gesture``: the head moves while the verdict is
spoken). ``after_text``: once the text has been said (the screen a reaction returns to: the
face stays until the sentence is over). See :mod:`agentcade.main.output`.
"""


class Directive(BaseModel):
    """One robot SDK call, e.g. ``{"call": "lights.set_color", "args": ["#00FF00"]}``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    call: str = Field(min_length=3, max_length=64, pattern=r"^[a-z_]+\.[a-z_]+$")
    args: list[JsonValue] = Field(default_factory=list)
    kwargs: dict[str, JsonValue] = Field(default_factory=dict)
    timing: Timing = "queue"

    def to_wire(self) -> dict[str, Any]:
        """The directive's JSON; ``timing`` only when it is not the default ``queue``."""
        data = self.model_dump(mode="json")
        if self.timing == "queue":
            del data["timing"]
        return data

    def describe(self) -> str:
        """Readable form for consoles and traces: ``lights.set_color('#00FF00', brightness=0.8)``."""
        parts = [_short_repr(a) for a in self.args]
        parts += [f"{k}={_short_repr(v)}" for k, v in self.kwargs.items()]
        return f"{self.call}({', '.join(parts)})"


def _short_repr(value: JsonValue) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "...'"


class GameInput(_Message):
    """Main agent -> game: the user's words, verbatim, and what kind of turn this is."""

    kind: Literal["start", "message", "end"]
    text: str = ""
    reason: Literal["user", "shutdown"] | None = None

    @model_validator(mode="after")
    def _reason_only_on_end(self) -> GameInput:
        if self.kind != "end" and self.reason is not None:
            raise ValueError("reason is only allowed when kind is 'end'")
        if self.kind == "end" and self.reason is None:
            object.__setattr__(self, "reason", "user")
        return self

    def to_wire(self) -> dict[str, Any]:
        """The DataPart payload; ``reason`` appears only on ``end``."""
        return self.model_dump(mode="json", exclude_none=True)


class GameReply(_Message):
    """Game -> main agent: text to speak and/or directives to run, and the session state."""

    text: str = Field(default="", max_length=MAX_TEXT)
    directives: list[Directive] = Field(default_factory=list)
    session: Literal["active", "ended"] = "active"
    ahead: list[str] = Field(default_factory=list)
    """Lines the game may say next (a verdict for each guess it expects): the host's voice
    synthesises their first words ahead, so that the one said sounds at once. Never said
    unless a later reply says them, never shown to a model nor traced (a verdict can tell
    the answer). A host that does not know the field ignores it; beyond :data:`MAX_AHEAD`
    lines, and lines longer than :data:`MAX_AHEAD_TEXT`, are dropped (a hint, not a
    contract: a reply is never refused for them)."""

    @field_validator("ahead", mode="before")
    @classmethod
    def _some_lines_ahead(cls, value: object) -> object:
        if not isinstance(value, list):
            return value
        lines = [v for v in value if isinstance(v, str) and 0 < len(v.strip()) <= MAX_AHEAD_TEXT]
        return lines[:MAX_AHEAD]

    def to_wire(self) -> dict[str, Any]:
        """The DataPart payload; an empty directive list and no lines ahead are left out."""
        data: dict[str, Any] = {"protocol": self.protocol, "text": self.text}
        if self.directives:
            data["directives"] = [d.to_wire() for d in self.directives]
        data["session"] = self.session
        if self.ahead:
            data["ahead"] = list(self.ahead)
        return data

    def check_final(self) -> None:
        """Raise ProtocolError unless this reply may close a request."""
        if not self.text.strip():
            raise ProtocolError(
                "the final reply has no text: every request must end with 1..500 characters "
                "of speakable text"
            )

    def check_intermediate(self) -> None:
        """Raise ProtocolError unless this reply may come before the final one."""
        if self.session == "ended":
            raise ProtocolError(
                "an intermediate reply says session 'ended': only the final reply of a "
                "request may end the session"
            )
        if not self.text.strip() and not self.directives:
            raise ProtocolError("an intermediate reply carries neither text nor directives")


def check_reply_sequence(replies: Sequence[GameReply]) -> None:
    """Validate one request's replies: at least one, final has text, only final ends."""
    if not replies:
        raise ProtocolError("a request got no reply: every request needs at least one")
    for reply in replies[:-1]:
        reply.check_intermediate()
    replies[-1].check_final()


def _describe_validation(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "message"
        problems.append(f"{where}: {err['msg']}")
    return "; ".join(problems)


def _parse(model: type[_Message], data: object, what: str) -> Any:
    if not isinstance(data, dict):
        raise ProtocolError(f"{what} must be a JSON object, got {type(data).__name__}")
    protocol = data.get("protocol")
    if not isinstance(protocol, str) or not protocol:
        raise ProtocolError(f"{what} has no 'protocol' field; send e.g. \"{CURRENT.name}\"")
    if not is_supported(protocol):
        names = ", ".join(v.name for v in SUPPORTED_VERSIONS)
        raise ProtocolError(f"{what} uses unknown protocol version {protocol!r}; supported: {names}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ProtocolError(f"invalid {what}: {_describe_validation(exc)}") from None


def parse_input(data: object) -> GameInput:
    """Parse a received GameInput payload; raise ProtocolError with a readable reason."""
    result: GameInput = _parse(GameInput, data, "GameInput")
    return result


def parse_reply(data: object) -> GameReply:
    """Parse a received GameReply payload; raise ProtocolError with a readable reason."""
    result: GameReply = _parse(GameReply, data, "GameReply")
    return result


_DIRECTIVE_FIELDS = frozenset(Directive.model_fields)


def unknown_fields(data: object, model: type[BaseModel] = GameReply) -> list[str]:
    """Names of fields in a received payload that the protocol does not define.

    They are ignored on receipt; ``check`` warns about them because they are usually typos.
    Directive entries of a reply are inspected too (reported as ``directives[i].name``).
    """
    if not isinstance(data, dict):
        return []
    known = set(model.model_fields)
    found = [str(k) for k in data if k not in known]
    if model is GameReply and isinstance(data.get("directives"), list):
        for i, item in enumerate(data["directives"]):
            if isinstance(item, dict):
                found += [f"directives[{i}].{k}" for k in item if k not in _DIRECTIVE_FIELDS]
    return found


class ReplySink(Protocol):
    """``await emit(reply, final=...)``: where a request's replies go, each as soon as it
    exists, the final one last. A game's ``Turn`` writes to it; ``GameHost`` hands it down;
    the A2A server and the in-process client each provide one.

    ``final`` is keyword-only: a bare ``True`` at a call site does not say what it means.
    """

    def __call__(self, reply: GameReply, *, final: bool) -> Awaitable[None]: ...
