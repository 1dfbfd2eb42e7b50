"""``agentcade serve``: the card URL, serving a game folder, and a clean shutdown."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from agentcade.a2a.client import A2AClient
from agentcade.core.protocol import GameInput
from agentcade.wiring.serve import public_url
from tests.processes import offline_env

PROBE = Path(__file__).parent / "data" / "games" / "probe"


def test_public_url_prefers_the_flag_then_public_url_then_space_host() -> None:
    env = {"PUBLIC_URL": "https://game.example.org", "SPACE_HOST": "me-riddle.hf.space"}
    assert public_url("https://flag.example/", env, "0.0.0.0", 7860) == "https://flag.example/"
    assert public_url(None, env, "0.0.0.0", 7860) == "https://game.example.org/"
    assert public_url(None, {"SPACE_HOST": "me-riddle.hf.space"}, "0.0.0.0", 7860) == (
        "https://me-riddle.hf.space/"
    )
    assert public_url(None, {}, "0.0.0.0", 7860) == "http://127.0.0.1:7860/"
    assert public_url(None, {}, "192.0.2.7", 80) == "http://192.0.2.7:80/"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
async def test_shutdown_ends_every_session_and_exits_cleanly(tmp_path: Path, sig: int) -> None:
    env = offline_env(tmp_path, "PUBLIC_URL", "SPACE_HOST")
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "agentcade", "serve", str(PROBE), "--port", "0", "--host", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None
    out = b""
    try:
        with trio.fail_after(30):
            while b"\n" not in out:
                out += await proc.stdout.receive_some()
        port = int(re.search(rb"127\.0\.0\.1:(\d+)/ ", out).group(1))  # type: ignore[union-attr]
        client = A2AClient()
        url = f"http://127.0.0.1:{port}/"
        _, card = await client.fetch_card(url)
        assert card.game_id == "probe"
        for context in ("a", "b"):
            replies = await client.send(url, context, GameInput(kind="start", text="开始"))
            assert replies[-1].session == "active"
        proc.send_signal(sig)
        with trio.fail_after(15):
            while chunk := await proc.stdout.receive_some():
                out += chunk
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert "正在退出：结束 2 局。" in out.decode()
