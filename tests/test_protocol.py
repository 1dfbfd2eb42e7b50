"""The wire protocol models: agentcade/1 and desktop-game/5."""

from __future__ import annotations

import datetime as dt

import pytest

from agentcade.core.protocol import (
    CURRENT,
    MAX_AHEAD,
    MAX_AHEAD_TEXT,
    MAX_TEXT,
    PREVIOUS,
    SUPPORTED_VERSIONS,
    Directive,
    GameInput,
    GameReply,
    ProtocolError,
    ProtocolVersion,
    check_reply_sequence,
    negotiate,
    parse_input,
    parse_reply,
    sunset_of,
    unknown_fields,
)


def test_current_version_is_agentcade_1_and_previous_is_desktop_game_5() -> None:
    assert CURRENT.name == "agentcade/1"
    assert PREVIOUS.name == "desktop-game/5"
    assert SUPPORTED_VERSIONS[0] == CURRENT


def test_every_message_carries_protocol() -> None:
    assert GameInput(kind="start", text="玩").to_wire()["protocol"] == "agentcade/1"
    assert GameReply(text="好").to_wire()["protocol"] == "agentcade/1"


def test_game_input_round_trips_through_the_wire_form() -> None:
    sent = GameInput(kind="message", text="我猜10")
    assert parse_input(sent.to_wire()) == sent
    assert sent.to_wire() == {"protocol": "agentcade/1", "kind": "message", "text": "我猜10"}


def test_reason_appears_only_on_end() -> None:
    assert GameInput(kind="end").to_wire()["reason"] == "user"
    assert GameInput(kind="end", reason="shutdown").reason == "shutdown"
    with pytest.raises(ValueError, match="reason"):
        GameInput(kind="message", text="x", reason="user")


def test_text_is_kept_verbatim_with_punctuation() -> None:
    text = "  我猜……是「水」吧？!  "
    assert parse_input({"protocol": "agentcade/1", "kind": "message", "text": text}).text == text


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ([], "JSON object"),
        ("start", "JSON object"),
        ({"kind": "start"}, "no 'protocol'"),
        ({"protocol": "agentcade/9", "kind": "start"}, "unknown protocol version"),
        ({"protocol": "agentcade/1", "kind": "begin"}, "kind"),
        ({"protocol": "agentcade/1"}, "kind"),
        ({"protocol": "agentcade/1", "kind": "message", "text": 5}, "text"),
        ({"protocol": "agentcade/1", "kind": "end", "reason": "bored"}, "reason"),
    ],
)
def test_bad_input_gets_a_clear_protocol_error(payload: object, fragment: str) -> None:
    with pytest.raises(ProtocolError, match=fragment):
        parse_input(payload)


def test_unknown_fields_are_ignored_on_receipt() -> None:
    reply = parse_reply({"protocol": "agentcade/1", "text": "好", "mood": "happy", "session": "active"})
    assert reply.text == "好"
    assert "mood" not in reply.to_wire()


def test_lines_ahead_go_over_the_wire_and_too_many_or_too_long_are_dropped_not_refused() -> None:
    reply = GameReply(text="好", ahead=["比十还大一些，你还有四次机会。"])
    assert parse_reply(reply.to_wire()).ahead == ["比十还大一些，你还有四次机会。"]
    assert "ahead" not in GameReply(text="好").to_wire()
    flood = parse_reply({"protocol": "agentcade/1", "text": "好",
                         "ahead": ["猜" * (MAX_AHEAD_TEXT + 1), 3, *["不对哦。"] * (MAX_AHEAD + 5)]})
    assert flood.text == "好"
    assert flood.ahead == ["不对哦。"] * MAX_AHEAD


def test_unknown_fields_are_reported_for_check() -> None:
    payload = {
        "protocol": "agentcade/1",
        "text": "好",
        "sesion": "ended",
        "directives": [{"call": "lights.off", "kwarg": {}}],
    }
    assert unknown_fields(payload) == ["sesion", "directives[0].kwarg"]
    assert unknown_fields({"protocol": "agentcade/1", "kind": "start", "txt": "x"}, GameInput) == ["txt"]


