"""``RemoteGameClient``: a ``GameClient`` for a game served over A2A (the A2A adapter).

The card is fetched and checked once when the game is opened; the protocol version is the
newest both sides list. Requests always go to the address the user entered: the host is
the entered one and only the path comes from the card's JSON-RPC URL (the guide's rule,
so a game with a wrong ``PUBLIC_URL`` still plays).

Capabilities stay confirmed. An installed game gets only the capabilities the family
confirmed (``Confirmed``, kept in ``games.json``): when a later card declares more, the
game is offered with the confirmed ones (the output queue skips and traces the others'
directives, as for any undeclared call) and says what changed (``withheld``, the version)
until the family confirms again on the games page.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from agentcade.a2a.card import CardInfo, endpoint_for
from agentcade.a2a.client import A2AClient, GameRemoteError, negotiate_protocol
from agentcade.core.protocol import GameInput
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.core.under_test import UNREVEALED_EXTENSION
from agentcade.game.client import GameInfo, ReplyStream

__all__ = ["Confirmed", "RemoteGameClient", "open_remote_game"]


@dataclass(frozen=True)
class Confirmed:
    """What the family confirmed for a remote game: the version and the capabilities."""

    version: str
    capabilities: tuple[str, ...]


class RemoteGameClient:
    """Talks to one remote game; cancellation of ``stream`` closes the connection."""

    def __init__(
        self, url: str, card: CardInfo, protocol: str, client: A2AClient, confirmed: Confirmed | None = None
    ) -> None:
        self.url = url
        self.card = card
        self.protocol = protocol
        self.endpoint = endpoint_for(url, card)
        self._client = client
        self.confirmed = confirmed
        """What the family confirmed (None: a game not installed, or from before confirmations)."""
        allowed = card.capabilities if confirmed is None else confirmed.capabilities
        self.withheld = tuple(c for c in card.capabilities if c not in allowed)
        """Capabilities the card declares that were not confirmed: not granted."""
        granted = tuple(c for c in card.capabilities if c in allowed)
        self.info = dataclasses.replace(GameInfo.of(card, url), required_capabilities=granted)

    @property
    def needs_confirmation(self) -> bool:
        """The card differs from what was confirmed: more capabilities, or another version."""
        return self.confirmed is not None and (
            bool(self.withheld) or self.card.version != self.confirmed.version
        )

    @asynccontextmanager
    async def stream(self, context_id: str, game_input: GameInput) -> AsyncIterator[ReplyStream]:
        """Send one request; yields ``(reply, is_final)`` pairs."""
        async with self._client.stream(
            self.endpoint, context_id, game_input, protocol=self.protocol
        ) as replies:
            yield replies

    async def unrevealed(self, context_id: str) -> list[str] | None:
        """What the game reports unrevealed (``ReportsUnrevealed``), asked over the test
        extension when its card declares it (a game served in test mode,
        ``agentcade.core.under_test``); None otherwise or when it cannot be asked. For test
        runners only (``e2e``, the test-only control endpoint): never said or traced."""
        if UNREVEALED_EXTENSION not in self.card.extensions:
            return None
        try:
            return await self._client.unrevealed(self.endpoint, context_id)
        except GameRemoteError:
            return None

    async def aclose(self) -> None:
        """Nothing pooled: each request has its own connection."""


@asynccontextmanager
async def open_remote_game(
    url: str,
    *,
    trace: Trace = NULL_TRACE,
    client: A2AClient | None = None,
    confirmed: Confirmed | None = None,
) -> AsyncIterator[RemoteGameClient]:
    """Fetch and check the card at ``url``; yield a client for the game.

    ``confirmed``: what the family confirmed; the game gets no other capability.

    Raises:
        GameRemoteError: the card is unreachable or unusable, or no protocol in common.
    """
    a2a = client or A2AClient()
    _, card = await a2a.fetch_card(url)
    protocol = negotiate_protocol(card)
    if protocol is None:
        raise GameRemoteError(
            "protocol", f"{url} speaks {', '.join(card.protocols)}; agentcade speaks agentcade/1"
        )
    trace.record("remote_game", url=url, game=card.game_id, protocol=protocol)
    remote = RemoteGameClient(url, card, protocol, a2a, confirmed)
    if remote.needs_confirmation and confirmed is not None:
        trace.record(
            "game_needs_confirmation", url=url, game=card.game_id, version=card.version,
            confirmed_version=confirmed.version, withheld=list(remote.withheld),
        )
    try:
        yield remote
    finally:
        await remote.aclose()
