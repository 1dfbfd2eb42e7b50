"""Test mode: the game's unrevealed answer crosses a channel only a test runner turns on.

``agentcade serve --test-mode`` declares the A2A test extension and answers its method; a
game served without it knows no such method, and its card declares nothing, so a host
never asks. ``agentcade run`` in test mode serves the test-only control endpoint on
127.0.0.1 (``agentcade e2e --robot daemon`` asks it about the Application).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import cast

import pytest
import trio

from agentcade.a2a.client import A2AClient
from agentcade.check.scenarios import (
    load_remote_scenarios,
    open_remote_game as open_test_game,
    play_remote_scenario,
)
from agentcade.core.protocol import GameInput
from agentcade.core.under_test import (
    SEED_PATH,
    STATE_PATH,
    UNREVEALED_EXTENSION,
    UNREVEALED_METHOD,
    HostState,
    control_port,
    draw_pace,
    is_test_mode,
    pinned_seed,
)
from agentcade.main.agent import MainAgent
from agentcade.wiring.games import open_local_game
from agentcade.wiring.remote import open_remote_game
from agentcade.wiring.serve import serve_game
from agentcade.wiring.test_control import TestControl
from tests.a2a_peers import http_request


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))


async def _served_riddle(nursery: trio.Nursery, *, test_mode: bool) -> tuple[str, object]:
    """The built-in riddle served on a free port; its card URL and its local game."""
    local_box: list[object] = []

    async def serve(task_status: trio.TaskStatus[str]) -> None:
        async with open_local_game("riddle") as local:
            local_box.append(local)
            _port, url = await nursery.start(
                lambda task_status: serve_game(local, port=0, host="127.0.0.1", url=None,
                                               test_mode=test_mode, task_status=task_status))
            task_status.started(url)
            await trio.sleep_forever()

    url = await nursery.start(serve)
    return url, local_box[0]


async def _rpc(url: str, method: str, params: object, *, extensions: str | None) -> dict[str, object]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    headers = [("a2a-extensions", extensions)] if extensions is not None else None
    answer = (await http_request(port, "POST", "/", body=body, headers=headers)).json()
    assert isinstance(answer, dict)
    return answer


async def test_a_game_served_in_test_mode_tells_its_unrevealed_answer_over_the_extension() -> None:
    async with trio.open_nursery() as nursery:
        url, _local = await _served_riddle(nursery, test_mode=True)
        async with open_remote_game(url) as remote:
            assert UNREVEALED_EXTENSION in remote.card.extensions
            assert await remote.unrevealed("c1") is None  # no such session yet
            async with remote.stream("c1", GameInput(kind="start", text="玩猜谜语")) as replies:
                said = "".join([reply.text async for reply, _final in replies])
            hidden = await remote.unrevealed("c1")
            assert hidden
            assert all(answer not in said for answer in hidden)  # asked, never said
        nursery.cancel_scope.cancel()


async def test_agentcade_test_says_the_answer_of_a_game_served_in_test_mode(tmp_path: Path) -> None:
    """``agentcade test URL --scenarios F`` fills ``{answer}`` from the extension, as
    ``e2e --game URL`` does, and checks the game's leaked answers as for a game folder."""
    scenarios_file = tmp_path / "scenarios.yaml"
    scenarios_file.write_text(
        "scenarios:\n  - name: 说出谜底就猜对了\n    steps:\n      - start: 玩猜谜语\n"
        "      - say: 我猜是{answer}吧\n        spoken: [猜对了，谜底就是]\n", encoding="utf-8")
    async with trio.open_nursery() as nursery:
        url, _local = await _served_riddle(nursery, test_mode=True)
        game = await open_test_game(url, A2AClient())
        assert game.reports_unrevealed
        [scenario] = load_remote_scenarios(scenarios_file, reports_unrevealed=True)
        run = await play_remote_scenario(game, scenario, 0)
        assert run.failures == []
        assert run.leaked_answers == 0
        nursery.cancel_scope.cancel()


