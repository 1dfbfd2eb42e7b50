"""Every exception agentcade raises on purpose, in one tree with one base.

The branches say whose fault it is, like h11's ``LocalProtocolError`` /
``RemoteProtocolError``: the fix, and who hears about it, depend on that::

    AgentcadeError                base: catch this to catch every error agentcade means
    ├── InputError                what a person gave us is wrong; the text says what to fix
    │   ├── GameLoadError         a game folder that cannot be loaded
    │   ├── SettingsError         settings missing or invalid (settings.yaml, .env, env)
    │   ├── SkillError            a SKILL.md with at least one ``fail`` problem
    │   ├── ToolDefinitionError   a ``@tool`` declaration the runtime cannot use
    │   ├── VectorError           a drawing the robot cannot show
    │   ├── DirectiveError        a robot call a game may not make (``DirectiveErrorKind``)
    │   ├── TraceFileError        ``--trace-file`` names a file that cannot be opened
    │   └── AddressError          ``serve`` cannot listen there (port taken, unknown host)
    ├── PeerError                 the other side of the protocol broke it
    │   ├── ProtocolError         a message that breaks agentcade/1
    │   │   └── UnsupportedContent  only media a game cannot take (A2A -32005)
    │   ├── CardError             an agent card we cannot play
    │   ├── GameRemoteError       a remote game delivered no reply (``RemoteErrorKind``)
    │   │   └── ReplyCutShort     its stream ended before the final reply
    │   └── RemoteIllegalTransition  a peer asked for a step its lifecycle forbids (also below)
    ├── IllegalTransition         a lifecycle got an event its state does not take (abstract)
    │   ├── LocalIllegalTransition   our own driver fed it: a bug in agentcade
    │   └── RemoteIllegalTransition  the peer asked for it (cancel a finished A2A task)
    ├── GameCodeError             a game's own code raised ``SystemExit``/``KeyboardInterrupt``
    ├── ModelError                the model failed: HTTP, timeout, garbage, bad tool calls
    ├── VoiceError                speech recognition or synthesis failed (``agentcade run``)
    └── DeviceError               the robot did not carry out a call (``DeviceErrorKind``)

Anything else that escapes — a plain ``Exception`` — is a bug in agentcade (or in a game's
own Python code): it is logged with its traceback, and the family still hears a line.

Kinds are enums, never message text: callers branch on ``exc.kind`` or on the type. The
enums are ``StrEnum`` so a kind compares equal to, prints and serialises as its name
(``"timeout"``). Errors that used to derive from ``ValueError`` / ``TypeError`` still do,
so existing ``except ValueError`` handlers keep working.

Pure: no I/O, no imports beyond the standard library.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

__all__ = [
    "AddressError",
    "AgentcadeError",
    "CardError",
    "DeviceError",
    "DeviceErrorKind",
    "DirectiveError",
    "DirectiveErrorKind",
    "GameCodeError",
    "GameLoadError",
    "GameRemoteError",
    "IllegalTransition",
    "InputError",
    "LocalIllegalTransition",
    "ModelError",
    "PeerError",
    "ProtocolError",
    "RemoteErrorKind",
    "RemoteIllegalTransition",
    "ReplyCutShort",
    "SettingsError",
    "SkillError",
    "ToolDefinitionError",
    "TraceFileError",
    "UnsupportedContent",
    "VectorError",
    "VoiceError",
    "lone_exception",
]


class AgentcadeError(Exception):
    """Base of every error agentcade raises on purpose. The message is one short line."""


# --------------------------------------------------------------------------- input


class InputError(AgentcadeError):
    """What a person gave us is wrong (a game author's files, a user's settings or
    arguments); the message names the file or value and says how to fix it."""


class GameLoadError(InputError):
    """A game folder that cannot be loaded; the message names the file and the fix."""


class SettingsError(InputError):
    """Settings are missing or invalid. The message names the file or key and the fix."""


class TraceFileError(InputError):
    """``--trace-file`` names a file that cannot be opened (a directory, no permission)."""


class AddressError(InputError):
    """A server cannot listen where it was told: the port is taken, the host is unknown."""


class _Problem(Protocol):
    """What ``SkillError`` needs of ``agentcade.core.skill.SkillProblem``."""

    @property
    def level(self) -> str: ...

    def format(self, source: str) -> str: ...


class SkillError(InputError, ValueError):
    """A SKILL.md with at least one ``fail`` problem.

    ``problems`` holds every problem found (warnings too), so a caller can show them all;
    ``str()`` lists the failures, one per line.
    """

    def __init__(self, problems: Iterable[Any], source: str = "SKILL.md") -> None:
        self.problems: list[Any] = list(problems)
        """The ``SkillProblem`` list."""
        self.source = source
        found: list[_Problem] = self.problems
        fails = [p for p in found if p.level == "fail"] or found
        super().__init__("\n".join(p.format(source) for p in fails))


class ToolDefinitionError(InputError, TypeError):
    """A ``@tool`` declaration the runtime cannot use; raised while the game loads.

    The message names the class and the method and says how to fix it.
    """


class VectorError(InputError, ValueError):
    """A drawing the robot cannot show; the message names the limit."""


class DirectiveErrorKind(enum.StrEnum):
    """Why a robot call was refused."""

    NOT_ALLOWED = "not_allowed"
    """Not an open SDK method."""
    UNDECLARED = "undeclared"
    """Its capability is missing from ``required_capabilities``."""
    INVALID = "invalid"
    """Bad arguments (the SDK's own message, or a host limit)."""


class DirectiveError(InputError, ValueError):
    """A robot call a game may not make, or made with wrong arguments.

    Attributes:
        kind: a ``DirectiveErrorKind``.
        call: the ``"domain.method"`` name as written.
        reason: the short cause, e.g. the SDK's own message for ``invalid``.
        hint: how to fix it ("" when the reason says it all).
    """

    def __init__(self, kind: DirectiveErrorKind | str, call: str, reason: str, hint: str = "") -> None:
        self.kind = DirectiveErrorKind(kind)
        self.call = call
        self.reason = reason
        self.hint = hint
        message = f"robot call {call}: {reason}"
        if hint:
            message += f". {hint}"
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind.value, self.call, self.reason, self.hint))


