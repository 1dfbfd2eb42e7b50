"""agentcade under the robot SDK's real Daemon, the simulated robot paired to it.

Each test gets its own private network namespace (the Daemon's pairing broadcasts UDP: it
never runs on this machine's network), HOME and ports: ``agentcade.testing.daemon``
starts ``watcherobot daemon start``, pairs the simulated robot with
``watcherobot robot pair``, and runs agentcade as the Daemon's Application
(``watcherobot app run .``) or as a desktop client (``agentcade run --robot ws://...``).
Without namespaces (not Linux, not root) the tests skip saying so, and fail in CI.

What agentcade did is read from its trace (``AGENTCADE_TRACE_FILE``, set by the harness)
and from the simulated robot.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
import trio

from agentcade.testing.daemon import DaemonHarness, open_daemon_harness
from agentcade.testing.fake_openai import FakeOpenAI, serve_fake_openai
from agentcade.testing.netns import open_private_network
from agentcade.testing.sim import SimDevice
from agentcade.voice.tts import EspeakSynthesizer
from tests.needs import need_private_network, need_program
from tests.processes import offline_env

LINE = "有什么游戏"
SPEED = 3.0
"""The simulated robot's speaker and microphone run this much faster than real time (the
Application does not know: the speaker paces it with credits, the microphone's packets
come sooner)."""


@pytest.fixture
async def daemon(tmp_path: Path, nursery: trio.Nursery) -> AsyncIterator[DaemonHarness]:
    """The Daemon with the simulated robot paired; agentcade's recogniser is an
    OpenAI-compatible server inside the namespace that hears :data:`LINE`."""
    need_private_network()
    need_program("espeak-ng", package="espeak-ng")
    async with open_private_network() as net:
        listener = await net.listen_tcp()
        fake: FakeOpenAI = await nursery.start(partial(serve_fake_openai, listeners=[listener]))
        fake.transcript = LINE
        env = offline_env(tmp_path / "agentcade", "ASR_", "TTS_", "VAD_")
        env.update({"ASR_PROVIDER": "openai", "ASR_BASE_URL": fake.url, "ASR_API_KEY": "sk-test"})
        device = SimDevice(audio_speed=SPEED)
        async with open_daemon_harness(tmp_path / "home", env, net=net, device=device) as harness:
            yield harness


async def _line() -> bytes:
    return await EspeakSynthesizer(rate=16000).synthesize(LINE)


async def _greeted(daemon: DaemonHarness) -> float:
    """Start the Application; seconds from ``app run`` to the greeting's first audio."""
    started = trio.current_time()
    await daemon.app_run()
    with trio.fail_after(60):
        await daemon.device.audio.wait_clips(1)
        clip = daemon.device.audio.clips[0]
        await daemon.device.audio.wait_sound(clip)
    assert clip.started is not None
    return clip.started - started


async def _heard_and_answered(daemon: DaemonHarness, pcm: bytes) -> None:
    """Say the line when the robot listens: it is recognised and the robot answers it."""
    heard = len(daemon.records("asr_final"))
    await daemon.wait_quiet()
    clips = len(daemon.device.audio.clips)
    await daemon.say(pcm)
    recognised = await daemon.wait_records("asr_final", heard + 1)
    assert recognised[-1]["text"] == LINE
    with trio.fail_after(30):
        await daemon.device.audio.wait_clips(clips + 1)


async def test_the_application_greets_on_the_robot_through_the_daemon(daemon: DaemonHarness) -> None:
    first_audio = await _greeted(daemon)
    greeting = (await daemon.wait_records("speech_text"))[0]["text"]
    assert "游戏" in greeting
    clip = daemon.device.audio.clips[0]
    with trio.fail_after(30):
        await clip.done.wait()
    assert clip.outcome == "complete"  # every byte arrived, the sha256 matched
    assert first_audio < 20
    print(f"app run -> greeting's first audio: {first_audio:.2f} s")


async def test_the_desktop_microphone_switch_pauses_and_resumes_listening(daemon: DaemonHarness) -> None:
    pcm = await _line()
    await _greeted(daemon)
    await daemon.wait_quiet()
    mic = daemon.device.audio.microphone
    async with daemon.desktop_socket() as desktop:
        closes = _count(daemon, "ctrl.microphone.close")
        await desktop.send_message(json.dumps({"type": "ctrl.microphone.close", "code": 0, "data": {}}))
        with trio.fail_after(10):
            while _count(daemon, "ctrl.microphone.close") == closes:
                await trio.sleep(0.05)
        await trio.sleep(2)
        assert mic.open_session is None  # paused: nothing is heard
        opens = _count(daemon, "ctrl.microphone.open")
        await desktop.send_message(json.dumps({"type": "ctrl.microphone.open", "code": 0, "data": {}}))
        with trio.fail_after(10):
            while _count(daemon, "ctrl.microphone.open") == opens:
                await trio.sleep(0.05)
    await _heard_and_answered(daemon, pcm)


