"""Agent card <-> game declaration (the guide's "不用 Python 写" mapping table).

| SKILL.md                | card                                              |
| ----------------------- | ------------------------------------------------- |
| id                      | skills[0].id                                      |
| name, description       | name, description                                 |
| summary                 | skills[0].description                             |
| aliases                 | skills[0].examples                                |
| required_capabilities   | ``capability:<x>`` in skills[0].tags              |
| (protocol versions)     | every version name (``agentcade/1``) in the tags  |
| version                 | version                                           |
| author, homepage        | provider.organization, provider.url               |

``build_card`` goes through a2a-sdk's ``AgentCard`` proto and ``card_to_dict`` (the SDK's
server ``agent_card_to_dict``, step by step) so the served JSON is exactly what the SDK
would serve. ``read_card`` is the other direction, for
the client and ``check``: it accepts any card the SDK client would accept (``parse_agent_card``
applies the 0.3 -> 1.0 shims) and raises ``CardError`` when the card cannot be played.

No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from a2a.compat.v0_3.versions import is_legacy_version
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
)
from a2a.utils.errors import VersionNotSupportedError
from google.protobuf.json_format import MessageToDict

from agentcade.a2a.wire import INPUT_MODES
from agentcade.core.errors import CardError
from agentcade.core.protocol import SUPPORTED_VERSIONS, ProtocolVersion
from agentcade.core.skill import Declaration

__all__ = [
    "CAPABILITY_PREFIX",
    "DEFAULT_MODES",
    "CardError",
    "CardInfo",
    "build_card",
    "endpoint_for",
    "read_card",
]

CAPABILITY_PREFIX = "capability:"
DEFAULT_MODES = INPUT_MODES
"""Input/output modes we declare: the DataPart (JSON) door and the plain-text door."""

_PROTOCOL_TAG = re.compile(r"^[a-z][a-z0-9._-]*/[0-9]+$")
"""A protocol version tag, "name/N" (``agentcade/1``, ``desktop-game/5``)."""


def build_card(
    skill: Declaration,
    url: str,
    *,
    protocols: Iterable[ProtocolVersion | str] = SUPPORTED_VERSIONS,
    extensions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Return the JSON-ready agent card of a game served at ``url``.

    Args:
        skill: the game's declaration (``Skill``).
        url: absolute URL of the JSON-RPC endpoint (the SDK client POSTs to it verbatim).
        protocols: the game-protocol versions to declare, newest first.
        extensions: A2A extensions the server speaks (URI -> what it is for), none
            required; only a server in test mode has one (``agentcade.core.under_test``).

    ``provider`` is emitted when ``author`` is set, with ``url`` only when ``homepage`` is
    too. The proto marks ``provider.url`` REQUIRED, but the SDK client does not enforce it
    (only the SDK's own server warns about its own card), and dropping the author would
    make ``check`` report a missing author that the game did declare.
    """
    names = [p.name if isinstance(p, ProtocolVersion) else str(p) for p in protocols]
    tags = names + [f"{CAPABILITY_PREFIX}{c}" for c in skill.required_capabilities]
    card = AgentCard(
        name=skill.name,
        description=skill.description,
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        version=skill.version or "1.0.0",
        capabilities=AgentCapabilities(
            streaming=True,
            extensions=[AgentExtension(uri=uri, description=text, required=False)
                        for uri, text in (extensions or {}).items()],
        ),
        default_input_modes=list(DEFAULT_MODES),
        default_output_modes=list(DEFAULT_MODES),
        skills=[
            AgentSkill(
                id=skill.id,
                name=skill.name,
                description=skill.summary,
                tags=tags,
                examples=list(skill.aliases),
            )
        ],
    )
    if skill.author:
        card.provider.CopyFrom(AgentProvider(organization=skill.author, url=skill.homepage or ""))
    return card_to_dict(card)


def card_to_dict(card: AgentCard) -> dict[str, Any]:
    """The card as the SDK's server serves it: 1.0 fields, plus the 0.3 ones a 0.3 client reads.

    What ``a2a.server.request_handlers.response_helpers.agent_card_to_dict`` does (a test
    holds the two equal), without importing the SDK's request handlers (0.2 s at start),
    nor its 0.3 conversions (0.12 s) for a card with no interface a 0.3 client could use.
    """
    result = MessageToDict(card)
    if not any(not i.protocol_version or is_legacy_version(i.protocol_version)
               for i in card.supported_interfaces):
        return result  # to_compat_agent_card would raise VersionNotSupportedError
    from a2a.compat.v0_3.conversions import to_compat_agent_card

    try:
        compat = to_compat_agent_card(card).model_dump(exclude_none=True)
    except VersionNotSupportedError:
        compat = {}
    if not compat.get("supportsAuthenticatedExtendedCard"):
        compat.pop("supportsAuthenticatedExtendedCard", None)
    return _merge(result, compat)