# --------------------------------------------------------------------------- peers


class PeerError(AgentcadeError):
    """The other side of the protocol broke it: a remote game, a main agent sending to a
    served game, a game's replies or card. Not our bug and not the user's."""


class ProtocolError(PeerError, ValueError):
    """A message that breaks the protocol; the text says what and how to fix it."""


class UnsupportedContent(ProtocolError):
    """Every part of a message is a media type the game cannot take (A2A -32005)."""


class CardError(PeerError, ValueError):
    """An agent card we cannot play; the text says what is wrong and how to fix it."""


class RemoteErrorKind(enum.StrEnum):
    """Why a remote game delivered no (final) reply."""

    NETWORK = "network"
    """Connect/TLS/read/write failed, or the connection dropped mid-stream."""
    TIMEOUT = "timeout"
    """No reply within the reply timeout (or the connect timeout)."""
    HTTP = "http"
    """A non-200 status."""
    RPC = "rpc"
    """A JSON-RPC error (a unary body or ``event: error``)."""
    FAILED = "failed"
    """The task ended FAILED or REJECTED (the message is the game's text)."""
    CANCELED = "canceled"
    """The task ended CANCELED."""
    PROTOCOL = "protocol"
    """Bad JSON, bad SSE, a reply that is not a GameReply, no final reply."""
    CARD = "card"
    """The agent card is missing or unusable."""


class GameRemoteError(PeerError):
    """A remote game could not deliver a reply; ``kind`` (a ``RemoteErrorKind``) says why."""

    def __init__(self, kind: RemoteErrorKind | str, message: str) -> None:
        self.kind = RemoteErrorKind(kind)
        self.message = message
        super().__init__(f"{self.kind}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind.value, self.message))


class ReplyCutShort(GameRemoteError):
    """The game ended its reply stream before the final reply (kind ``protocol``).

    Its own type because ``check`` tells it apart from a reply it cannot read.
    """

    def __init__(self, message: str = "the game ended the stream before its final reply") -> None:
        super().__init__(RemoteErrorKind.PROTOCOL, message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,))


