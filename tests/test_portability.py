"""Ready for Windows and macOS (issue 24): input encodings, TLS, folders, no Linux-only calls.

The desktop CI (``.github/workflows/desktop.yml``) runs the whole suite on Windows and
macOS; here, on Linux, what those machines would do differently is simulated: a console
that decodes stdin as GBK (``PYTHONIOENCODING=gbk``, a Chinese Windows), a trust store that
holds our own test CA, and a scan of the source for calls that do not exist there.
"""

from __future__ import annotations

import ast
import io
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trustme
import truststore

from agentcade.a2a.card import build_card
from agentcade.a2a.client import A2AClient, GameRemoteError
from agentcade.a2a.server import A2AServer
from agentcade.commands.chat import LineReader
from agentcade.core import settings as settings_mod
from agentcade.core.protocol import GameInput, GameReply
from agentcade.core.settings import user_config_dir
from agentcade.core.tls import client_context
from agentcade.llm import client as llm_client
from tests.a2a_peers import FakeSkill

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "有什么游戏\r\n玩猜谜语\r\n是水吗\r\n"


# -- piped input is UTF-8 whatever the console's code page ----------------------------------


def gbk_stdin(data: bytes) -> io.TextIOWrapper:
    """A piped stdin as a Chinese Windows opens it: decoded as GBK."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="gbk")


async def test_piped_lines_are_read_as_utf8_with_a_bom_under_a_gbk_console() -> None:
    reader = LineReader(gbk_stdin(("\ufeff" + SCENARIO).encode("utf-8")))
    lines = [await reader.read() for _ in range(4)]
    assert lines == ["有什么游戏\n", "玩猜谜语\n", "是水吗\n", None]


async def test_bytes_that_are_not_utf8_become_replacement_characters_not_an_error() -> None:
    reader = LineReader(gbk_stdin("猜".encode("gbk") + b"\n"))
    line = await reader.read()
    assert line is not None
    assert "\ufffd" in line


async def run_with_console(encoding: str, *args: str, stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(90):
        return await trio.run_process(
            [sys.executable, "-m", "agentcade", *args],
            stdin=stdin,
            capture_stdout=True,
            capture_stderr=True,
            env={**env, "PYTHONIOENCODING": encoding},
            check=False,
        )


async def test_play_plays_a_utf8_scenario_file_as_written_under_a_gbk_console(cli_env, tmp_path) -> None:
    scenario = tmp_path / "scenario.txt"
    scenario.write_bytes(("\ufeff" + SCENARIO).encode("utf-8"))  # as Notepad saves it
    done = await run_with_console("gbk", "play", "--no-pages", stdin=scenario.read_bytes(), env=cli_env)
    out = done.stdout.decode("gbk")
    assert done.returncode == 0, done.stderr.decode("gbk", errors="replace")
    assert "你：玩猜谜语" in out
    speech = [line for line in out.splitlines() if line.startswith("小懒：")]
    assert speech[0].startswith("小懒：我会玩")
    assert speech[2] == "小懒：不对哦，再想想，也可以要个提示。"
    assert "Traceback" not in done.stderr.decode("gbk", errors="replace")


async def test_chat_reads_a_utf8_scenario_under_a_gbk_console(cli_env) -> None:
    lines = "\ufeff我猜是水\n/quit\n".encode()
    done = await run_with_console("gbk", "chat", "riddle", stdin=lines, env=cli_env)
    out = done.stdout.decode("gbk")
    assert done.returncode == 0, done.stderr.decode("gbk", errors="replace")
    assert "你：我猜是水" in out


async def test_check_prints_under_a_console_that_cannot_show_its_marks(cli_env) -> None:
    """GBK has no ✓: the report still prints (as ?), it does not fail with a traceback."""
    done = await run_with_console("gbk", "check", "riddle", stdin=b"", env=cli_env)
    err = done.stderr.decode("gbk", errors="replace")
    assert "Traceback" not in err
    assert done.returncode == 0, err
    assert "PASSED" in done.stdout.decode("gbk")


# -- TLS through the operating system's trust store -----------------------------------------


def test_every_client_uses_the_os_trust_store() -> None:
    assert isinstance(client_context(), truststore.SSLContext)
    assert client_context().verify_mode is ssl.CERT_REQUIRED
    assert client_context().check_hostname


async def test_the_model_client_verifies_with_the_os_trust_store(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[ssl.SSLContext] = []

    def recorded() -> ssl.SSLContext:
        made.append(client_context())
        return made[-1]

    monkeypatch.setattr(llm_client, "client_context", recorded)
    lease = llm_client._CLIENTS.acquire(("https://models.example/v1", "sk-x", 5.0, 0))
    try:
        assert len(made) == 1
        assert isinstance(made[0], truststore.SSLContext)
    finally:
        await llm_client._CLIENTS.release(lease)


class Hello:
    async def handle(self, context_id: str, game_input: GameInput, emit: object) -> None:
        await emit(GameReply(text="你好，这里是加密的游戏。"), final=True)  # type: ignore[operator]


async def serve_https(nursery: trio.Nursery, ca: trustme.CA) -> str:
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(server_ctx)
    server = A2AServer(Hello(), {})
    listeners = await nursery.start(trio.serve_ssl_over_tcp, server.handle_connection, 0, server_ctx)
    port = listeners[0].transport_listener.socket.getsockname()[1]
    url = f"https://127.0.0.1:{port}/"
    server.set_card(build_card(FakeSkill(), url))
    return url


LINUX_TRUST_STORE = pytest.mark.skipif(
    sys.platform != "linux",
    reason="adds a test CA through SSL_CERT_FILE, which is the OS trust store only on Linux "
    "(Windows and macOS ask their own stores, where a test cannot add a CA)",
)


@LINUX_TRUST_STORE
async def test_a_remote_game_over_https_is_trusted_when_the_os_trusts_its_ca(
    nursery: trio.Nursery, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))  # the Linux trust store
    url = await serve_https(nursery, ca)
    client = A2AClient(reply_timeout=10)
    _raw, card = await client.fetch_card(url)
    assert card.game_id == "echo"
    async with client.stream(card.url, "ctx", GameInput(kind="start", text="开始")) as replies:
        said = [reply.text async for reply, _final in replies]
    assert said == ["你好，这里是加密的游戏。"]


@LINUX_TRUST_STORE
async def test_a_certificate_the_os_does_not_trust_is_one_clear_error(
    nursery: trio.Nursery, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = trustme.CA()
    other.cert_pem.write_to_path(str(tmp_path / "other.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "other.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))  # nothing else trusted either
    url = await serve_https(nursery, trustme.CA())
    with pytest.raises(GameRemoteError) as caught:
        await A2AClient(reply_timeout=10).fetch_card(url)
    assert caught.value.kind == "network"
    assert "TLS" in str(caught.value)


# -- config and data folders through platformdirs --------------------------------------------


def test_the_config_folder_is_platformdirs_one_and_agentcade_home_still_wins(tmp_path: Path) -> None:
    import platformdirs

    assert user_config_dir({}) == platformdirs.user_config_path("agentcade", appauthor=False, roaming=True) / "config"
    assert user_config_dir({"AGENTCADE_HOME": str(tmp_path)}) == tmp_path / "config"
    if sys.platform not in ("win32", "darwin"):
        assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "agentcade" / "config"


def test_a_folder_only_at_the_old_place_keeps_being_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where platformdirs' folder differs from the hand-computed one (a redirected profile),
    a family's existing settings are not lost."""
    old, new = tmp_path / "old" / "agentcade", tmp_path / "new" / "agentcade"
    (old / "config").mkdir(parents=True)
    monkeypatch.setattr(settings_mod, "_legacy_root_dir", lambda environ: old)
    monkeypatch.setattr("agentcade.core.settings.platformdirs.user_config_path", lambda *a, **k: new)
    assert user_config_dir({}) == old / "config"
    (new / "config").mkdir(parents=True)
    assert user_config_dir({}) == new / "config"


