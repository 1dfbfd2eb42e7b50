"""JSON-RPC 2.0 envelopes exactly as a2a-sdk 1.3 parses and answers them (sans-IO).

Order of checks (``a2a/server/routes/jsonrpc_dispatcher.py``), each one a ``RpcError``:

1. body is not JSON (or not UTF-8)           -> -32700, ``id: null``
2. envelope (batch, ``jsonrpc``, ``method``)  -> -32600 Invalid Request
3. method is not a 1.0 method                -> -32601 Method not found (0.3 names too)
4. ``params`` do not parse into the proto    -> -32602 Invalid params (``parseError``)
5. ``A2A-Version`` missing or major != 1     -> -32009
6. REQUIRED proto fields missing             -> -32602 Validation failed

Errors are built with the SDK's ``build_error_response`` so codes, messages and the
``google.rpc.ErrorInfo`` details are the SDK's own.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from a2a.server.jsonrpc_models import JSONParseError, JSONRPCError
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import (
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    VersionNotSupportedError,
)
from a2a.utils.proto_utils import parse_lenient, validate_proto_required_fields
from google.api.field_behavior_pb2 import (  # type: ignore[import-untyped]
    FieldBehavior,
    field_behavior,
)
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import ParseError
from google.protobuf.message import Message as ProtoMessage
from jsonrpc.exceptions import JSONRPCInvalidRequestException
from jsonrpc.jsonrpc2 import JSONRPC20Request
from packaging.version import InvalidVersion, Version

from agentcade.core.errors import PeerError

__all__ = [
    "METHODS",
    "RpcCall",
    "RpcError",
    "RpcId",
    "check_version",
    "encode_error",
    "encode_result",
    "parse_call",
    "required_fields_present",
]

RpcId = str | int | None

# Every A2A 1.0 JSON-RPC method. The ones we serve have a params model; the rest are known
# (so not -32601) but answered with -32004/-32003 by the server.
METHODS: dict[str, type[ProtoMessage] | None] = {
    "SendMessage": SendMessageRequest,
    "SendStreamingMessage": SendMessageRequest,
    "GetTask": GetTaskRequest,
    "CancelTask": CancelTaskRequest,
    "ListTasks": ListTasksRequest,
    "SubscribeToTask": SubscribeToTaskRequest,
    "CreateTaskPushNotificationConfig": None,
    "GetTaskPushNotificationConfig": None,
    "ListTaskPushNotificationConfigs": None,
    "DeleteTaskPushNotificationConfig": None,
    "GetExtendedAgentCard": None,
}

EXPECTED_VERSION = "1.0"


class RpcError(PeerError):
    """A request answered with a JSON-RPC error (the peer asked wrongly, or for a task that
    does not exist); ``error`` is the SDK's error object."""

    def __init__(self, request_id: RpcId, error: A2AError | JSONRPCError) -> None:
        super().__init__(error.message)
        self.request_id = request_id
        self.error = error

    @property
    def code(self) -> int:
        """The JSON-RPC error code."""
        if isinstance(self.error, JSONRPCError):
            return int(self.error.code)
        return JSON_RPC_ERROR_CODE_MAP.get(type(self.error), -32603)


@dataclass(frozen=True, slots=True)
class RpcCall:
    """A well-formed JSON-RPC request for a known A2A method."""

    id: RpcId
    method: str
    raw_params: Any
    """The ``params`` JSON as received (numbers keep their type, unlike the proto)."""
    params: ProtoMessage | None
    """The params parsed leniently into the method's proto (None: method not served)."""


def _clean_id(body: object) -> RpcId:
    if not isinstance(body, dict):
        return None
    rid = body.get("id")
    if isinstance(rid, bool) or (rid is not None and not isinstance(rid, str | int)):
        return None
    return rid


def parse_call(body: bytes, *, extensions: Collection[str] = ()) -> RpcCall:
    """Parse one HTTP body into a call; raise ``RpcError`` for steps 1-4 above.

    ``extensions``: the methods of the A2A extensions the server speaks now, known too
    (their ``params`` are left to the server: ``RpcCall.params`` is None).
    """
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RpcError(None, JSONParseError(message=str(exc))) from None
    rid = _clean_id(data)
    try:
        base = JSONRPC20Request.from_data(data)
    except (JSONRPCInvalidRequestException, TypeError, ValueError) as exc:
        raise RpcError(rid, InvalidRequestError(data={"parseError": str(exc)})) from None
    if not isinstance(base, JSONRPC20Request):
        raise RpcError(rid, InvalidRequestError(message="Batch requests are not supported"))
    if data.get("jsonrpc") != "2.0":
        raise RpcError(
            rid, InvalidRequestError(message="Invalid request: 'jsonrpc' must be exactly '2.0'")
        )
    if isinstance(base._id, bool):
        raise RpcError(
            rid,
            InvalidRequestError(message="Invalid request: id must be a string, integer, or null"),
        )
    rid = base._id
    method = base.method
    if not method:
        raise RpcError(rid, InvalidRequestError(message="Method is required"))
    if method not in METHODS and method not in extensions:
        raise RpcError(rid, MethodNotFoundError())
    model = METHODS.get(method)
    raw_params = data.get("params", {})
    params = None
    if model is not None:
        try:
            params = parse_lenient(raw_params, model())
        except (ParseError, TypeError, ValueError, AttributeError) as exc:  # ParseDict's
            raise RpcError(rid, InvalidParamsError(data={"parseError": str(exc)})) from None
    return RpcCall(id=rid, method=method, raw_params=raw_params, params=params)