async def test_the_robot_dropping_behind_the_live_daemon_is_heard_again_when_it_returns(
    daemon: DaemonHarness,
) -> None:
    pcm = await _line()
    await _greeted(daemon)
    await daemon.wait_quiet()
    daemon.robot.drop()
    await daemon.wait_device("reconnecting")
    await trio.sleep(3)
    daemon.robot.come_back()
    await daemon.wait_device("connected")
    assert daemon.robot.hellos == 2  # the same credentials, no new pairing
    await _heard_and_answered(daemon, pcm)


async def test_a_daemon_restart_reunites_with_the_robot_and_the_desktop_client_hears_again(
    daemon: DaemonHarness,
) -> None:
    """Restarted while the robot listens (restarted while it speaks, the desktop client
    ends: see the note of issue 37)."""
    pcm = await _line()
    desktop = await daemon.desktop("--no-pages")
    await desktop.expect("小懒在听")
    await _heard_and_answered(daemon, pcm)
    await daemon.wait_quiet()
    opens = _count(daemon, "ctrl.microphone.open")
    await daemon.restart_daemon()
    await daemon.wait_device("connected")
    assert daemon.robot.reunites == 1  # answered the challenge; nobody paired it again
    back = await daemon.wait_records("robot_back")
    with trio.fail_after(10):
        while _count(daemon, "ctrl.microphone.open") == opens:  # listening again
            await trio.sleep(0.05)
    await _heard_and_answered(daemon, pcm)
    print(f"Daemon restart: the desktop client was away {back[0]['ms'] / 1000:.1f} s")


async def test_app_stop_ends_the_application_within_the_daemons_3_s_with_the_robot_reset(
    daemon: DaemonHarness,
) -> None:
    await _greeted(daemon)
    await daemon.wait_quiet()
    seconds = await daemon.app_stop()
    status = (await daemon.control("GET", "/daemon/status"))["application"]
    assert (status["state"], status["last_exit_code"]) == ("ended", 0)  # it left; not killed
    asked, exited = _stop_times(daemon)
    assert exited - asked < 3.0
    device = daemon.device
    assert device.audio.playing is None
    assert device.audio.microphone.open_session is None
    assert device.state.lights.on is False
    print(f"app stop: {exited - asked:.2f} s from the Daemon's request to the exit; "
          f"{seconds:.2f} s for the whole watcherobot app stop")


async def test_another_application_holding_the_robot_is_named_and_agentcade_does_not_start(
    daemon: DaemonHarness, tmp_path: Path,
) -> None:
    other = _holding_app(tmp_path / "other")
    await daemon.app_run(other)
    with trio.fail_after(30):
        while (await daemon.control("GET", "/daemon/status"))["application"]["state"] != "running":
            await trio.sleep(0.1)
    desktop = await daemon.desktop("--no-pages")
    assert await desktop.wait() == 3
    assert re.search(r"机器人正被应用 holder-app 占用", desktop.output), desktop.output
    assert daemon.device.audio.clips == []


def _count(daemon: DaemonHarness, command: str) -> int:
    return sum(1 for kind, _ in daemon.device.received if kind == command)


def _stop_times(daemon: DaemonHarness) -> tuple[float, float]:
    """When the Daemon asked the Application to stop and when it had stopped (its own log)."""
    log = daemon.home / ".watcherobot" / "runtime" / "logs" / "daemon.jsonl"
    stamps: dict[str, float] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for event in ("Application stop requested", "Application stopped"):
            if str(record.get("message", "")).startswith(event):
                stamps[event] = record["timestamp_ms"] / 1000
    return stamps["Application stop requested"], stamps["Application stopped"]


def _holding_app(folder: Path) -> Path:
    """A minimal other Application: it connects to the robot and waits to be stopped."""
    folder.mkdir(parents=True)
    (folder / "app.json").write_text(json.dumps({
        "schema_version": 2, "id": "holder-app", "name": "holder", "version": "0.1.0",
        "requires_watcherobot": ">=0.1.11,<0.2", "dependencies": [],
        "supported_host_platforms": ["windows", "macos"],
    }), encoding="utf-8")
    (folder / "app.py").write_text(
        "import os, time\n"
        "from pathlib import Path\n"
        "from watcherobot.application.transport import DaemonApplicationTransport\n"
        "transport = DaemonApplicationTransport()\n"
        "transport.start()\n"
        "stop = Path(os.environ['WATCHER_APP_SHUTDOWN_SIGNAL'])\n"
        "while not stop.exists():\n"
        "    time.sleep(0.1)\n"
        "transport.close()\n",
        encoding="utf-8",
    )
    return folder