def _merge(into: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Add what ``into`` lacks, recursing into dicts and into lists item by item."""
    for key, value in extra.items():
        if key not in into:
            into[key] = value
        elif isinstance(value, dict) and isinstance(into[key], dict):
            _merge(into[key], value)
        elif isinstance(value, list) and isinstance(into[key], list):
            for mine, theirs in zip(into[key], value, strict=False):
                if isinstance(mine, dict) and isinstance(theirs, dict):
                    _merge(mine, theirs)
    return into


@dataclass(frozen=True, kw_only=True)
class CardInfo(Declaration):
    """What the host needs from a remote game's card: its declaration, plus how to reach it."""

    url: str
    """The JSON-RPC interface URL as written in the card."""
    streaming: bool
    protocols: tuple[str, ...]
    """Game-protocol versions the skill lists, in card order."""
    extensions: tuple[str, ...] = ()
    """The URIs of the A2A extensions the card declares."""

    @property
    def game_id(self) -> str:
        """The game's id (the card's skill id)."""
        return self.id

    @property
    def capabilities(self) -> tuple[str, ...]:
        """The capabilities the card declares (``capability:`` tags)."""
        return self.required_capabilities

    @property
    def rpc_path(self) -> str:
        """Path of the JSON-RPC URL ("/" when empty): the host combines it with its own base."""
        return urlsplit(self.url).path or "/"


def endpoint_for(entered: str, card: CardInfo) -> str:
    """The entered address's scheme and host with the card's JSON-RPC path."""
    base = urlsplit(entered)
    return urlunsplit((base.scheme, base.netloc, card.rpc_path, "", ""))


def _is_v1(version: str) -> bool:
    head = version.strip().split(".", 1)[0]
    return head.isdigit() and int(head) == 1


def read_card(data: Mapping[str, Any]) -> CardInfo:
    """Read a card fetched from ``/.well-known/agent-card.json``.

    Raises:
        CardError: the card is not an object, has no A2A 1.x JSON-RPC interface, or has not
            exactly one skill tagged with a protocol version.
    """
    if not isinstance(data, Mapping):
        raise CardError(f"the agent card must be a JSON object, got {type(data).__name__}")
    # The SDK's client package (httpx, its transports) is 0.2 s to import: only a reader
    # of remote cards pays it, never a server that builds its own.
    from a2a.client.card_resolver import parse_agent_card

    try:
        card = parse_agent_card(dict(data))
    except Exception as exc:  # the SDK raises ParseError, TypeError, ValueError...
        raise CardError(f"the agent card does not parse as an A2A AgentCard: {exc}") from exc

    jsonrpc = [i for i in card.supported_interfaces if i.protocol_binding.upper() == "JSONRPC"]
    if not jsonrpc:
        raise CardError(
            "the agent card has no JSONRPC interface: add supportedInterfaces "
            '[{"url": ..., "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]'
        )
    # Like the SDK client: prefer exactly 1.0, then any 1.x; an empty version means 1.0.
    usable = [i for i in jsonrpc if i.protocol_version in ("", "1.0")] or [
        i for i in jsonrpc if _is_v1(i.protocol_version)
    ]
    if not usable:
        found = ", ".join(sorted({i.protocol_version for i in jsonrpc}))
        raise CardError(
            f"the agent card's JSONRPC interface speaks A2A {found}; agentcade needs A2A 1.0 "
            '(supportedInterfaces[].protocolVersion "1.0")'
        )
    interface = usable[0]
    if not interface.url:
        raise CardError("the agent card's JSONRPC interface has no url")

    tagged = [s for s in card.skills if any(_PROTOCOL_TAG.match(t) for t in s.tags)]
    if not tagged:
        raise CardError(
            "no skill in the agent card has a protocol tag: tag the game's skill with the "
            f"protocol version, e.g. {SUPPORTED_VERSIONS[0].name!r}"
        )
    if len(tagged) > 1:
        ids = ", ".join(repr(s.id) for s in tagged)
        raise CardError(
            f"the agent card has {len(tagged)} skills with a protocol tag ({ids}); "
            "a game card must have exactly one"
        )
    skill = tagged[0]
    if not skill.id:
        raise CardError("the game's skill in the agent card has no id")
    tags = list(skill.tags)
    provider = card.provider if card.HasField("provider") else None
    return CardInfo(
        name=card.name,
        description=card.description,
        version=card.version,
        url=interface.url,
        streaming=card.capabilities.streaming,
        extensions=tuple(e.uri for e in card.capabilities.extensions if e.uri),
        protocols=tuple(t for t in tags if _PROTOCOL_TAG.match(t)),
        required_capabilities=tuple(
            t.removeprefix(CAPABILITY_PREFIX) for t in tags if t.startswith(CAPABILITY_PREFIX)
        ),
        id=skill.id,
        aliases=tuple(skill.examples),
        summary=skill.description,
        author=(provider.organization or None) if provider else None,
        homepage=(provider.url or None) if provider else None,
    )
