"""Sans-IO pieces: JSON-RPC envelopes, SSE framing, ProtoJSON builders. Sync and byte-exact."""

from __future__ import annotations

import json

import pytest
from a2a.types.a2a_pb2 import StreamResponse
from a2a.utils.errors import InvalidParamsError
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import MessageToDict, ParseDict

from agentcade.a2a import wire
from agentcade.a2a.jsonrpc import RpcError, check_version, parse_call, required_fields_present
from agentcade.a2a.sse import SSEDecoder, SSEEvent, encode_data, encode_ping
from agentcade.core.protocol import Directive, GameInput, GameReply, ProtocolError

# ------------------------------------------------------------------ JSON-RPC


def _err(body: bytes, version: str | None = "1.0") -> tuple[int, str, object]:
    with pytest.raises(RpcError) as info:
        check_version(parse_call(body), version)
    return info.value.code, info.value.error.message, info.value.request_id


SEND = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}


@pytest.mark.parametrize(
    ("body", "code", "message", "rid"),
    [
        (
            b"{bad",
            -32700,
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            None,
        ),
        (b"\xff\xfe", -32700, None, None),
        (
            b'[{"jsonrpc":"2.0","method":"GetTask","id":1}]',
            -32600,
            "Batch requests are not supported",
            None,
        ),
        (
            b'{"jsonrpc":"1.0","method":"GetTask","id":1}',
            -32600,
            "Invalid request: 'jsonrpc' must be exactly '2.0'",
            1,
        ),
        (
            b'{"jsonrpc":"2.0","method":"GetTask","id":true}',
            -32600,
            "Invalid request: id must be a string, integer, or null",
            None,
        ),
        (b'{"jsonrpc":"2.0","id":"a"}', -32600, "Invalid Request", "a"),
        (b'"just a string"', -32600, "Invalid Request", None),
        (b'{"jsonrpc":"2.0","method":"message/stream","id":"a"}', -32601, "Method not found", "a"),
        (b'{"jsonrpc":"2.0","method":"Nope","id":7}', -32601, "Method not found", 7),
        (
            b'{"jsonrpc":"2.0","method":"GetTask","id":"a","params":{"id":5}}',
            -32602,
            "Invalid params",
            "a",
        ),
        (
            b'{"jsonrpc":"2.0","method":"GetTask","id":"a","params":{}}',
            -32602,
            "Validation failed",
            "a",
        ),
    ],
)
def test_envelope_errors(body: bytes, code: int, message: str | None, rid: object) -> None:
    got_code, got_message, got_rid = _err(body)
    assert got_code == code
    if message is not None:
        assert got_message == message
    assert got_rid == rid


@pytest.mark.parametrize("version", [None, "", "0.3", "0.3.0", "2.0", "abc"])
def test_version_rejected(version: str | None) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "v", "method": "SendMessage", "params": SEND}
    ).encode()
    code, message, _ = _err(body, version)
    assert code == -32009
    shown = version or "0.3"
    assert (
        message
        == f"A2A version '{shown}' is not supported by this handler. Expected version '1.0'."
    )


@pytest.mark.parametrize("version", ["1.0", "1.0.0", "1", "1.1", "1.7.3"])
def test_version_accepted(version: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "v", "method": "SendMessage", "params": SEND}
    ).encode()
    check_version(parse_call(body), version)


def test_version_checked_after_params_parse_but_before_validation() -> None:
    bad_params = b'{"jsonrpc":"2.0","method":"GetTask","id":"a","params":{"id":5}}'
    assert _err(bad_params, None)[0] == -32602
    missing = b'{"jsonrpc":"2.0","method":"GetTask","id":"a","params":{}}'
    assert _err(missing, None)[0] == -32009


