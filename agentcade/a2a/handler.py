"""The seam between the A2A server and whatever plays the game (docs/internals.md).

``GameHost`` implements ``GameHandler`` for ``SkillAgent`` games; tests and the benchmark
use small handlers (``tests/a2a_peers.py``). The server only ever sees this protocol.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agentcade.core.protocol import GameInput, ReplySink

__all__ = ["GameHandler", "ReplySink", "SessionAware", "TellsUnrevealed"]



class GameHandler(Protocol):
    """Plays one request of one game session.

    Cancellation of ``handle`` (client disconnect, CancelTask, server shutdown) cancels the
    game's work. If ``handle`` raises, the A2A task ends ``failed``.
    """

    async def handle(self, context_id: str, game_input: GameInput, emit: ReplySink) -> None:
        """Handle one GameInput of session ``context_id``, replying through ``emit``."""
        ...


@runtime_checkable
class SessionAware(Protocol):
    """Optional: lets the plain-text door tell a new session (``start``) from a running one."""

    def has_session(self, context_id: str) -> bool:
        """Whether ``context_id`` is a session the handler already knows."""
        ...


@runtime_checkable
class TellsUnrevealed(Protocol):
    """Optional: a test-mode server answers the test extension's method with it
    (``agentcade.core.under_test``); ``GameHost`` has it."""

    def unrevealed(self, context_id: str) -> list[str] | None:
        """What the game of session ``context_id`` still keeps secret (None: no session)."""
        ...
