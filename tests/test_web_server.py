"""The pages' server in this process: refusals (Host, Origin, token, size), writes, games, live."""

from __future__ import annotations

import gc
import json
import warnings
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from trio_websocket import HandshakeError, open_websocket_url, wrap_client_stream

from agentcade.a2a.server import serve_a2a
from agentcade.core.dotenv import read_dotenv
from agentcade.core.trace import Trace, request_scope
from agentcade.testing.fake_openai import FakeOpenAI, Reply
from agentcade.web import Pages, serve_pages
from agentcade.web.security import check_origin, check_request
from agentcade.wiring.registry import open_registry

PROBE = Path(__file__).parent / "data" / "games" / "probe"


@pytest.fixture
async def pages(tmp_path: Path) -> AsyncIterator[tuple[Pages, Trace]]:
    empty = tmp_path / "builtin"
    empty.mkdir()
    trace = Trace()
    environ = {"AGENTCADE_HOME": str(tmp_path / "home")}
    async with open_registry(builtin_dir=empty, remote=[], trace=trace) as registry, serve_pages(
        registry=registry, trace=trace, port=0, environ=environ
    ) as running:
        yield running, trace


def token_of(html: str) -> str:
    return html.split('name="agentcade-token" content="', 1)[1].split('"', 1)[0]