async def test_without_test_mode_the_method_is_unknown_and_the_card_declares_nothing() -> None:
    async with trio.open_nursery() as nursery:
        url, _local = await _served_riddle(nursery, test_mode=False)
        async with open_remote_game(url) as remote:
            assert remote.card.extensions == ()
            async with remote.stream("c1", GameInput(kind="start", text="玩猜谜语")) as replies:
                _ = [reply async for reply in replies]
            assert await remote.unrevealed("c1") is None
        answer = await _rpc(url, UNREVEALED_METHOD, {"contextId": "c1"}, extensions=UNREVEALED_EXTENSION)
        assert cast(dict[str, object], answer["error"])["code"] == -32601  # method not found
        nursery.cancel_scope.cancel()


async def test_in_test_mode_the_method_needs_the_extension_activated_and_a_context() -> None:
    async with trio.open_nursery() as nursery:
        url, _local = await _served_riddle(nursery, test_mode=True)
        no_header = await _rpc(url, UNREVEALED_METHOD, {"contextId": "c1"}, extensions=None)
        assert "A2A-Extensions" in str(cast(dict[str, object], no_header["error"])["message"])
        no_context = await _rpc(url, UNREVEALED_METHOD, {}, extensions=UNREVEALED_EXTENSION)
        assert cast(dict[str, object], no_context["error"])["code"] == -32602
        unknown = await _rpc(url, UNREVEALED_METHOD, {"contextId": "x"}, extensions=UNREVEALED_EXTENSION)
        assert unknown["result"] == {"unrevealed": None}
        nursery.cancel_scope.cancel()


def test_test_mode_is_only_on_when_the_runner_says_so() -> None:
    assert not is_test_mode({})
    assert not is_test_mode({"AGENTCADE_TEST_MODE": "0"})
    assert is_test_mode({"AGENTCADE_TEST_MODE": "1"})
    # The port and the seed mean nothing without test mode: no endpoint, no pinned seed.
    assert control_port({"AGENTCADE_TEST_CONTROL_PORT": "28790"}) is None
    assert pinned_seed({"AGENTCADE_TEST_SEED": "3"}) is None
    on = {"AGENTCADE_TEST_MODE": "1", "AGENTCADE_TEST_CONTROL_PORT": "28790", "AGENTCADE_TEST_SEED": "3"}
    assert (control_port(on), pinned_seed(on)) == (28790, 3)
    with pytest.raises(ValueError, match="no TCP port"):
        control_port({**on, "AGENTCADE_TEST_CONTROL_PORT": "70000"})


def test_a_runner_may_slow_the_drawing_but_never_hurry_or_stall_it() -> None:
    assert draw_pace({"AGENTCADE_TEST_DRAW_PACE": "4"}) == 1.0  # not in test mode
    on = {"AGENTCADE_TEST_MODE": "1"}
    assert draw_pace(on) == 1.0
    assert draw_pace({**on, "AGENTCADE_TEST_DRAW_PACE": "2.5"}) == 2.5
    for bad in ("0.5", "100", "fast"):
        with pytest.raises(ValueError, match="AGENTCADE_TEST_DRAW_PACE"):
            draw_pace({**on, "AGENTCADE_TEST_DRAW_PACE": bad})


def test_the_host_state_survives_its_json() -> None:
    state = HostState(game="riddle", session="s1", busy=True, unrevealed=["茶壶"], heard=3, came=False)
    assert HostState.from_json(state.to_json()) == state
    assert HostState.from_json(b"{}") == HostState()


class _NoGame:
    current = None


async def test_the_control_endpoint_answers_on_127_0_0_1_only_its_one_path() -> None:
    control = TestControl(cast(MainAgent, _NoGame()))
    async with trio.open_nursery() as nursery:
        port = await nursery.start(control.serve, 0)

        async def get(path: str, body: bytes | None = None) -> tuple[int, bytes]:
            response = await http_request(port, "GET" if body is None else "POST", path,
                                          body=body or b"", version=None, content_type=None)
            return response.status, response.body

        status, data = await get(STATE_PATH)
        assert status == 200
        assert HostState.from_json(data) == HostState()
        assert (await get("/"))[0] == 404
        assert (await get(f"{STATE_PATH}?heard=x"))[0] == 400
        # The games' random choices seeded again (before each game's steps under the Daemon).
        assert (await get(SEED_PATH, b'{"seed": 7}'))[0] == 200
        drawn = random.random()
        random.seed(7)
        assert random.random() == drawn
        assert (await get(SEED_PATH, b'{"seed": "x"}'))[0] == 400
        nursery.cancel_scope.cancel()