REQUIRED_CASES = [
    ("SendMessage", SEND),
    ("SendMessage", {}),
    ("SendMessage", {"message": {}}),
    ("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER"}}),
    ("SendMessage", {"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}),
    ("SendMessage", {"message": {"messageId": "m", "parts": [{"text": "x"}]}}),
    ("SendMessage", {"message": {**SEND["message"], "parts": [{"text": "x"}, {}]}}),
    ("SendMessage", {**SEND, "configuration": {"acceptedOutputModes": ["text/plain"]}}),
    ("SendMessage", {**SEND, "metadata": {"a": {"b": 1}}}),
    ("SendStreamingMessage", {"message": {**SEND["message"], "metadata": {"k": "v"}}}),
    ("GetTask", {}),
    ("GetTask", {"id": "t"}),
    ("CancelTask", {"id": ""}),
    ("ListTasks", {}),
    ("SubscribeToTask", {"id": "t"}),
]


@pytest.mark.parametrize(("method", "params"), REQUIRED_CASES)
def test_the_cached_required_field_check_agrees_with_the_sdks_walk(
    method: str, params: dict[str, object]
) -> None:
    call = parse_call(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    )
    assert call.params is not None
    try:
        validate_proto_required_fields(call.params)
        sdk_passes = True
    except InvalidParamsError:
        sdk_passes = False
    assert required_fields_present(call.params) == sdk_passes


# ------------------------------------------------------------------ SSE


def test_encode_data_matches_sse_starlette() -> None:
    frame = encode_data({"result": {"x": "你好"}, "id": "r", "jsonrpc": "2.0"})
    assert frame == 'data: {"result": {"x": "你好"}, "id": "r", "jsonrpc": "2.0"}\r\n\r\n'.encode()
    assert encode_data({"a": 1}, event="error") == b'event: error\r\ndata: {"a": 1}\r\n\r\n'
    assert encode_ping().startswith(b": ping - ")
    assert encode_ping().endswith(b"\r\n\r\n")


STREAM = (
    b": ping - 2026\r\n\r\n"
    b'data: {"a": 1}\r\n\r\n'
    b"event: error\ndata: line1\ndata:line2\n\n"
    b"id: 5\rretry: 10\rdata: cr\r\r"
    b"data: \xe4\xbd\xa0\xe5\xa5\xbd\r\n\r\n"
    b"data: tail-without-blank-line\r\n"
)
EXPECTED = [
    SSEEvent("message", '{"a": 1}'),
    SSEEvent("error", "line1\nline2"),
    SSEEvent("message", "cr"),
    SSEEvent("message", "你好"),
]


def test_sse_decoder_whole() -> None:
    assert SSEDecoder().feed(STREAM) == EXPECTED


def test_sse_decoder_one_byte_at_a_time() -> None:
    decoder = SSEDecoder()
    events = []
    for i in range(len(STREAM)):
        events += decoder.feed(STREAM[i : i + 1])
    assert events == EXPECTED


def test_sse_decoder_drops_an_empty_data_event() -> None:
    stream = b"data:\r\n\r\ndata: \n\nevent: error\ndata:\n\ndata: x\n\n"
    assert SSEDecoder().feed(stream) == [SSEEvent("message", "x")]


@pytest.mark.parametrize("step", [1, 2, 100])
def test_sse_decoder_drops_a_leading_bom_once(step: int) -> None:
    stream = b"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"
    decoder = SSEDecoder()
    events = []
    for i in range(0, len(stream), step):
        events += decoder.feed(stream[i : i + step])
    # the second BOM is not at the stream's start: it is part of a field name
    assert events == [SSEEvent("message", "a")]


def test_sse_decoder_keeps_a_short_stream_that_is_not_a_bom() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef") == []
    with pytest.raises(ValueError, match="not UTF-8"):
        decoder.feed(b"data: x\n\n")


def test_sse_decoder_limits() -> None:
    decoder = SSEDecoder(max_event_size=100)
    with pytest.raises(ValueError, match="larger than 100"):
        decoder.feed(b"data: " + b"x" * 200)
    with pytest.raises(ValueError, match="not UTF-8"):
        SSEDecoder().feed(b"data: \xff\n\n")


# ------------------------------------------------------------------ ProtoJSON builders


def test_status_update_is_sdk_protojson() -> None:
    reply = GameReply(
        text="好的",
        directives=[Directive(call="lights.set_color", args=["#00FF00"])],
        session="ended",
    )
    message = wire.agent_message("ctx", "task", wire.reply_parts(reply))
    event = wire.status_update("task", "ctx", wire.status(wire.COMPLETED, message))
    # Strict parse (no unknown fields, no 0.3 spellings) and the SDK's serialization agree.
    proto = ParseDict(event, StreamResponse())
    assert MessageToDict(proto) == event
    assert message["parts"] == [
        {
            "data": {
                "protocol": "agentcade/1",
                "text": "好的",
                "directives": [{"call": "lights.set_color", "args": ["#00FF00"], "kwargs": {}}],
                "session": "ended",
            }
        },
        {"text": "好的"},
    ]


def test_timestamp_format() -> None:
    import datetime as dt

    t = dt.datetime(2026, 11, 29, 23, 33, 15, 588529, tzinfo=dt.UTC)
    assert wire.timestamp(t) == "2026-11-29T23:33:15.588529Z"
    assert wire.timestamp(t.replace(microsecond=588000)) == "2026-11-29T23:33:15.588Z"
    assert wire.timestamp(t.replace(microsecond=0)) == "2026-11-29T23:33:15Z"


def test_input_from_parts() -> None:
    data = {"protocol": "agentcade/1", "kind": "start", "text": "hi"}
    assert wire.input_from_parts(
        [{"text": "ignored"}, {"data": data}], new_session=False
    ) == GameInput(kind="start", text="hi")
    assert wire.input_from_parts([{"text": "hi"}], new_session=True).kind == "start"
    assert wire.input_from_parts([{"text": "hi"}], new_session=False) == GameInput(
        kind="message", text="hi"
    )
    with pytest.raises(wire.UnsupportedContent, match="not a file URL, raw bytes"):
        wire.input_from_parts([{"raw": "AAAA"}, {"url": "http://x"}], new_session=True)
    with pytest.raises(ProtocolError, match="carries no GameInput") as empty:
        wire.input_from_parts([], new_session=True)
    assert not isinstance(empty.value, wire.UnsupportedContent)
    with pytest.raises(ProtocolError, match="must be a JSON object"):
        wire.input_from_parts([{"data": [1, 2]}], new_session=True)
    with pytest.raises(ProtocolError, match="unknown protocol version 'agentcade/9'"):
        wire.input_from_parts([{"data": {**data, "protocol": "agentcade/9"}}], new_session=True)


def test_reply_from_parts() -> None:
    assert wire.reply_from_parts([{"text": "a"}, {"text": "b"}]) == GameReply(text="a\nb")
    assert wire.reply_from_parts([{"data": {"protocol": "agentcade/1", "text": "x"}}]).text == "x"
    with pytest.raises(ProtocolError):
        wire.reply_from_parts([{"raw": "AA"}])
    with pytest.raises(ProtocolError):
        wire.reply_from_parts("nope")