def check_version(call: RpcCall, header: str | None) -> None:
    """Step 5 and 6: the ``A2A-Version`` header, then the proto's REQUIRED fields."""
    actual = (header or "").strip() or "0.3"
    if actual != EXPECTED_VERSION:
        try:
            ok = Version(actual).major == 1
        except InvalidVersion:
            ok = False
        if not ok:
            raise RpcError(
                call.id,
                VersionNotSupportedError(
                    message=f"A2A version '{actual}' is not supported by this handler. "
                    f"Expected version '{EXPECTED_VERSION}'."
                ),
            )
    if call.params is not None and not required_fields_present(call.params):
        try:  # the SDK's own walk words the error (field paths and messages)
            validate_proto_required_fields(call.params)
        except A2AError as exc:
            raise RpcError(call.id, exc) from None


# How one message type is checked: its REQUIRED fields (name, how "missing" is told,
# the default value) and its message-typed fields to walk into (name, kind).
_Plan = tuple[tuple[tuple[str, int, Any], ...], tuple[tuple[str, int], ...]]
_REPEATED, _PRESENCE, _DEFAULT = 0, 1, 2
_SINGLE, _MAP, _LIST = 0, 1, 2
_plans: dict[str, _Plan] = {}


def _field_is_repeated(field: Any) -> bool:
    """As the SDK tells (protobuf >= 6.31 has ``is_repeated``; older ones a label)."""
    is_repeated = getattr(field, "is_repeated", None)
    if is_repeated is not None:
        return bool(is_repeated)
    return getattr(field, "label", None) == FieldDescriptor.LABEL_REPEATED


def _plan(descriptor: Any) -> _Plan:
    """What ``validate_proto_required_fields`` looks at, read from the descriptor once.

    The SDK's walk reads every field's options on every request (a tenth of a streamed
    request's CPU); the answer depends on the message type only.
    """
    plan = _plans.get(descriptor.full_name)
    if plan is not None:
        return plan
    required: list[tuple[str, int, Any]] = []
    nested: list[tuple[str, int]] = []
    for field in descriptor.fields:
        repeated = _field_is_repeated(field)
        if FieldBehavior.REQUIRED in field.GetOptions().Extensions[field_behavior]:
            how = _REPEATED if repeated else _PRESENCE if field.has_presence else _DEFAULT
            required.append((field.name, how, field.default_value if how == _DEFAULT else None))
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if not repeated:
            nested.append((field.name, _SINGLE))
        elif field.message_type is not None and field.message_type.GetOptions().map_entry:
            nested.append((field.name, _MAP))
        else:
            nested.append((field.name, _LIST))
    plan = (tuple(required), tuple(nested))
    _plans[descriptor.full_name] = plan
    return plan


def required_fields_present(message: ProtoMessage) -> bool:
    """True when ``validate_proto_required_fields`` would pass (same rules, cached plan)."""
    required, nested = _plan(message.DESCRIPTOR)
    for name, how, default in required:
        if how == _PRESENCE:
            if not message.HasField(name):
                return False
        elif how == _REPEATED:
            if not getattr(message, name):
                return False
        elif getattr(message, name) == default:
            return False
    for name, kind in nested:
        if kind == _SINGLE:
            if message.HasField(name) and not required_fields_present(getattr(message, name)):
                return False
        elif kind == _MAP:
            for value in getattr(message, name).values():
                if isinstance(value, ProtoMessage) and not required_fields_present(value):
                    return False
        else:
            for item in getattr(message, name):
                if not required_fields_present(item):
                    return False
    return True


def encode_result(request_id: RpcId, result: Any) -> bytes:
    """A unary JSON-RPC success body, compact like starlette's JSONResponse."""
    return json.dumps(
        {"result": result, "id": request_id, "jsonrpc": "2.0"},
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()


def encode_error(request_id: RpcId, error: A2AError | JSONRPCError) -> bytes:
    """A JSON-RPC error body (SDK shape: code, message, ErrorInfo details)."""
    # Imported at the first error: the SDK's request-handler package takes 0.14 s to
    # import, which a server's start (and every request that succeeds) never needs.
    from a2a.server.request_handlers.response_helpers import build_error_response

    return json.dumps(
        build_error_response(request_id, error), ensure_ascii=False, separators=(",", ":")
    ).encode()