def test_reply_text_longer_than_500_characters_is_rejected() -> None:
    GameReply(text="好" * MAX_TEXT)
    with pytest.raises(ValueError, match="500"):
        GameReply(text="好" * (MAX_TEXT + 1))


def test_final_reply_needs_speakable_text() -> None:
    with pytest.raises(ProtocolError, match="no text"):
        GameReply(text="   ", directives=[Directive(call="lights.off")]).check_final()
    GameReply(text="好的").check_final()


def test_only_the_final_reply_may_end_the_session() -> None:
    with pytest.raises(ProtocolError, match="only the final reply"):
        check_reply_sequence([GameReply(text="稍等", session="ended"), GameReply(text="好")])
    check_reply_sequence([GameReply(text="稍等"), GameReply(text="再见", session="ended")])


def test_a_request_needs_at_least_one_reply() -> None:
    with pytest.raises(ProtocolError, match="at least one"):
        check_reply_sequence([])


def test_intermediate_reply_may_carry_only_directives() -> None:
    d = Directive(call="lights.set_color", args=["#00FF00"], kwargs={"brightness": 0.8})
    check_reply_sequence([GameReply(directives=[d]), GameReply(text="好")])
    with pytest.raises(ProtocolError, match="neither"):
        check_reply_sequence([GameReply(), GameReply(text="好")])


def test_directive_wire_form_matches_the_guide() -> None:
    d = Directive(call="lights.set_color", args=["#00FF00"], kwargs={"brightness": 0.8})
    reply = GameReply(text="亮绿灯", directives=[d])
    assert reply.to_wire()["directives"] == [
        {"call": "lights.set_color", "args": ["#00FF00"], "kwargs": {"brightness": 0.8}}
    ]
    assert d.describe() == "lights.set_color('#00FF00', brightness=0.8)"


@pytest.mark.parametrize("call", ["lights", "Lights.off", "lights.off()", "", "a.b.c"])
def test_directive_call_must_be_domain_dot_method(call: str) -> None:
    with pytest.raises(ValueError, match="call"):
        Directive(call=call)


def test_negotiation_picks_the_newest_version_both_list() -> None:
    assert negotiate(["desktop-game/5", "agentcade/1"]) == "agentcade/1"
    assert negotiate(["desktop-game/5"]) == "desktop-game/5"
    assert negotiate(["agentcade/2", "desktop-game/5"]) == "desktop-game/5"
    assert negotiate(["agentcade/2"]) is None
    assert negotiate([]) is None


def test_negotiation_follows_our_order_of_preference() -> None:
    ours = (ProtocolVersion("b/2"), ProtocolVersion("a/1"))
    assert negotiate(["a/1", "b/2"], ours) == "b/2"


def test_previous_version_has_a_sunset_date_and_current_has_none() -> None:
    assert sunset_of("agentcade/1") is None
    sunset = sunset_of("desktop-game/5")
    assert isinstance(sunset, dt.date)
    assert sunset_of("nope/1") is None


def test_replies_echo_the_version_of_the_request() -> None:
    reply = parse_reply({"protocol": "desktop-game/5", "text": "好", "session": "ended"})
    assert reply.protocol == "desktop-game/5"
    assert reply.to_wire()["protocol"] == "desktop-game/5"


def test_a_directives_timing_is_on_the_wire_only_when_it_is_not_the_default() -> None:
    queued = Directive(call="lights.off")
    along = Directive(call="motion.move_to", kwargs={"pan_deg": 60}, timing="with_text")
    wire = GameReply(text="好", directives=[queued, along]).to_wire()
    assert wire["directives"] == [
        {"call": "lights.off", "args": [], "kwargs": {}},
        {"call": "motion.move_to", "args": [], "kwargs": {"pan_deg": 60}, "timing": "with_text"},
    ]
    assert parse_reply(wire).directives == [queued, along]
