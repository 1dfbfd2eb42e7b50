"""``GameClient``: one way to talk to any game, built in (in-process) or remote (A2A).

The main agent and ``chat`` send one ``GameInput`` for a context and read the replies as
they come, the last one final. They cannot tell the transports apart:

* ``InProcessGameClient`` runs a ``GameHost`` in this process (no sockets); the request
  runs in a task of the caller's nursery scope and leaving the ``stream`` block early
  cancels it — exactly what a client disconnect does to a remote game.
* ``RemoteGameClient`` (``agentcade.wiring.remote``) speaks A2A over HTTP.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import trio

from agentcade.core.protocol import GameInput, GameReply, ReplySink
from agentcade.core.skill import Declaration
from agentcade.game.host import GameHost

__all__ = ["GameClient", "GameInfo", "InProcessGameClient", "ReplyStream", "ReportsUnrevealed", "is_url"]

ReplyStream = AsyncIterator[tuple[GameReply, bool]]
"""A game's replies to one request, ``(reply, is_final)``, the last one final."""


def is_url(location: str) -> bool:
    """Whether ``location`` is an http(s) address: a game location (a command-line
    argument, ``GameInfo.location``) that is a remote game rather than a folder or a
    built-in id, or a web link (a game's homepage). The one home of this test."""
    return location.startswith(("http://", "https://"))


@dataclass(frozen=True, kw_only=True)
class GameInfo(Declaration):
    """What the main agent knows of a game: its declaration and where it runs."""

    location: str
    """The folder of a built-in or local game, or the URL of a remote one."""

    @classmethod
    def of(cls, declaration: Declaration, location: str) -> GameInfo:
        """The info of a game declared by a SKILL.md (``Skill``) or an agent card."""
        return cls(**declaration.declared(), location=location)

    @property
    def capabilities(self) -> tuple[str, ...]:
        """The capabilities the game declared (``required_capabilities``)."""
        return self.required_capabilities


class GameClient(Protocol):
    """Send one request to a game and read its replies."""

    info: GameInfo
    protocol: str

    def stream(
        self, context_id: str, game_input: GameInput
    ) -> AbstractAsyncContextManager[ReplyStream]:
        """Send one request; the block yields ``(reply, is_final)`` pairs, the last final.

        Leaving the block early cancels the request.
        """
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ReportsUnrevealed(Protocol):
    """A game client that can tell the scenario tests what its game keeps secret."""

    async def unrevealed(self, context_id: str) -> list[str] | None: ...


class InProcessGameClient:
    """A ``GameClient`` over a ``GameHost`` in this process."""

    def __init__(self, host: GameHost, info: GameInfo) -> None:
        self.host = host
        self.info = info
        self.protocol = "agentcade/1"

    @asynccontextmanager
    async def stream(self, context_id: str, game_input: GameInput) -> AsyncIterator[ReplyStream]:
        """Run the request; yields an iterator of ``(reply, is_final)``."""
        send, receive = trio.open_memory_channel[tuple[GameReply, bool]](math.inf)

        async def run() -> None:
            async with send:
                await self.host.handle(context_id, game_input, _sender(send))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            replies = _replies(receive)
            try:
                yield replies
            finally:
                nursery.cancel_scope.cancel()
                # A turn cancelled mid-stream (a barge-in) leaves the generator suspended:
                # close it here, not in the garbage collector.
                with trio.CancelScope(shield=True):
                    await replies.aclose()

    async def unrevealed(self, context_id: str) -> list[str] | None:
        """What the game reports as still unrevealed in the session ``context_id``
        (``GameHost.unrevealed``): for the scenario tests only, never sent to a model."""
        return self.host.unrevealed(context_id)

    async def aclose(self) -> None:
        """Close every session of the host."""
        await self.host.aclose()


def _sender(send: trio.MemorySendChannel[tuple[GameReply, bool]]) -> ReplySink:
    async def emit(reply: GameReply, *, final: bool) -> None:
        await send.send((reply, final))

    return emit


async def _replies(
    receive: trio.MemoryReceiveChannel[tuple[GameReply, bool]],
) -> AsyncGenerator[tuple[GameReply, bool], None]:
    with receive:  # closed without a checkpoint: this also runs when the turn is cancelled
        async for reply, is_final in receive:
            yield reply, is_final
            if is_final:
                return