# --------------------------------------------------------------------------- lifecycles


class IllegalTransition(AgentcadeError):
    """A lifecycle (``agentcade.core.lifecycle``) was fed an event its state does not take.

    Abstract, like h11's ``ProtocolError``: raise one of the two subclasses, which say whose
    fault it is. The machine's state is left unchanged.

    Attributes:
        machine: the lifecycle's name (``"a2a task"``, ``"game session"`` ...).
        state: the state it was in (an enum member).
        event: the event it refused (an enum member).
    """

    def __init__(self, machine: str, state: enum.Enum, event: enum.Enum) -> None:
        if type(self) is IllegalTransition:
            raise TypeError("raise LocalIllegalTransition or RemoteIllegalTransition, not IllegalTransition")
        self.machine = machine
        self.state = state
        self.event = event
        super().__init__(f"{machine}: {event.name} is not allowed in state {state.name}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.machine, self.state, self.event))


class LocalIllegalTransition(IllegalTransition):
    """Our own driver fed the machine an event its state forbids: a bug in agentcade.

    Every machine raises this one (h11 raises only ``LocalProtocolError`` internally); a
    driver that feeds what a peer asked for re-raises it as ``RemoteIllegalTransition``.
    """


class RemoteIllegalTransition(IllegalTransition, PeerError):
    """A peer asked for a step its lifecycle forbids (cancel an A2A task that is over, send
    to a finished task): the peer's mistake, answered with a protocol error."""


# --------------------------------------------------------------------------- model, robot


class GameCodeError(AgentcadeError):
    """A game's own code raised ``SystemExit`` or ``KeyboardInterrupt`` (``exit()`` in a tool).

    Those are ``BaseException``s that would end the whole program, every other family's
    session with it; the host turns them into this, and the one session fails instead.
    """


class ModelError(AgentcadeError):
    """The model failed (HTTP, timeout, garbage). The message is short and has no secrets."""


class VoiceError(AgentcadeError):
    """Speech recognition (ASR) or synthesis (TTS) failed: the service, the network, or
    espeak-ng. The message is short and has no secrets; the voice loop traces it and
    listens again (a failed sentence is skipped, never spoken half)."""


class DeviceErrorKind(enum.StrEnum):
    """Why the robot did not carry out a call."""

    REJECTED = "rejected"
    """The device NACKed it (``reason`` is the device's)."""
    TIMEOUT = "timeout"
    """No reply in time."""
    UNAVAILABLE = "unavailable"
    """Connection closed, or the firmware lacks the capability."""
    INVALID = "invalid"
    """The SDK refused the arguments."""


class DeviceError(AgentcadeError):
    """A directive the robot did not carry out.

    Attributes:
        kind: a ``DeviceErrorKind``.
        call: the ``"domain.method"`` name.
        reason: the short cause.
    """

    def __init__(self, kind: DeviceErrorKind | str, call: str, reason: str) -> None:
        self.kind = DeviceErrorKind(kind)
        self.call = call
        self.reason = reason
        super().__init__(f"{call}: {self.kind}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.kind.value, self.call, self.reason))


@contextlib.contextmanager
def lone_exception() -> Iterator[None]:
    """Re-raise the lone exception of an exception group as itself.

    A nursery wraps whatever its body raised in a group; where the other tasks never fail
    (a watcher, a relay, an answering loop), a group can only carry the body's own error,
    and the caller wants to catch it by its type (``except VoiceError``).
    """
    try:
        yield
    except BaseExceptionGroup as group:
        lone: BaseException = group
        while isinstance(lone, BaseExceptionGroup) and len(lone.exceptions) == 1:
            lone = lone.exceptions[0]  # nested nurseries nest their groups
        if lone is group:
            raise
        raise lone from None
