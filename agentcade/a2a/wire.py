"""A2A 1.0 ProtoJSON values for the game protocol, built as plain dicts (sans-IO).

Outbound events are built by hand instead of through ``MessageToDict``: the result is the
same camelCase ProtoJSON (the tests parse it back with strict ``ParseDict`` and compare it
with the SDK's own serialization), but integers in a reply keep their type (protobuf's
``Value`` turns ``4326`` into ``4326.0``) and a stream event costs a dict, not a proto
round trip.

Game messages ride in parts: a DataPart ``{"data": GameReply.to_wire()}`` followed, when
the text is not empty, by a TextPart ``{"text": ...}`` for A2A clients that only read text
(the plain-text door).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from agentcade.core.errors import UnsupportedContent
from agentcade.core.protocol import (
    MAX_TEXT,
    GameInput,
    GameReply,
    ProtocolError,
    parse_input,
    parse_reply,
)

__all__ = [
    "INPUT_MODES",
    "INTERRUPTED",
    "TERMINAL",
    "UnsupportedContent",
    "agent_message",
    "input_from_parts",
    "reply_from_parts",
    "reply_parts",
    "status",
    "status_update",
    "timestamp",
]

SUBMITTED = "TASK_STATE_SUBMITTED"
WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
REJECTED = "TASK_STATE_REJECTED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})
INTERRUPTED = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})
_STATE_BY_NUMBER = {
    1: SUBMITTED,
    2: WORKING,
    3: COMPLETED,
    4: FAILED,
    5: CANCELED,
    6: INPUT_REQUIRED,
    7: REJECTED,
    8: AUTH_REQUIRED,
}


def state_name(value: object) -> str:
    """A TaskState as its ProtoJSON name (ints are accepted on the wire too)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _STATE_BY_NUMBER.get(value, "TASK_STATE_UNSPECIFIED")
    return str(value)


def timestamp(now: dt.datetime | None = None) -> str:
    """RFC 3339 UTC like protobuf's Timestamp JSON (0, 3, 6 fraction digits)."""
    now = now or dt.datetime.now(dt.UTC)
    base = now.strftime("%Y-%m-%dT%H:%M:%S")
    micro = now.microsecond
    if micro == 0:
        return base + "Z"
    if micro % 1000 == 0:
        return f"{base}.{micro // 1000:03d}Z"
    return f"{base}.{micro:06d}Z"


def reply_parts(reply: GameReply) -> list[dict[str, Any]]:
    """DataPart with the reply, then a TextPart with its text when there is any."""
    parts: list[dict[str, Any]] = [{"data": reply.to_wire()}]
    if reply.text:
        parts.append({"text": reply.text})
    return parts


def agent_message(context_id: str, task_id: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A ROLE_AGENT Message."""
    return {
        "messageId": str(uuid.uuid4()),
        "contextId": context_id,
        "taskId": task_id,
        "role": "ROLE_AGENT",
        "parts": parts,
    }


def status(state: str, message: dict[str, Any] | None = None) -> dict[str, Any]:
    """A TaskStatus with a timestamp (SUBMITTED in the first event has none, like the SDK)."""
    out: dict[str, Any] = {"state": state}
    if message is not None:
        out["message"] = message
    out["timestamp"] = timestamp()
    return out


def status_update(task_id: str, context_id: str, task_status: dict[str, Any]) -> dict[str, Any]:
    """A StreamResponse carrying a TaskStatusUpdateEvent."""
    return {"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": task_status}}


INPUT_MODES = ("application/json", "text/plain")
"""The media types a game takes: the DataPart (JSON) door and the plain-text door."""


def _media_type(part: dict[str, Any]) -> str:
    value = part.get("mediaType")
    return value.split(";", 1)[0].strip().lower() if isinstance(value, str) else ""


def _is_json_type(media: str) -> bool:
    return not media or media == "application/json" or media.endswith("+json")


def _is_text_type(media: str) -> bool:
    return not media or media.startswith("text/")


def input_from_parts(parts: list[Any], *, new_session: bool) -> GameInput:
    """Decode the GameInput of a user message.

    The first DataPart wins and must be a GameInput. Without a DataPart, the first TextPart
    is the plain-text door: ``start`` when the session is new, ``message`` otherwise. A part
    whose ``mediaType`` is not JSON (data) or text (text) is not taken.

    Raises:
        UnsupportedContent: the parts are only media the game cannot take (files, images,
            a DataPart declared as something else than JSON).
        ProtocolError: no part at all, or the DataPart is not a valid GameInput.
    """
    dicts = [p for p in parts if isinstance(p, dict)]
    for part in dicts:
        if "data" in part and _is_json_type(_media_type(part)):
            return parse_input(part["data"])
    for part in dicts:
        if isinstance(part.get("text"), str) and _is_text_type(_media_type(part)):
            return GameInput(kind="start" if new_session else "message", text=part["text"])
    offered = sorted(
        {
            _media_type(p) or ("raw bytes" if "raw" in p else "a file URL" if "url" in p else "")
            for p in dicts
            if "raw" in p or "url" in p or _media_type(p)
        }
        - {""}
    )
    if offered:
        raise UnsupportedContent(
            f"this game takes {' or '.join(INPUT_MODES)} parts, not {', '.join(offered)}"
        )
    raise ProtocolError(
        "the message carries no GameInput: send one DataPart "
        '{"data": {"protocol": "agentcade/1", "kind": ..., "text": ...}} or a text part'
    )


def reply_from_parts(parts: object, *, protocol: str | None = None) -> GameReply:
    """Decode a GameReply from a status/agent message's parts (DataPart, else TextPart).

    Args:
        protocol: the negotiated game-protocol version; a DataPart reply in another
            version is refused (a text-only reply has no version and takes this one).

    Raises:
        ProtocolError: no part carries a reply, the DataPart is not a valid GameReply, or
            it speaks another protocol version than the negotiated one.
    """
    if not isinstance(parts, list):
        raise ProtocolError("the agent message has no parts list")
    for part in parts:
        if isinstance(part, dict) and "data" in part:
            reply = parse_reply(part["data"])
            if protocol is not None and reply.protocol != protocol:
                raise ProtocolError(
                    f"the game replied in protocol {reply.protocol!r}, "
                    f"not the negotiated {protocol!r}"
                )
            return reply
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if texts:
        reply = GameReply(text="\n".join(texts)[:MAX_TEXT])
        if protocol is not None and reply.protocol != protocol:
            reply = reply.model_copy(update={"protocol": protocol})
        return reply
    raise ProtocolError("the agent message carries neither a GameReply DataPart nor text")
