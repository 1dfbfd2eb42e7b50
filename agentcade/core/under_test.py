"""Test mode: what a test may ask a running host about its game, and a family never can.

``agentcade e2e`` says the current answer of a question (``{answer}``) and checks that no
hidden answer was said too early. Both need what the game itself reports as unrevealed
(``SkillAgent.unrevealed``). In this process the game client asks its ``GameHost``; when
the game runs in another process it must come over a channel, never from the trace file
(which a family's pages and bug reports show) and never from private attributes. That
channel exists only in *test mode*, which nothing turns on but an explicit flag or
variable of the test runner, and it answers only on 127.0.0.1:

* ``AGENTCADE_TEST_MODE=1`` (or ``agentcade serve --test-mode``): a game served by
  ``agentcade serve`` answers the A2A extension method :data:`UNREVEALED_METHOD` (declared
  on its card as the extension :data:`UNREVEALED_EXTENSION`); ``agentcade run``'s A2A
  client asks a remote game with it. Without test mode the method is unknown (-32601) and
  the client never sends it.
* ``AGENTCADE_TEST_CONTROL_PORT=N`` (with test mode): ``agentcade run`` (the Application
  under the Daemon) serves :data:`STATE_PATH` on ``127.0.0.1:N``, one JSON
  :class:`HostState`: the game in play, whether a request is in flight, what the game
  reports unrevealed and how many utterances were heard. ``?ready=1`` answers once the
  robot is ready for the next line (listening, nothing pending, quiet), ``?heard=N`` once
  ``N`` utterances were heard (each waits at most :data:`LONG_POLL` s; ``came`` says
  whether what it waited for came).
* ``AGENTCADE_TEST_SEED=N`` (with test mode): ``run`` seeds the games' random choices, so
  the Application draws the same questions every run, as ``e2e --robot sim`` does; the
  endpoint's ``POST /test/seed`` (``{"seed": N}``) seeds them again, before a game's steps
  (what else draws from ``random`` in the Application, and when, varies from run to run).
* ``AGENTCADE_TEST_DRAW_PACE=K`` (with test mode): ``effects.draw`` waits ``K`` times the
  game's interval between strokes (:func:`draw_pace`). A robot step said while a game still
  draws (你画我猜's "talk while busy") must be recognised by the Application's own
  recogniser before the drawing ends; at the game's own pace (about 2.8 s) that held only
  on a quiet machine. The runner slows the drawing instead of racing it; nothing else of
  the game changes.

This module is the channel's shape only (sans-IO): the names, the JSON and its parsing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "CONTROL_PORT_ENV",
    "DRAW_PACE_ENV",
    "LONG_POLL",
    "SEED_ENV",
    "SEED_PATH",
    "STATE_PATH",
    "TEST_MODE_ENV",
    "UNREVEALED_EXTENSION",
    "UNREVEALED_METHOD",
    "HostState",
    "control_port",
    "draw_pace",
    "is_test_mode",
    "pinned_seed",
]

TEST_MODE_ENV = "AGENTCADE_TEST_MODE"
CONTROL_PORT_ENV = "AGENTCADE_TEST_CONTROL_PORT"
SEED_ENV = "AGENTCADE_TEST_SEED"
DRAW_PACE_ENV = "AGENTCADE_TEST_DRAW_PACE"
STATE_PATH = "/test/state"
SEED_PATH = "/test/seed"
LONG_POLL = 20.0
"""How long one ``?ready``/``?heard`` request waits at most (the runner asks again)."""
UNREVEALED_EXTENSION = "https://agentcade.dev/extensions/test-unrevealed/v1"
"""The A2A extension a game in test mode declares on its card."""
UNREVEALED_METHOD = "agentcade.test/GetUnrevealed"
"""JSON-RPC method of that extension: params ``{"contextId": ...}``, result
``{"unrevealed": [...] | null}`` (null: no such live session)."""


def is_test_mode(env: Mapping[str, str]) -> bool:
    """Whether ``env`` turns test mode on (``AGENTCADE_TEST_MODE`` set, not ``0``)."""
    return env.get(TEST_MODE_ENV, "").strip() not in ("", "0")


def _number(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw or not is_test_mode(env):
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None


def control_port(env: Mapping[str, str]) -> int | None:
    """The control endpoint's port in test mode (None: no endpoint).

    Raises:
        ValueError: the port is not a number from 1 to 65535.
    """
    port = _number(env, CONTROL_PORT_ENV)
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"{CONTROL_PORT_ENV}={port} is no TCP port")
    return port


def pinned_seed(env: Mapping[str, str]) -> int | None:
    """The games' random seed in test mode (None: not pinned)."""
    return _number(env, SEED_ENV)


def draw_pace(env: Mapping[str, str]) -> float:
    """How many times slower than the game asks ``effects.draw`` draws (1 outside test mode).

    Raises:
        ValueError: the factor is not a number from 1 to 20 (a test may slow the drawing,
            never hurry it, and never stall it).
    """
    raw = env.get(DRAW_PACE_ENV, "").strip()
    if not raw or not is_test_mode(env):
        return 1.0
    try:
        pace = float(raw)
    except ValueError:
        raise ValueError(f"{DRAW_PACE_ENV}={raw!r} is not a number") from None
    if not 1 <= pace <= 20:
        raise ValueError(f"{DRAW_PACE_ENV}={raw!r} must be from 1 to 20")
    return pace


@dataclass(frozen=True, slots=True)
class HostState:
    """What the control endpoint says of the host (``agentcade run``) at one moment."""

    game: str | None = None
    """The id of the game in play (None: none)."""
    session: str | None = None
    """Its context id: a new one is a new session."""
    busy: bool = False
    """A request to the game is in flight."""
    unrevealed: list[str] | None = None
    """What the game reports as still unrevealed (None: no game, or it reports nothing)."""
    heard: int = 0
    """Utterances recognised since the robot started listening."""
    came: bool = True
    """For a waiting request: what was waited for came (False: :data:`LONG_POLL` passed)."""

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> HostState:
        """Parse an answer.

        Raises:
            ValueError: it is not a state object.
        """
        return cls.from_dict(json.loads(data))

    @classmethod
    def from_dict(cls, raw: Any) -> HostState:
        """Read a parsed answer.

        Raises:
            ValueError: it is not a state object.
        """
        if not isinstance(raw, dict):
            raise ValueError("the test state is not a JSON object")
        unrevealed = raw.get("unrevealed")
        return cls(
            game=_optional_str(raw.get("game")),
            session=_optional_str(raw.get("session")),
            busy=bool(raw.get("busy")),
            unrevealed=[str(s) for s in unrevealed] if isinstance(unrevealed, list) else None,
            heard=int(raw.get("heard") or 0),
            came=bool(raw.get("came", True)),
        )


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)
