"""Helpers for the lifecycle tests: an expected transition grid written as text.

Each test file writes, by hand and independently of the machine's ``TRANSITIONS``, the
grid of what every event does in every state (``-``: illegal), and a path of events that
reaches each state from the initial one. ``every_pair`` yields one case per cell, so a
machine whose table differs from the grid in any cell fails that cell's test.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import pytest

from agentcade.core.errors import LocalIllegalTransition, PeerError, RemoteIllegalTransition
from agentcade.core.lifecycle import Lifecycle


def parse_grid(
    text: str, states: type[enum.Enum], events: type[enum.Enum]
) -> dict[tuple[Any, Any], Any]:
    """``{(state, event): next_state or None}`` from a whitespace-aligned grid."""
    lines = [line.split() for line in text.strip().splitlines()]
    header = [events[name] for name in lines[0]]
    grid: dict[tuple[Any, Any], Any] = {}
    for row in lines[1:]:
        state = states[row[0]]
        assert len(row) == len(header) + 1, row
        for event, cell in zip(header, row[1:], strict=True):
            grid[state, event] = None if cell == "-" else states[cell]
    assert set(grid) == {(s, e) for s in states for e in events}, "the grid must cover every pair"
    return grid


def every_pair(grid: dict[tuple[Any, Any], Any]) -> list[Any]:
    return [
        pytest.param(state, event, target, id=f"{state.name}-{event.name}")
        for (state, event), target in grid.items()
    ]


def check_cell(
    make: Callable[[], Lifecycle[Any, Any]],
    paths: dict[Any, list[Any]],
    state: enum.Enum,
    event: enum.Enum,
    target: enum.Enum | None,
) -> Lifecycle[Any, Any]:
    """Reach ``state`` by its path, feed ``event``, and check the grid's verdict."""
    machine = make()
    for step in paths[state]:
        machine.handle(step)
    assert machine.state is state, f"the path to {state.name} ends in {machine.state.name}"
    if target is None:
        assert not machine.can(event)
        with pytest.raises(LocalIllegalTransition) as caught:
            machine.handle(event)
        assert caught.value.state is state
        assert caught.value.event is event
        assert machine.state is state, "an illegal event leaves the state alone"
        with pytest.raises(RemoteIllegalTransition) as remote:
            machine.check_remote(event)
        assert isinstance(remote.value, PeerError)
        assert machine.state is state
    else:
        assert machine.can(event)
        machine.check_remote(event)  # allowed: no error, no change
        assert machine.state is state
        assert machine.handle(event) is target
        assert machine.state is target
    return machine

