"""The test-only control endpoint of ``agentcade run`` (:mod:`agentcade.core.under_test`).

Served only when the runner turned test mode on (``AGENTCADE_TEST_MODE`` and
``AGENTCADE_TEST_CONTROL_PORT``), and only on 127.0.0.1: ``agentcade e2e --robot daemon``
plays the guide's robot test against the Application the Daemon started, and asks it here
what it cannot see from outside: the game in play and whether it is busy, what the game
reports as unrevealed (through its client: ``ReportsUnrevealed``, so a remote game is asked
over its A2A extension), how many lines were heard, and when the robot is ready for the
next line. Nothing of it is traced, shown on the pages or said to a model.
"""

from __future__ import annotations

import json
import random
from typing import NoReturn
from urllib.parse import parse_qs

import trio

from agentcade.core.under_test import LONG_POLL, SEED_PATH, STATE_PATH, HostState
from agentcade.game.client import ReportsUnrevealed
from agentcade.main.agent import MainAgent
from agentcade.net.server import Exchange, HttpServer, Request, error_body
from agentcade.wiring.voice import VoiceLoop

__all__ = ["TestControl"]


class TestControl:
    """Answers ``GET /test/state`` about ``agent`` and the voice loop listening now, and
    ``POST /test/seed`` (the games' random choices seeded again).

    ``loop`` is set by ``run`` each time it makes a voice loop (the settings page may
    replace it); until then the robot is not ready and nothing was heard.
    """

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, agent: MainAgent) -> None:
        self.agent = agent
        self.loop: VoiceLoop | None = None
        self._http = HttpServer(self._respond, name="test control")

    async def state(self, *, came: bool = True) -> HostState:
        """The host now (the game's unrevealed answer asked through its client)."""
        current = self.agent.current
        if current is None:
            return HostState(heard=self._heard(), came=came)
        unrevealed = None
        if isinstance(current.client, ReportsUnrevealed):
            unrevealed = await current.client.unrevealed(current.context_id)
        return HostState(game=current.info.id, session=current.context_id, busy=current.busy,
                         unrevealed=unrevealed, heard=self._heard(), came=came)

    def _heard(self) -> int:
        return len(self.loop.heard) if self.loop is not None else 0

    async def _loop(self) -> VoiceLoop:
        while self.loop is None:  # noqa: ASYNC110 - run sets it when it starts listening
            await trio.sleep(0.05)
        return self.loop

    async def _respond(self, http: Exchange, request: Request) -> None:
        if request.path == SEED_PATH and request.method == "POST":
            try:
                seed = json.loads(request.body)["seed"]
                if not isinstance(seed, int):
                    raise TypeError(seed)
            except (ValueError, KeyError, TypeError):
                await http.respond(400, error_body('the body is {"seed": N}'))
                return
            random.seed(seed)  # the games draw from the shared generator
            await http.respond(200, b"{}")
            return
        if request.path != STATE_PATH:
            await http.respond(404, error_body("not found"))
            return
        if request.method != "GET":
            await http.respond(405, error_body("method not allowed"), headers=[(b"allow", b"GET")])
            return
        query = parse_qs(request.query)
        came = True
        try:
            heard = int(query["heard"][0]) if "heard" in query else None
        except ValueError:
            await http.respond(400, error_body("heard must be a number"))
            return
        if "ready" in query or heard is not None:
            came = False
            with trio.move_on_after(LONG_POLL):
                loop = await self._loop()
                if heard is not None:
                    await loop.wait_heard(heard)
                if "ready" in query:
                    await loop.wait_ready_for_speech()
                came = True
        await http.respond(200, (await self.state(came=came)).to_json())

    async def serve(self, port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> NoReturn:
        """Serve on ``127.0.0.1:port`` until cancelled; ``started(bound_port)`` once bound."""
        listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self._http.handle_connection, listeners)
        raise AssertionError("serve_listeners returned")  # pragma: no cover