async def post(pages: Pages, path: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        token = token_of((await http.get(pages.url + "settings")).text)
        sent = {"X-Agentcade-Token": token, **headers}
        return await http.post(pages.url + path.lstrip("/"), json=body, headers=sent, timeout=30)


def env_file(pages: Pages) -> Path:
    return pages.app.config_file


# ------------------------------------------------------------------ rules (pure)


def test_only_the_pages_own_host_and_origin_pass() -> None:
    ok = {"method": "GET", "origin": None, "token": None, "expected_token": "t", "port": 8790, "write": False}
    assert check_request(host="127.0.0.1:8790", **ok) is None  # type: ignore[arg-type]
    assert check_request(host="localhost:8790", **ok) is None  # type: ignore[arg-type]
    assert check_request(host="evil.example:8790", **ok).status == 403  # type: ignore[arg-type,union-attr]
    assert check_request(host="127.0.0.1:9999", **ok).status == 403  # type: ignore[arg-type,union-attr]
    assert check_request(host=None, **ok).status == 403  # type: ignore[arg-type,union-attr]
    assert check_origin("http://127.0.0.1:8790", 8790) is None
    assert check_origin("http://evil.example", 8790) is not None
    assert check_origin("null", 8790) is not None
    assert check_origin("https://127.0.0.1:8790", 8790) is not None


def test_a_write_needs_the_token() -> None:
    base = {"method": "POST", "host": "127.0.0.1:8790", "origin": "http://127.0.0.1:8790",
            "expected_token": "right", "port": 8790, "write": True}
    assert check_request(token="right", **base) is None  # type: ignore[arg-type]
    assert check_request(token="wrong", **base).status == 403  # type: ignore[arg-type,union-attr]
    assert check_request(token=None, **base).status == 403  # type: ignore[arg-type,union-attr]


# ------------------------------------------------------------------ over HTTP


async def test_a_foreign_host_is_refused_dns_rebinding(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    async with httpx.AsyncClient() as http:
        refused = await http.get(running.url + "settings", headers={"Host": f"evil.example:{running.port}"})
    assert refused.status_code == 403
    assert "agentcade-token" not in refused.text


async def test_a_write_from_another_origin_is_refused_and_nothing_is_written(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/settings", {"section": "model", "values": {"LLM_MODEL": "x"}},
                          Origin="http://evil.example")
    assert response.status_code == 403
    assert not env_file(running).exists()


async def test_a_write_without_the_token_is_refused(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    async with httpx.AsyncClient() as http:
        response = await http.post(running.url + "api/settings", json={"section": "model", "values": {}})
    assert response.status_code == 403
    assert not env_file(running).exists()


async def test_a_form_post_that_is_not_json_is_refused(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    async with httpx.AsyncClient() as http:
        token = token_of((await http.get(running.url)).text)
        response = await http.post(running.url + "api/settings", content=b"section=model",
                                   headers={"X-Agentcade-Token": token,
                                            "Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 415


async def test_a_body_over_the_limit_is_refused(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/settings", {"section": "model", "values": {"LLM_MODEL": "x" * 70_000}})
    assert response.status_code == 413
    assert not env_file(running).exists()


async def test_the_server_listens_on_loopback_only(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    assert running.url.startswith("http://127.0.0.1:")


# ------------------------------------------------------------------ writes


async def test_saving_the_model_settings_writes_the_env_file(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/settings", {
        "section": "model", "values": {"LLM_MODEL": "qwen-plus", "LLM_API_KEY": "sk-abcdef"}})
    assert response.status_code == 200, response.text
    assert read_dotenv(env_file(running)) == {"LLM_MODEL": "qwen-plus", "LLM_API_KEY": "sk-abcdef"}
    async with httpx.AsyncClient() as http:
        page = (await http.get(running.url + "settings")).text
    assert "sk-abcdef" not in page


async def test_a_bad_value_is_answered_by_field_and_nothing_is_written(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/settings", {
        "section": "model", "values": {"LLM_MODEL": "ok-model", "LLM_TIMEOUT": "soon"}})
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"LLM_TIMEOUT"}
    assert not env_file(running).exists()


async def test_the_model_test_sends_one_real_request(pages: tuple[Pages, Trace], fake: FakeOpenAI) -> None:
    running, _ = pages
    fake.push(Reply("你好"))
    response = await post(running, "/api/test-model", {
        "values": {"LLM_BASE_URL": fake.url, "LLM_API_KEY": "sk-test", "LLM_MODEL": "fake-model"}})
    assert response.status_code == 200
    assert response.json()["ok"] is True
    assert "你好" in response.json()["message"]
    assert len(fake.requests) == 1
    assert not env_file(running).exists()  # testing is not saving


async def test_the_model_test_says_when_no_model_is_configured(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/test-model", {"values": {}})
    assert response.json() == {"ok": False, "message": "还没有填大模型的地址或密钥，现在用的是离线模型。"}


# ------------------------------------------------------------------ games


async def test_install_then_uninstall_a_remote_game(pages: tuple[Pages, Trace], nursery: trio.Nursery) -> None:
    from agentcade.a2a.card import build_card
    from agentcade.wiring.games import open_local_game

    running, _ = pages
    registry = running.app.registry
    async with open_local_game(str(PROBE)) as local:
        listeners = await nursery.start(
            serve_a2a, local.host, lambda port: build_card(local.game.skill, f"http://127.0.0.1:{port}/"), 0
        )
        url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"
        preview = await post(running, "/api/games/preview", {"url": url})
        assert preview.json()["capability_words"] == ["控制灯光"]
        assert registry.get("probe") is None  # looking is not installing
        installed = await post(running, "/api/games/install", {"url": url})
        assert installed.status_code == 200, installed.text
        assert registry.get("probe") is not None
        games = json.loads((running.app.config_dir / "games.json").read_text(encoding="utf-8"))
        assert games == {"remote": [url], "confirmed": {url: {"version": "1.0.0", "capabilities": ["light"]}}}
        removed = await post(running, "/api/games/uninstall", {"url": url})
        assert removed.status_code == 200
        assert registry.get("probe") is None
        games = json.loads((running.app.config_dir / "games.json").read_text(encoding="utf-8"))
        assert games == {"remote": [], "confirmed": {}}


async def test_get_api_games_lists_the_installed_games_as_json(
    pages: tuple[Pages, Trace], nursery: trio.Nursery
) -> None:
    """Issue 23: it answered 500 ('InstalledGame' object has no attribute '__dict__')."""
    from agentcade.a2a.card import build_card
    from agentcade.wiring.games import open_local_game

    running, _ = pages
    async with open_local_game(str(PROBE)) as local:
        listeners = await nursery.start(
            serve_a2a, local.host, lambda port: build_card(local.game.skill, f"http://127.0.0.1:{port}/"), 0
        )
        url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"
        assert (await post(running, "/api/games/install", {"url": url})).status_code == 200
        async with httpx.AsyncClient() as http:
            response = await http.get(running.url + "api/games")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    [game] = response.json()["games"]
    assert game["id"] == "probe"
    assert game["location"] == url
    assert game["kind"] == "remote"
    assert game["removable"] is True
    assert game["capabilities"] == ["light"]


async def test_an_unreachable_address_is_answered_beside_the_field(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/games/install", {"url": "http://127.0.0.1:9/"})
    assert response.status_code == 400
    assert "没能安装" in response.json()["errors"]["url"]
    assert not (running.app.config_dir / "games.json").exists()


async def test_an_address_that_is_not_one_is_refused(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    response = await post(running, "/api/games/preview", {"url": "file:///etc/passwd"})
    assert response.status_code == 400
    assert "https://" in response.json()["errors"]["url"]


# ------------------------------------------------------------------ live


async def test_a_new_record_reaches_the_live_socket(pages: tuple[Pages, Trace]) -> None:
    running, trace = pages
    origin = f"http://127.0.0.1:{running.port}"
    async with open_websocket_url(f"ws://127.0.0.1:{running.port}/live",
                                  extra_headers=[(b"Origin", origin.encode())]) as ws:
        with request_scope("turn-1"):
            trace.record("user_input", text="玩猜谜语")
        with trio.fail_after(5):
            message = json.loads(await ws.get_message())
    assert (message["type"], message["request_id"], message["text"]) == ("user_input", "turn-1", "玩猜谜语")
    async with httpx.AsyncClient() as http:
        snapshot = (await http.get(running.url + "api/live")).json()
    assert snapshot["turns"][0]["id"] == "turn-1"


async def test_the_live_socket_outlives_the_request_timeout(
    pages: tuple[Pages, Trace], autojump_clock: trio.testing.MockClock
) -> None:
    """Only the upgrade request is timed; the socket then stays as long as the page."""
    running, trace = pages
    client, server = trio.testing.memory_stream_pair()
    origin = f"http://127.0.0.1:{running.port}"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(running.server.handle_connection, server)
        ws = await wrap_client_stream(
            nursery,
            client,  # type: ignore[arg-type]  # a memory stream stands in for the socket
            f"127.0.0.1:{running.port}",
            "/live",
            extra_headers=[(b"Origin", origin.encode())],
        )
        await trio.sleep(running.server.limits.request_timeout * 3)
        with request_scope("turn-2"):
            trace.record("user_input", text="还在吗")
        message = json.loads(await ws.get_message())
        assert message["text"] == "还在吗"
        await ws.aclose()
        nursery.cancel_scope.cancel()


async def test_a_live_socket_from_another_origin_is_refused(pages: tuple[Pages, Trace]) -> None:
    running, _ = pages
    with pytest.raises(HandshakeError):
        async with open_websocket_url(f"ws://127.0.0.1:{running.port}/live",
                                      extra_headers=[(b"Origin", b"http://evil.example")]):
            pass
    # trio-websocket 0.12 raises ConnectionRejected from its reader task and never closes the
    # refused connection's TCP stream. Collect that socket here with its ResourceWarning
    # ignored (warnings are errors), not in whichever later test the collector runs.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


async def test_a_game_reads_saved_settings_at_its_next_session_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcade.core.dotenv import write_dotenv
    from agentcade.core.settings import user_config_dir
    from agentcade.wiring.games import open_local_game

    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path / "home"))
    async with open_local_game(str(PROBE)) as local:
        assert local.host._make_agent().settings.llm.model == "fake-model"  # settings.yaml default
        write_dotenv(user_config_dir() / ".env", {"LLM_MODEL": "qwen-plus"})
        assert local.host._make_agent().settings.llm.model == "qwen-plus"
        write_dotenv(user_config_dir() / ".env", {"LLM_TIMEOUT": "-1"})  # unusable now
        assert local.host._make_agent().settings.llm.model == "qwen-plus"  # keeps the last good


def catalog_json(url: str, *, version: str = "1.0.0", reviewed: str = "1.0.0") -> dict[str, Any]:
    return {"version": 1, "games": [{
        "id": "probe", "name": "探针", "summary": "测试用的游戏", "url": url, "version": version,
        "author": "tests", "required_capabilities": ["light"], "reviewed_version": reviewed}]}


async def serve_probe(nursery: trio.Nursery, local: Any) -> str:
    from agentcade.a2a.card import build_card

    listeners = await nursery.start(
        serve_a2a, local.host, lambda port: build_card(local.game.skill, f"http://127.0.0.1:{port}/"), 0
    )
    return f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/"


async def test_a_version_the_catalog_did_not_review_is_flagged_before_install(
    pages: tuple[Pages, Trace], nursery: trio.Nursery, tmp_path: Path
) -> None:
    from agentcade.wiring.games import open_local_game

    running, _ = pages
    async with open_local_game(str(PROBE)) as local:
        url = await serve_probe(nursery, local)
        catalog = tmp_path / "catalog.json"
        catalog.write_text(json.dumps(catalog_json(url, reviewed="0.9.0")), encoding="utf-8")
        running.app.catalog_path = catalog
        warnings = (await post(running, "/api/games/preview", {"url": url})).json()["warnings"]
    assert "当前版本未经审核（游戏目录审核过的是 0.9.0 版）。" in warnings
    assert not any("不在游戏目录里" in w for w in warnings)


async def test_the_catalog_page_merges_the_shipped_file_and_the_catalog_url(
    pages: tuple[Pages, Trace], nursery: trio.Nursery, tmp_path: Path
) -> None:
    running, _ = pages
    body = json.dumps(catalog_json("https://probe.example/", version="1.1.0")).encode()

    async def one_response(stream: trio.SocketStream) -> None:
        await stream.receive_some(65536)
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
        await stream.send_all(head.encode() + body)
        await stream.aclose()

    listeners = await nursery.start(partial(trio.serve_tcp, one_response, 0, host="127.0.0.1"))
    running.app.catalog_url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/catalog.json"
    async with httpx.AsyncClient() as http:
        listed = (await http.get(running.url + "api/catalog", timeout=30)).json()
    by_id = {g["id"]: g for g in listed["games"]}
    assert "riddle_remote" in by_id  # games/catalog.json, shipped
    assert by_id["probe"]["reviewed"] is False  # 1.1.0 was not reviewed
    assert by_id["probe"]["capability_words"] == ["控制灯光"]
    assert listed["errors"] == []


async def test_while_a_game_lacks_a_required_setting_the_app_stays_on_the_settings_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    builtin = tmp_path / "builtin"
    shutil.copytree(PROBE, builtin / "probe", ignore=shutil.ignore_patterns("__pycache__"))
    (builtin / "probe" / "settings.yaml").write_text(
        "settings:\n  - key: WORDBOOK_URL\n    description: 题库的地址\n    required: true\n", encoding="utf-8"
    )
    trace = Trace()
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path / "home"))  # the game reads it too
    async with open_registry(builtin_dir=builtin, remote=[], trace=trace) as registry, serve_pages(
        registry=registry, trace=trace, port=0
    ) as running:
        assert registry.get("probe") is None
        async with httpx.AsyncClient() as http:
            first = await http.get(running.url)
            live = await http.get(running.url + "?live")
        assert (first.status_code, first.headers["location"]) == (303, "/settings")
        assert live.status_code == 200
        saved = await post(running, "/api/settings", {
            "section": "game-probe", "values": {"WORDBOOK_URL": "https://w.example/"}})
        assert saved.json()["started"] == ["探针"]
        assert registry.get("probe") is not None  # playable without a restart
        async with httpx.AsyncClient() as http:
            assert (await http.get(running.url)).status_code == 200


async def test_an_installed_game_that_does_not_answer_is_listed_and_can_be_uninstalled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcade.wiring.registry import installed_remote_games, remember_remote_game

    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path / "home"))
    gone = "http://127.0.0.1:9/"
    remember_remote_game(gone)
    empty = tmp_path / "builtin"
    empty.mkdir()
    trace = Trace()
    async with open_registry(builtin_dir=empty, trace=trace) as registry, serve_pages(
        registry=registry, trace=trace, port=0
    ) as running:
        async with httpx.AsyncClient() as http:
            page = (await http.get(running.url + "games")).text
        assert "现在打不开" in page
        assert f'data-action="uninstall" data-url="{gone}"' in page
        removed = await post(running, "/api/games/uninstall", {"url": gone})
        assert removed.status_code == 200
    assert installed_remote_games() == []
