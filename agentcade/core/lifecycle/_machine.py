"""The one engine under every lifecycle: a state, a literal table, and ``handle``.

Rule 1 (h11's ``_state.py``): everything that decides a transition lives in the
machine's own module, in its ``TRANSITIONS`` table; the drivers (the trio classes) only
feed events and branch on ``state``. Rule 2: a machine knows nothing of I/O, time or
trio; it is a value the drivers own.

``handle`` is the only way a state changes. An event the current state does not take
raises ``LocalIllegalTransition`` (our driver's bug) and leaves the state as it was;
``check_remote`` asks, without changing anything, whether a peer's request is allowed
and raises ``RemoteIllegalTransition`` (the peer's mistake) when it is not.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Generic, TypeVar

from agentcade.core.errors import LocalIllegalTransition, RemoteIllegalTransition

__all__ = ["Lifecycle"]

S = TypeVar("S", bound=enum.Enum)
E = TypeVar("E", bound=enum.Enum)


class Lifecycle(Generic[S, E]):
    """A state and the table of what each event moves it to.

    Args:
        name: what the machine is, for error messages (``"a2a task"``).
        table: ``{state: {event: next_state}}``; an event missing from a state's row is
            illegal there. Every state must have a row (an empty one for a final state).
        state: the initial state.
    """

    __slots__ = ("_name", "_table", "state")

    def __init__(self, name: str, table: Mapping[S, Mapping[E, S]], state: S) -> None:
        self._name = name
        self._table = table
        self.state: S = state
        """The current state; changed only by :meth:`handle`."""

    def can(self, event: E) -> bool:
        """Whether ``event`` is legal in the current state."""
        return event in self._table[self.state]

    def handle(self, event: E) -> S:
        """Move on ``event``; return the new state.

        Raises:
            LocalIllegalTransition: the current state does not take ``event`` (the state is
                unchanged): the driver that fed it has a bug.
        """
        try:
            new = self._table[self.state][event]
        except KeyError:
            raise LocalIllegalTransition(self._name, self.state, event) from None
        self.state = new
        return new

    def check_remote(self, event: E) -> None:
        """A peer asked for ``event``: raise if the current state forbids it (no change).

        Raises:
            RemoteIllegalTransition: the current state does not take ``event``.
        """
        if not self.can(event):
            raise RemoteIllegalTransition(self._name, self.state, event)

    def __repr__(self) -> str:
        return f"<{self._name} {self.state.name}>"
