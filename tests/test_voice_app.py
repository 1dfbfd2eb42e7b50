"""agentcade as a WatcheRobot Application: ``app.py`` started the way the Daemon starts it.

The Daemon's two Application channels are played by this test: the device channel is the
simulated robot (its ``/application/device`` path; no hello, as the real bridge), the
desktop channel a small WebSocket server that sends ``ctrl.microphone.close/open``. The
shutdown file ends the Application within the Daemon's 3 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import trio
from trio_websocket import WebSocketConnection, WebSocketRequest, serve_websocket

from agentcade.sim import SimDevice

ROOT = Path(__file__).resolve().parent.parent


def test_app_json_passes_the_sdks_check() -> None:
    done = subprocess.run(
        [shutil.which("watcherobot", path=str(Path(sys.executable).parent)) or "watcherobot",
         "app", "check", str(ROOT)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((ROOT / "app.json").read_text(encoding="utf-8"))
    from agentcade import __version__

    assert manifest["version"] == __version__


class Desktop:
    def __init__(self) -> None:
        self.ws: WebSocketConnection | None = None
        self.connected = trio.Event()

    async def handler(self, request: WebSocketRequest) -> None:
        self.ws = await request.accept()
        self.connected.set()
        await trio.sleep_forever()


async def _wait_for(device: SimDevice, type_: str, count: int) -> None:
    """Poll the device's log (the caller bounds it): wall-clock time, since the application
    under test is another process."""
    while sum(1 for t, _ in device.received if t == type_) < count:  # noqa: ASYNC110 - a poll of the log
        await trio.sleep(0.05)


async def test_the_application_honours_the_desktop_microphone_and_stops_on_the_shutdown_file(
    tmp_path: Path,
) -> None:
    device = SimDevice(audio_speed=40.0)
    desktop = Desktop()
    shutdown = tmp_path / "shutdown"
    async with trio.open_nursery() as nursery:
        url = await nursery.start(device.serve)
        server = await nursery.start(serve_websocket, desktop.handler, "127.0.0.1", 0, None)
        env = {
            **os.environ,
            "AGENTCADE_HOME": str(tmp_path),
            "WATCHER_APP_ID": "agentcade",
            "WATCHER_APP_RUN_CREDENTIAL": "run-credential-1234",
            "WATCHER_APP_DESKTOP_WS_URL": f"ws://127.0.0.1:{server.port}/application/desktop",
            "WATCHER_APP_DEVICE_WS_URL": f"{url}/application/device",
            "WATCHER_APP_SHUTDOWN_SIGNAL": str(shutdown),
            "ASR_PROVIDER": "openai",
            "ASR_BASE_URL": "http://127.0.0.1:9/v1",
            "ASR_API_KEY": "sk-never-printed",
            "TTS_PROVIDER": "openai",
            "TTS_BASE_URL": "http://127.0.0.1:9/v1",
            "AGENTCADE_PAGES_PORT": "0",
        }
        process = await trio.lowlevel.open_process(
            [sys.executable, str(ROOT / "app.py"), "--no-pages"], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        output = bytearray()

        async def read() -> None:
            assert process.stdout is not None
            async for chunk in process.stdout:
                output.extend(chunk)

        nursery.start_soon(read)
        try:
            with trio.fail_after(60):
                await _wait_for(device, "ctrl.microphone.open", 1)
                await desktop.connected.wait()
                assert desktop.ws is not None
                await desktop.ws.send_message(json.dumps({"type": "ctrl.microphone.close", "data": {}}))
                await _wait_for(device, "ctrl.microphone.close", 1)
                assert device.audio.microphone.open_session is None
                await desktop.ws.send_message(json.dumps({"type": "ctrl.microphone.open", "data": {}}))
                await _wait_for(device, "ctrl.microphone.open", 2)
            shutdown.write_text("stop", encoding="utf-8")
            started = trio.current_time()
            with trio.fail_after(10):
                code = await process.wait()
            took = trio.current_time() - started
        finally:
            if process.returncode is None:
                process.kill()
        nursery.cancel_scope.cancel()
    text = output.decode("utf-8", "replace")
    assert code == 0, text
    assert took < 3.0, text
    assert "Traceback" not in text
    assert "sk-never-printed" not in text