# -- no Linux-only calls in agentcade/ --------------------------------------------------------

UNIX_ONLY_ATTRS = {
    "os": {"fork", "forkpty", "setsid", "setpgrp", "killpg", "getpgid", "getuid", "geteuid", "getgid",
           "getegid", "WNOHANG", "wait3", "wait4", "mkfifo", "sched_getaffinity"},
    "signal": {"SIGTERM", "SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGCHLD",
               "SIGPIPE", "alarm", "setitimer", "pause", "pthread_kill"},
}
UNIX_ONLY_MODULES = {"fcntl", "termios", "pwd", "grp", "resource", "tty", "pty", "posix", "crypt"}
UNIX_PATHS = ("/proc", "/tmp", "/dev/shm", "/var/run", "/run/")
GUARD_WORDS = ("sys.platform", "os.name", "platform.system", "hasattr(", "getattr(")


class _Scan(ast.NodeVisitor):
    """Linux-only calls outside a branch that has a Windows path (an ``if`` or conditional
    on ``sys.platform``/``os.name``/``hasattr``, or a ``try`` catching their absence)."""

    def __init__(self, source: str, where: str) -> None:
        self.source = source
        self.where = where
        self.guarded = 0
        self.problems: list[str] = []

    def _is_guard(self, test: ast.expr) -> bool:
        text = ast.get_source_segment(self.source, test) or ""
        return any(word in text for word in GUARD_WORDS)

    def _visit_guarded(self, node: ast.If | ast.IfExp) -> None:
        guard = self._is_guard(node.test)
        self.guarded += guard
        self.generic_visit(node)
        self.guarded -= guard

    visit_If = _visit_guarded
    visit_IfExp = _visit_guarded

    def visit_Try(self, node: ast.Try) -> None:
        caught = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
        guard = any(name in text for text in caught for name in ("AttributeError", "ImportError", "OSError"))
        self.guarded += guard
        for child in node.body:
            self.visit(child)
        self.guarded -= guard
        for after in [*node.handlers, *node.orelse, *node.finalbody]:
            self.visit(after)

    def _say(self, node: ast.AST, what: str) -> None:
        if not self.guarded:
            self.problems.append(f"{self.where}:{getattr(node, 'lineno', '?')}: {what}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.attr in UNIX_ONLY_ATTRS.get(node.value.id, ()):
            self._say(node, f"{node.value.id}.{node.attr}")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module in UNIX_ONLY_MODULES:
            self._say(node, f"from {node.module} import")
        for alias in node.names:
            if alias.name in UNIX_ONLY_ATTRS.get(node.module or "", ()):
                self._say(node, f"from {node.module} import {alias.name}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in UNIX_ONLY_MODULES:
                self._say(node, f"import {alias.name}")

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.startswith(UNIX_PATHS):
            self._say(node, f"hard-coded {node.value!r}")


def linux_only(source: str, where: str = "<test>") -> list[str]:
    scan = _Scan(source, where)
    scan.visit(ast.parse(source))
    return scan.problems


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import os\nos.fork()", "os.fork"),
        ("import os, signal\nos.kill(1, signal.SIGKILL)", "signal.SIGKILL"),
        ("import signal\nsignal.signal(signal.SIGTERM, print)", "signal.SIGTERM"),
        ("open('/proc/self/status')", "'/proc/self/status'"),
        ("LOG = '/tmp/agentcade.log'", "'/tmp/agentcade.log'"),
        ("import fcntl", "import fcntl"),
    ],
)
def test_the_scan_finds_each_kind_of_linux_only_call(source: str, found: str) -> None:
    (problem,) = linux_only(source)
    assert found in problem


