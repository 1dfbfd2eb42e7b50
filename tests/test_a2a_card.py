"""Agent card <-> Skill mapping (the guide's "不用 Python 写" table)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.types.a2a_pb2 import AgentCard
from google.protobuf.json_format import ParseDict

from agentcade.a2a.card import CardError, build_card, card_to_dict, read_card
from agentcade.a2a.client import negotiate_protocol
from agentcade.core.protocol import ProtocolVersion
from tests.a2a_peers import FakeSkill

URL = "http://127.0.0.1:7860/rpc"


def test_build_card_maps_every_field() -> None:
    card = build_card(FakeSkill(), URL)
    assert card == {
        "name": "回声",
        "description": "把你说的话说回来",
        "supportedInterfaces": [
            {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"url": "https://example.org/echo", "organization": "Agentcade"},
        "version": "1.2.3",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "skills": [
            {
                "id": "echo",
                "name": "回声",
                "description": "回声游戏",
                "tags": ["agentcade/1", "desktop-game/5", "capability:speaker"],
                "examples": ["回声", "学舌"],
            }
        ],
    }
    # Strict proto parse: no 0.3 keys, no unknown fields, JSON-serializable.
    ParseDict(json.loads(json.dumps(card)), AgentCard())


def test_build_card_keeps_the_author_without_a_homepage_and_takes_protocols() -> None:
    skill = dataclasses.replace(FakeSkill(), homepage=None, required_capabilities=())
    card = build_card(skill, URL, protocols=[ProtocolVersion("agentcade/1")])
    assert card["provider"] == {"organization": "Agentcade"}
    assert read_card(card).author == "Agentcade"
    assert card["skills"][0]["tags"] == ["agentcade/1"]
    card = build_card(dataclasses.replace(FakeSkill(), author=None), URL, protocols=["agentcade/1"])
    assert "provider" not in card


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_card_to_dict_is_what_the_sdk_server_serves(version: str) -> None:
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict

    card = ParseDict(build_card(FakeSkill(), URL), AgentCard())
    card.supported_interfaces[0].protocol_version = version
    assert card_to_dict(card) == agent_card_to_dict(card)


def test_read_card_round_trip() -> None:
    info = read_card(build_card(FakeSkill(), URL))
    assert info.name == "回声"
    assert info.url == URL
    assert info.rpc_path == "/rpc"
    assert info.streaming is True
    assert info.protocols == ("agentcade/1", "desktop-game/5")
    assert info.capabilities == ("speaker",)
    assert info.game_id == "echo"
    assert info.aliases == ("回声", "学舌")
    assert info.summary == "回声游戏"
    assert (info.author, info.homepage) == ("Agentcade", "https://example.org/echo")
    assert info.version == "1.2.3"
    assert negotiate_protocol(info) == "agentcade/1"


def test_read_card_is_what_the_sdk_client_reads() -> None:
    card = build_card(FakeSkill(), URL)
    parsed = parse_agent_card(dict(card))
    assert parsed.supported_interfaces[0].url == URL
    assert parsed.capabilities.streaming


def _card(**changes: object) -> dict[str, object]:
    card = build_card(FakeSkill(), URL)
    card.update(changes)
    return card


@pytest.mark.parametrize(
    ("card", "needle"),
    [
        (_card(supportedInterfaces=[]), "no JSONRPC interface"),
        (
            _card(
                supportedInterfaces=[
                    {"url": URL, "protocolBinding": "GRPC", "protocolVersion": "1.0"}
                ]
            ),
            "no JSONRPC interface",
        ),
        (
            _card(
                supportedInterfaces=[
                    {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
                ]
            ),
            "speaks A2A 0.3",
        ),
        (
            _card(skills=[{"id": "x", "name": "x", "description": "x", "tags": ["chat"]}]),
            "no skill in the agent card has a protocol tag",
        ),
        (
            _card(
                skills=[
                    {"id": "a", "name": "a", "description": "a", "tags": ["agentcade/1"]},
                    {"id": "b", "name": "b", "description": "b", "tags": ["agentcade/1"]},
                ]
            ),
            "2 skills with a protocol tag ('a', 'b')",
        ),
        ({"name": 5, "skills": "no"}, "does not parse"),
    ],
)
def test_read_card_rejects_unusable_cards(card: dict[str, object], needle: str) -> None:
    with pytest.raises(CardError, match=None) as info:
        read_card(card)
    assert needle in str(info.value)


def test_read_card_v03_card_without_interfaces_is_rejected() -> None:
    card = _card()
    del card["supportedInterfaces"]
    card["url"] = URL
    with pytest.raises(CardError, match=r"A2A 0\.3"):
        read_card(card)


def test_read_card_unknown_protocol_negotiates_none() -> None:
    card = _card(skills=[{"id": "a", "name": "a", "description": "a", "tags": ["agentcade/9"]}])
    info = read_card(card)
    assert info.protocols == ("agentcade/9",)
    assert negotiate_protocol(info) is None
