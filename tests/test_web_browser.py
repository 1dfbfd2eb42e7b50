"""The local pages in a real browser, against a real ``agentcade play`` (and ``serve``).

Each test starts ``agentcade play`` as a process with its pages on a free port, opens them
in headless chromium (``tests/browser.py``) and checks what a family would see and what
lands on disk. Screenshots of every page are written for a person to look at.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from agentcade.core.dotenv import read_dotenv
from agentcade.testing.process import AgentcadeProcess
from tests.browser import in_browser, shoot
from tests.processes import offline_env

PROBE = Path(__file__).parent / "data" / "games" / "probe"

SETTINGS_YAML = """\
settings:
  - key: ROUNDS
    description: 一局猜几题
    default: "3"
  - key: WORDBOOK_URL
    description: 题库的地址
    required: true
  - key: WORDBOOK_KEY
    description: 题库的密钥
    secret: true
"""

CONFIG_PY = """\
from agentcade.core.settings import AgentSettings


class Settings(AgentSettings):
    rounds: int = 3
    wordbook_url: str = ""
    wordbook_key: str | None = None
"""


@pytest.fixture
def game_with_settings(tmp_path: Path) -> Path:
    """The probe game with settings of its own, one of them required and unset."""
    folder = tmp_path / "probe_game"
    shutil.copytree(PROBE, folder, ignore=shutil.ignore_patterns("__pycache__", ".env"))
    (folder / "settings.yaml").write_text(SETTINGS_YAML, encoding="utf-8")
    (folder / "config.py").write_text(CONFIG_PY, encoding="utf-8")
    return folder


async def start_play(nursery: trio.Nursery, home: Path, *args: str) -> tuple[AgentcadeProcess, str]:
    play = await AgentcadeProcess.start(nursery, offline_env(home), "play", *args)
    found = await play.expect(r"实时面板：(http://127\.0\.0\.1:\d+/)")
    await play.expect("小懒在听")
    return play, found.group(1)


async def test_saving_a_game_setting_writes_the_env_file_and_starts_the_game(
    nursery: trio.Nursery, tmp_path: Path, game_with_settings: Path
) -> None:
    play, url = await start_play(nursery, tmp_path / "home", "--game", str(game_with_settings))
    env_file = tmp_path / "home" / "config" / ".env"
    assert "有游戏还缺设置" in play.output

    def session(page: Any) -> dict[str, str]:
        page.goto(url)  # the app stays on the settings page while a game lacks a setting
        page.wait_for_url(url + "settings")
        assert "还缺少必填的设置：探针" in page.inner_text(".banner")
        page.goto(url + "?live")  # the live view is still there, pointing back to settings
        assert "还缺少必填的设置" in page.inner_text(".banner")
        page.click(".banner a")
        page.wait_for_url(url + "settings")
        section = page.locator("form[data-section='game-probe_game']")
        assert "还没有填" in section.inner_text()
        shoot(page, "settings")
        # A bad value: a message beside its field, nothing written.
        section.locator("input[name=ROUNDS]").fill("三")
        section.locator("input[name=WORDBOOK_URL]").fill("https://words.example/api")
        section.locator("button[type=submit]").click()
        error = section.locator(".field[data-key=ROUNDS] .error")
        error.wait_for(state="visible")
        assert "整数" in error.inner_text()
        shoot(page, "settings-error")
        assert not env_file.exists()
        # Corrected: saved, and the game can be played without a restart.
        section.locator("input[name=ROUNDS]").fill("5")
        section.locator("input[name=WORDBOOK_KEY]").fill("key-123456")
        section.locator("button[type=submit]").click()
        status = section.locator(".status.ok")
        status.wait_for()
        said = status.inner_text()
        assert "已保存" in said
        assert "探针" in said
        page.reload()
        secret = page.locator("form[data-section='game-probe_game'] input[name=WORDBOOK_KEY]")
        assert secret.input_value() == ""  # a secret is never sent back...
        assert "已设置" in (secret.get_attribute("placeholder") or "")  # ...only that it is set
        assert "key-123456" not in page.content()
        return read_dotenv(env_file)

    saved = await in_browser(session)
    assert saved == {"ROUNDS": "5", "WORDBOOK_URL": "https://words.example/api", "WORDBOOK_KEY": "key-123456"}
    mark = len(play.output)
    await play.say("玩探针")
    await play.expect("开局口令", after=mark)
    await play.stop()


async def test_a_remote_game_installed_in_the_page_is_played_without_a_restart(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    serve = await AgentcadeProcess.start(
        nursery, offline_env(tmp_path / "server", "PUBLIC_URL", "SPACE_HOST"),
        "serve", str(PROBE), "--port", "0", "--host", "127.0.0.1",
    )
    game_url = (await serve.expect(r"(http://127\.0\.0\.1:\d+/) ")).group(1)
    play, url = await start_play(nursery, tmp_path / "home")
    assert "探针" not in play.output

    def session(page: Any) -> str:
        page.goto(url + "settings")  # the guide: paste it in the settings page's 游戏 card
        page.fill("#install-url", game_url)
        page.click("#install-form button[type=submit]")
        preview = page.locator("#preview")
        preview.wait_for()
        text = preview.inner_text()
        assert "探针" in text
        assert "控制灯光" in text  # capabilities in words a family understands
        assert "作者：tests" in text
        assert "没有经过审核" in text  # not in the catalog
        shoot(page, "games-confirm")
        page.click("[data-action=confirm-install]")
        page.locator("#preview .status.ok").wait_for()
        said = page.inner_text("#preview .status")
        page.goto(url + "games")
        probe = page.locator("li.game[data-id=probe]")
        assert "远程" in probe.inner_text()
        assert "卸载" in probe.inner_text()
        shoot(page, "games")
        return said

    said = await in_browser(session)
    assert "已安装“探针”" in said
    games = (tmp_path / "home" / "config" / "games.json").read_text(encoding="utf-8")
    assert game_url in games
    mark = len(play.output)
    await play.say("玩探针")
    await play.expect("开局口令", after=mark)
    await play.stop()
    await serve.stop()


async def test_a_new_turn_appears_in_the_live_view(nursery: trio.Nursery, tmp_path: Path) -> None:
    play, url = await start_play(nursery, tmp_path / "home", "--robot", "sim")

    def session(page: Any) -> tuple[str, str]:
        page.goto(url)
        page.locator("#live-status.ok").wait_for()
        trio.from_thread.run(play.say, "玩猜谜语")
        first = page.locator("article.turn", has_text="玩猜谜语")
        first.locator("li.spoken").first.wait_for()
        trio.from_thread.run(play.say, "我猜是水")  # a wrong guess: the robot shakes its head
        guess = page.locator("article.turn", has_text="我猜是水")
        guess.locator("li.robot").first.wait_for()
        page.wait_for_timeout(500)
        shoot(page, "live")
        return str(first.inner_text()), str(guess.inner_text())

    first, guess = await in_browser(session)
    assert "听到" in first
    assert "开始游戏" in first
    assert "说出来" in first
    assert re.search(r"用时 \d+\.\d\d 秒", first)
    assert "发给游戏" in guess
    assert "游戏回答" in guess
    assert "机器人" in guess
    assert "motion.move_to" in guess
    await play.stop()


_DRAWN = """() => {
  const words = [...document.querySelectorAll("article.turn li.shown .words")].map((e) => e.textContent);
  const last = words.reverse().find((t) => /画第 \\d+ 笔，共 \\d+ 笔/.test(t));
  if (!last) return false;
  const [, k, n] = last.match(/画第 (\\d+) 笔，共 (\\d+) 笔/);
  return k === n;
}"""


async def test_after_a_draw_guess_turn_the_live_view_shows_the_drawing(nursery: trio.Nursery, tmp_path: Path) -> None:
    """Issue 23: the live view was a log (``custom_vector_path='0102…'``); now the robot's
    screen is a picture, drawn step by step, with the raw record one click away."""
    play, url = await start_play(nursery, tmp_path / "home", "--robot", "sim")

    def session(page: Any) -> tuple[str, int, int, str]:
        page.goto(url)
        page.locator("#live-status.ok").wait_for()
        trio.from_thread.run(play.say, "玩你画我猜")
        turn = page.locator("article.turn", has_text="玩你画我猜")
        turn.locator("li.shown figure.screen svg").first.wait_for(timeout=60_000)
        page.wait_for_function(_DRAWN, timeout=60_000)
        seen = -1
        while seen != (now := turn.locator("li.shown figure.screen").count()):  # drawn to the end
            seen = now
            page.wait_for_timeout(1500)  # a step every 0.4 s
        shoot(page, "live-drawing")
        pictures = turn.locator("li.shown figure.screen svg").count()
        last = str(turn.locator("li.shown:not(.earlier) figure.screen").last.inner_html())
        strokes = last.count("<polyline") + last.count('fill="#fff"')
        turn.locator("button.toggle").click()
        raw = str(turn.locator("li.shown .raw").first.inner_text())
        return str(turn.inner_text()), pictures, strokes, raw

    text, pictures, strokes, raw = await in_browser(session)
    drawn = re.findall(r"画第 (\d+) 笔，共 (\d+) 笔", text)
    assert drawn, text
    total = int(drawn[-1][1])
    assert pictures >= total  # every step is a picture
    assert strokes == total, text
    assert "expression_runtime" in raw  # the raw record, one click away
    await play.stop()


EVIL_PAGE = """<!doctype html><meta charset="utf-8"><title>evil</title><script>
async function attack(target) {
  const out = {};
  try {
    const r = await fetch(target + "api/settings", {method: "POST",
      headers: {"Content-Type": "application/json", "X-Agentcade-Token": "guess"},
      body: JSON.stringify({section: "model", values: {LLM_MODEL: "evil"}})});
    out.fetch = r.status;
  } catch (e) { out.fetch = "blocked"; }
  try {
    await fetch(target + "api/settings", {method: "POST", mode: "no-cors",
      body: JSON.stringify({section: "model", values: {LLM_MODEL: "evil"}})});
    out.simple = "sent";
  } catch (e) { out.simple = "blocked"; }
  out.ws = await new Promise((resolve) => {
    const ws = new WebSocket(target.replace("http", "ws") + "live");
    ws.onopen = () => resolve("open");
    ws.onerror = () => resolve("refused");
  });
  return out;
}
</script>"""


async def test_a_page_from_another_origin_is_refused(nursery: trio.Nursery, tmp_path: Path) -> None:
    play, url = await start_play(nursery, tmp_path / "home")
    site = tmp_path / "evil"
    site.mkdir()
    (site / "index.html").write_text(EVIL_PAGE, encoding="utf-8")
    evil = await trio.lowlevel.open_process(
        [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        out = b""
        assert evil.stdout is not None
        with trio.fail_after(15):
            while not (found := re.search(rb"port (\d+)", out)):
                out += await evil.stdout.receive_some()
        evil_url = f"http://127.0.0.1:{int(found.group(1))}/"

        def session(page: Any) -> dict[str, str]:
            page.goto(evil_url)
            result: dict[str, str] = page.evaluate("(target) => attack(target)", url)
            return result

        result = await in_browser(session)
    finally:
        evil.kill()
        await evil.wait()
    assert result == {"fetch": "blocked", "simple": "sent", "ws": "refused"}
    assert not (tmp_path / "home" / "config" / ".env").exists()  # nothing was written
    await play.stop()
