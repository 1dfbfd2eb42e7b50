"""``RemoteGameClient``: a ``GameClient`` for a game served over A2A (the A2A adapter).

The card is fetched and checked once when the game is opened; the protocol version is the
newest both sides list. Requests always go to the address the user entered: the host is
the entered one and only the path comes from the card's JSON-RPC URL (the guide's rule,
so a game with a wrong ``PUBLIC_URL`` still plays).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentcade.a2a.card import CardInfo, endpoint_for
from agentcade.a2a.client import A2AClient, GameRemoteError, negotiate_protocol
from agentcade.core.protocol import GameInput
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.game.client import GameInfo, ReplyStream

__all__ = ["RemoteGameClient", "open_remote_game"]


class RemoteGameClient:
    """Talks to one remote game; cancellation of ``stream`` closes the connection."""

    def __init__(self, url: str, card: CardInfo, protocol: str, client: A2AClient) -> None:
        self.url = url
        self.card = card
        self.protocol = protocol
        self.endpoint = endpoint_for(url, card)
        self._client = client
        self.info = GameInfo.of(card, url)

    @asynccontextmanager
    async def stream(self, context_id: str, game_input: GameInput) -> AsyncIterator[ReplyStream]:
        """Send one request; yields ``(reply, is_final)`` pairs."""
        async with self._client.stream(
            self.endpoint, context_id, game_input, protocol=self.protocol
        ) as replies:
            yield replies

    async def aclose(self) -> None:
        """Nothing pooled: each request has its own connection."""


@asynccontextmanager
async def open_remote_game(
    url: str, *, trace: Trace = NULL_TRACE, client: A2AClient | None = None
) -> AsyncIterator[RemoteGameClient]:
    """Fetch and check the card at ``url``; yield a client for the game.

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
    remote = RemoteGameClient(url, card, protocol, a2a)
    try:
        yield remote
    finally:
        await remote.aclose()