@pytest.mark.parametrize(
    "source",
    [
        "import signal, sys\nS = (signal.SIGTERM,) if sys.platform != 'win32' else (signal.SIGINT,)",
        "import os, sys\nif os.name == 'posix':\n    os.fork()",
        "import signal\nif hasattr(signal, 'SIGKILL'):\n    print(signal.SIGKILL)",
        "try:\n    import fcntl\nexcept ImportError:\n    fcntl = None",
        "import tempfile\nBASE = tempfile.gettempdir()",
    ],
)
def test_the_scan_accepts_calls_with_a_windows_path(source: str) -> None:
    assert linux_only(source) == []


def test_agentcade_and_the_games_make_no_linux_only_calls() -> None:
    problems: list[str] = []
    for path in sorted([*(ROOT / "agentcade").rglob("*.py"), *(ROOT / "games").rglob("*.py")]):
        if path.parent.name == "deploy":  # deployment recipes for Linux servers
            continue
        source = path.read_text(encoding="utf-8")
        problems += linux_only(source, str(path.relative_to(ROOT)))
    assert problems == []


def _opens_text_without_encoding(source: str, where: str) -> list[str]:
    """``open``/``read_text``/``write_text`` in text mode without ``encoding=``: on Windows
    the default is the ANSI code page (GBK on a Chinese Windows), not UTF-8."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        keywords = {k.arg for k in node.keywords}
        if name in ("read_text", "write_text") and "encoding" not in keywords:
            out.append(f"{where}:{node.lineno}: {name} without encoding")
        elif name == "open" and isinstance(func, ast.Name) | (isinstance(func, ast.Attribute) and func.attr == "open"):
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            binary = isinstance(mode, ast.Constant) and "b" in str(mode.value)
            if not binary and "encoding" not in keywords and isinstance(func, ast.Name):
                out.append(f"{where}:{node.lineno}: open without encoding")
    return out


def test_text_files_are_read_and_written_as_utf8() -> None:
    problems: list[str] = []
    for path in sorted([*(ROOT / "agentcade").rglob("*.py"), *(ROOT / "games").rglob("*.py")]):
        problems += _opens_text_without_encoding(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert problems == []
