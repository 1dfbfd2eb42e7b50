"""Issue 23: capabilities and version are confirmed, and stay confirmed.

A family installs a remote game that declares ``motion``; its author later ships 1.1.0
declaring ``light`` too and flashing the lights on start. The next start used to run the
light call unasked. Now the install keeps what the family confirmed (``games.json``), the
new capability is not granted (its directives are skipped and traced), the games page says
what changed with a button to confirm again, and confirming grants it from the next round.

Everything is real: the game is our A2A server on 127.0.0.1 (its card replaced to ship a
new version), the pipeline is ``play``'s, the pages are served and driven over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from agentcade.a2a.card import build_card
from agentcade.a2a.server import A2AServer
from agentcade.core.host_settings import Budgets
from agentcade.core.protocol import Directive, GameInput, GameReply
from agentcade.device.robots import ConsoleRobot
from agentcade.main.agent import MainAgent, OfflineMainModel
from agentcade.testing.timed_robot import Records, recording_trace
from agentcade.web import Pages, serve_pages
from agentcade.wiring.pipeline import open_pipeline
from tests.a2a_peers import FakeSkill
from tests.test_main_agent import Heard

LIGHT = "lights.set_color('#00FF00')"
NOD = "motion.move_to(pan_deg=90, tilt_deg=120, duration_ms=400)"


class Blinker:
    """A remote game that nods on start and, from 1.1.0 on, flashes the lights too."""

    def __init__(self) -> None:
        self.lights = False

    async def handle(self, context_id: str, game_input: GameInput, emit: Any) -> None:
        if game_input.kind == "start":
            moves = [Directive(call="motion.move_to", kwargs={"pan_deg": 90, "tilt_deg": 120, "duration_ms": 400})]
            if self.lights:
                moves.append(Directive(call="lights.set_color", args=["#00FF00"]))
            await emit(GameReply(text="开始啦", directives=moves), final=True)
            return
        ended = game_input.kind == "end"
        await emit(GameReply(text="再见" if ended else "好的", session="ended" if ended else "active"), final=True)


def card(port: int, version: str, *capabilities: str) -> dict[str, Any]:
    skill = FakeSkill(version=version, required_capabilities=capabilities)
    return build_card(skill, f"http://127.0.0.1:{port}/")


@pytest.fixture
async def game(nursery: trio.Nursery) -> tuple[A2AServer, Blinker, str]:
    """The game at 1.0.0 (motion), on 127.0.0.1."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    blinker = Blinker()
    server = A2AServer(blinker, card(port, "1.0.0", "motion"))
    await nursery.start(trio.serve_listeners, server.handle_connection, listeners)
    return server, blinker, f"http://127.0.0.1:{port}/"


def ship_1_1_0(server: A2AServer, blinker: Blinker, url: str) -> None:
    port = int(url.rsplit(":", 1)[1].strip("/"))
    server.set_card(card(port, "1.1.0", "motion", "light"))
    blinker.lights = True


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path / "home"))
    (tmp_path / "builtin").mkdir()
    return tmp_path


@asynccontextmanager
async def started(home: Path) -> AsyncIterator[tuple[MainAgent, Pages, Heard, Records]]:
    """One start of ``play`` with its pages: the installed games come from games.json."""
    heard = Heard()
    trace, records = recording_trace()
    async with (
        open_pipeline(
            ConsoleRobot(heard.out), builtin_dir=home / "builtin", model=OfflineMainModel,
            trace=trace, budgets=Budgets(),
        ) as (agent, registry),
        serve_pages(registry=registry, trace=trace, port=0, environ={"AGENTCADE_HOME": str(home / "home")}) as pages,
    ):
        yield agent, pages, heard, records


async def post(pages: Pages, path: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        html = (await http.get(pages.url + "games")).text
        token = html.split('name="agentcade-token" content="', 1)[1].split('"', 1)[0]
        return await http.post(pages.url + path.lstrip("/"), json=body, headers={"X-Agentcade-Token": token}, timeout=30)


async def games_page(pages: Pages) -> str:
    async with httpx.AsyncClient() as http:
        return (await http.get(pages.url + "games")).text


def robot_did(heard: Heard) -> list[str]:
    return [line.removeprefix("  [机器人] ") for line in heard.lines if line.startswith("  [机器人] ")]


async def test_install_keeps_what_the_family_confirmed(home: Path, game: tuple[A2AServer, Blinker, str]) -> None:
    _, _, url = game
    async with started(home) as (_, pages, _, _):
        assert (await post(pages, "/api/games/install", {"url": url})).status_code == 200
    saved = json.loads((home / "home" / "config" / "games.json").read_text(encoding="utf-8"))
    assert saved["remote"] == [url]
    assert saved["confirmed"] == {url: {"version": "1.0.0", "capabilities": ["motion"]}}


async def test_a_game_that_comes_back_with_light_does_not_get_the_lights_until_confirmed(
    home: Path, game: tuple[A2AServer, Blinker, str]
) -> None:
    server, blinker, url = game
    async with started(home) as (_, pages, _, _):
        assert (await post(pages, "/api/games/install", {"url": url})).status_code == 200
    ship_1_1_0(server, blinker, url)
    async with started(home) as (agent, pages, heard, records):
        await agent.on_user("玩回声")
        await agent.wait_idle()
        assert robot_did(heard)[0] == NOD
        assert LIGHT not in robot_did(heard)
        skipped = [r for r in records if r["type"] == "directive_skipped"]
        assert [r["directive"] for r in skipped] == [LIGHT]
        assert [r["withheld"] for r in records if r["type"] == "game_needs_confirmation"] == [["light"]]

        page = await games_page(pages)
        assert "需要重新确认" in page
        assert "版本从 1.0.0 变成了 1.1.0" in page
        assert "它还想控制灯光" in page
        assert 'data-action="confirm"' in page

        confirmed = await post(pages, "/api/games/confirm", {"url": url})
        assert confirmed.status_code == 200, confirmed.text
        assert "需要重新确认" not in await games_page(pages)

        await agent.on_user("结束游戏")
        await agent.on_user("玩回声")  # the next round: light granted
        await agent.wait_idle()
        assert robot_did(heard).count(LIGHT) == 1
    saved = json.loads((home / "home" / "config" / "games.json").read_text(encoding="utf-8"))
    assert saved["confirmed"][url] == {"version": "1.1.0", "capabilities": ["motion", "light"]}


async def test_a_new_version_without_new_capabilities_is_marked_but_keeps_playing(
    home: Path, game: tuple[A2AServer, Blinker, str]
) -> None:
    server, _, url = game
    async with started(home) as (_, pages, _, _):
        assert (await post(pages, "/api/games/install", {"url": url})).status_code == 200
    port = int(url.rsplit(":", 1)[1].strip("/"))
    server.set_card(card(port, "1.0.1", "motion"))
    async with started(home) as (agent, pages, heard, _):
        await agent.on_user("玩回声")
        await agent.wait_idle()
        assert robot_did(heard)[0] == NOD  # what was confirmed still works
        page = await games_page(pages)
        assert "需要重新确认" in page
        assert "版本从 1.0.0 变成了 1.0.1" in page
        assert "它还想" not in page


async def test_confirming_a_game_that_is_not_installed_is_refused(home: Path, game: tuple[A2AServer, Blinker, str]) -> None:
    _, _, url = game
    async with started(home) as (_, pages, _, _):
        refused = await post(pages, "/api/games/confirm", {"url": url})
    assert refused.status_code == 400
    assert "不是从地址安装的" in refused.json()["errors"]["url"]
