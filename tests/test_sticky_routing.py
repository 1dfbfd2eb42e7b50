"""Sticky routing: two ``agentcade serve`` processes behind nginx, hashing X-A2A-Context-Id.

The recipe under test is the riddle template's ``deploy/nginx-sticky.conf``, used as
shipped except for the addresses: the two backends' ports and a listen address on
127.0.0.1. nginx runs in the foreground from a temporary prefix (its own pid file, logs and
temp folders), so it needs no root; as root (CI) its workers stay root so they can use
the temporary folders. Which backend served a request is read from nginx's access log.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from agentcade.a2a.client import A2AClient, GameRemoteError
from agentcade.core.protocol import GameInput
from agentcade.game.host import NO_SESSION
from agentcade.testing.process import AgentcadeProcess
from tests.a2a_peers import free_port
from tests.needs import need_program
from tests.processes import offline_env

ROOT = Path(__file__).resolve().parents[1]
RIDDLE = ROOT / "games" / "riddle"
RECIPE = RIDDLE / "deploy" / "nginx-sticky.conf"
SESSIONS = 6



def _nginx() -> str:
    # /usr/sbin is not on every user's PATH.
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    return found or need_program("nginx", package="nginx-light")


def nginx_conf(prefix: Path, listen: int, backends: tuple[int, int]) -> str:
    """A whole nginx.conf around the shipped recipe, everything under ``prefix``."""
    recipe = RECIPE.read_text(encoding="utf-8")
    for shipped, port in zip(("127.0.0.1:7861", "127.0.0.1:7862"), backends, strict=True):
        assert shipped in recipe, f"{RECIPE} no longer names {shipped}"
        recipe = recipe.replace(shipped, f"127.0.0.1:{port}")
    assert "listen 80;" in recipe
    recipe = recipe.replace("listen 80;", f"listen 127.0.0.1:{listen};")
    temp = "\n".join(
        f"    {kind}_temp_path {prefix / kind};" for kind in ("client_body", "proxy")
    )
    user = "user root;\n" if hasattr(os, "geteuid") and os.geteuid() == 0 else ""
    return f"""{user}worker_processes 1;
daemon off;
pid {prefix / "nginx.pid"};
error_log {prefix / "error.log"} warn;
events {{ worker_connections 64; }}
http {{
{temp}
    log_format sticky '$http_x_a2a_context_id $upstream_addr $status';
    access_log {prefix / "access.log"} sticky;
{recipe}
}}
"""


class Stack:
    """nginx on ``url`` in front of two ``serve`` processes (by port)."""

    def __init__(self, url: str, backends: dict[int, AgentcadeProcess], log: Path) -> None:
        self.url = url
        self.backends = backends
        self.log = log

    async def upstreams(self, context_id: str, count: int) -> list[str]:
        """The ``$upstream_addr`` of the ``count`` requests of one session, in order.

        nginx writes a request's log line just after the reply's last byte, so a line may
        trail the reply the client already has: wait for it.
        """
        for _ in range(500):  # 10 s at most
            if len(found := self._logged(context_id)) >= count:
                break
            await trio.sleep(0.02)
        assert len(found) == count, self.log.read_text(encoding="utf-8")
        return found

    def _logged(self, context_id: str) -> list[str]:
        lines = self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []
        return [
            line.split(" ", 1)[1].rsplit(" ", 1)[0]
            for line in lines
            if line.startswith(context_id + " ")
        ]


@pytest.fixture
async def stack(nursery: trio.Nursery, tmp_path: Path) -> AsyncIterator[Stack]:
    nginx = _nginx()
    env = offline_env(tmp_path / "home")
    ports = (free_port(), free_port())
    backends = {
        port: await AgentcadeProcess.start(
            nursery, env, "serve", str(RIDDLE), "--port", str(port), "--host", "127.0.0.1"
        )
        for port in ports
    }
    for proc in backends.values():
        await proc.expect("名片地址", limit=60)
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    listen = free_port()
    (prefix / "nginx.conf").write_text(nginx_conf(prefix, listen, ports), encoding="utf-8")
    proxy = await trio.lowlevel.open_process(
        [nginx, "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(prefix / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{listen}/"
        with trio.fail_after(20):
            while True:
                try:
                    await A2AClient().fetch_card(url)
                    break
                except GameRemoteError:
                    if proxy.poll() is not None:
                        log = (prefix / "error.log").read_text(encoding="utf-8")
                        raise AssertionError(f"nginx exited ({proxy.returncode}):\n{log}") from None
                    await trio.sleep(0.05)  # wall clock: nginx is another process
        yield Stack(url, backends, prefix / "access.log")
    finally:
        proxy.terminate()
        with trio.move_on_after(10):
            await proxy.wait()
        if proxy.poll() is None:
            proxy.kill()
        for proc in backends.values():
            if proc.proc.poll() is None:
                proc.proc.terminate()
            await proc.stop()


async def _play_a_bit(client: A2AClient, url: str, context_id: str) -> None:
    for game_input in (
        GameInput(kind="start", text="来猜谜语"),
        GameInput(kind="message", text="我猜是水"),
        GameInput(kind="message", text="给个提示"),
    ):
        with trio.fail_after(60):
            replies = await client.send(url, context_id, game_input)
        assert replies[-1].session == "active", replies


async def test_every_request_of_a_session_reaches_the_same_backend(stack: Stack) -> None:
    client = A2AClient()
    _raw, card = await client.fetch_card(stack.url)
    for i in range(SESSIONS):
        await _play_a_bit(client, stack.url, f"ctx-sticky-{i}")
    used = set()
    for i in range(SESSIONS):
        upstreams = await stack.upstreams(f"ctx-sticky-{i}", 3)
        assert len(set(upstreams)) == 1, f"session {i} moved: {upstreams}"
        used.add(upstreams[0])
    assert used <= {f"127.0.0.1:{port}" for port in stack.backends}
    assert card.game_id == "riddle"


async def test_when_the_backend_dies_the_next_request_hears_the_round_has_ended(
    stack: Stack,
) -> None:
    client = A2AClient()
    await _play_a_bit(client, stack.url, "ctx-doomed")
    (served,) = set(await stack.upstreams("ctx-doomed", 3))
    dead = stack.backends[int(served.rsplit(":", 1)[1])]
    dead.proc.kill()
    await dead.proc.wait()

    with trio.fail_after(15):  # not a hang: the other backend answers at once
        replies = await client.send(
            stack.url, "ctx-doomed", GameInput(kind="message", text="我猜是雪")
        )
    assert replies[-1].text == NO_SESSION
    assert replies[-1].session == "ended"
    (other,) = {f"127.0.0.1:{port}" for port in stack.backends} - {served}
    last = (await stack.upstreams("ctx-doomed", 4))[-1]
    assert last.endswith(other), f"the last request went to {last}, not {other}"
