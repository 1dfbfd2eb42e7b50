"""The only glue between h11 and trio: one ``h11.Connection`` on one ``trio.abc.Stream``.

No policy lives here (timeouts, limits and routing are the server's and the client's);
this class only moves bytes (h11's ``examples/trio-server.py`` wrapper, typed). The one
server loop (``agentcade.net.server``) reads request bodies through ``read_body``; the A2A
client reads responses through ``next_event``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import h11
import trio

__all__ = ["READ_SIZE", "BodyTooLarge", "H11Stream", "PeerGone"]

READ_SIZE = 64 * 1024


class BodyTooLarge(Exception):
    """A request body over the server's limit (declared or received): answer 413."""


class PeerGone(Exception):
    """The peer closed the connection before its request was complete: nobody to answer."""


class H11Stream:
    """``next_event()`` / ``send()`` over a trio stream.

    A failed or cancelled ``send`` puts our side of the h11 connection in ERROR
    (``send_failed``): a half-written message cannot be continued.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        role: type[h11.CLIENT] | type[h11.SERVER],
        *,
        max_incomplete_event_size: int = h11._connection.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE,
    ) -> None:
        self.stream = stream
        self.conn = h11.Connection(role, max_incomplete_event_size=max_incomplete_event_size)
        self.eof = False
        self._eof_fed = False
        self.held = b""
        """Serialized by ``hold``, not written yet: goes out with the next write."""

    def mark_eof(self) -> None:
        """The peer is gone (EOF or reset): tell h11 once, read no more."""
        self.eof = True
        if not self._eof_fed:
            self._eof_fed = True
            self.conn.receive_data(b"")

    async def receive(self) -> bool:
        """Read once from the peer into h11's buffer; False at EOF (also fed to h11)."""
        if self.eof:
            self.mark_eof()
            return False
        data = await self.stream.receive_some(READ_SIZE)
        if not data:
            self.mark_eof()
            return False
        self.conn.receive_data(bytes(data))
        return True

    @property
    def buffered(self) -> int:
        """Bytes received and not yet parsed."""
        return len(self.conn.trailing_data[0])

    async def next_event(self) -> Any:
        """The next h11 event, reading as needed (``h11.PAUSED`` is returned as is)."""
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                await self.receive()
                continue
            return event

    async def read_body(self, request: h11.Request, max_body: int) -> bytes:
        """The whole body of ``request``, at most ``max_body`` bytes.

        A ``Content-Length`` over the limit is refused before a byte is read.

        Raises:
            BodyTooLarge: declared or received bytes exceed ``max_body``.
            PeerGone: the connection closed mid-body.
        """
        for key, value in request.headers:
            if key == b"content-length" and value.isdigit() and int(value) > max_body:
                raise BodyTooLarge
        body = bytearray()
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > max_body:
                    raise BodyTooLarge
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                raise PeerGone
            else:  # pragma: no cover - h11 yields only these while a body is read
                raise PeerGone

    async def send(self, event: Any) -> None:
        """Serialize and write one event."""
        await self.send_many((event,))

    def hold(self, events: Iterable[Any]) -> None:
        """Serialize ``events`` now; they are written with the next write (``send_many``).

        A response's head held this way goes out in one write with its first chunk when
        that chunk comes soon (one syscall, one wake-up of the peer, instead of two).
        """
        self.held += b"".join([self.conn.send(event) or b"" for event in events])

    async def send_many(self, events: Iterable[Any]) -> None:
        """Serialize ``events`` and write them at once (one syscall for a head and a chunk),
        after what was held."""
        conn = self.conn
        data = self.held + b"".join([conn.send(event) or b"" for event in events])
        self.held = b""
        try:
            if data:
                await self.stream.send_all(data)
        except BaseException:
            conn.send_failed()
            raise

    async def aclose(self) -> None:
        """Close the stream, even when cancelled."""
        await trio.aclose_forcefully(self.stream)
