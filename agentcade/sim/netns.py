"""A private network namespace for tests that must not reach the machine's network.

The robot SDK's Daemon pairs a robot by broadcasting UDP on every non-loopback interface
(robot-sdk.md §10). :class:`PrivateNetwork` makes a network namespace of its own (Linux,
as root: ``unshare --net``), brings ``lo`` up and gives it ``10.77.0.1/24`` with the
broadcast address ``10.77.0.255`` (the Daemon's pairing interface, on ``lo``) and
``10.77.0.2/32`` (the robot's address; a /32 is no pairing interface), and then refuses
to go on unless the namespace is not this process's own and ``lo`` is its only interface.

Inside it, programs run through :meth:`PrivateNetwork.command` (``nsenter --net``) and
this process makes sockets with :meth:`PrivateNetwork.udp_socket` /
:meth:`PrivateNetwork.connect_tcp`: a short-lived thread enters the namespace
(``setns``, which changes only the calling thread) and makes the socket, which stays in
the namespace wherever it is used.

Where this cannot be done (not Linux, not root, ``unshare``/``nsenter``/``ip`` missing)
:func:`namespace_unavailable` says why, so a test can skip with that reason.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import trio

from agentcade.core.errors import AgentcadeError

__all__ = [
    "DAEMON_IP",
    "ROBOT_IP",
    "NotPrivate",
    "PrivateNetwork",
    "namespace_unavailable",
    "open_private_network",
]

DAEMON_IP = "10.77.0.1"
"""The Daemon's pairing interface address (``lo``, /24: broadcast ``10.77.0.255``)."""
BROADCAST_IP = "10.77.0.255"
ROBOT_IP = "10.77.0.2"
"""The simulated robot's address (``lo``, /32: the Daemon does not pair on it)."""
_CLONE_NEWNET = 0x40000000
_PROC = Path("/proc" if sys.platform.startswith("linux") else os.devnull)
"""Where Linux shows each process's namespaces (elsewhere namespace_unavailable() stops first)."""
_OWN = _PROC / "self" / "ns" / "net"
_PROGRAMS = ("unshare", "nsenter", "ip")
_T = TypeVar("_T")


class NotPrivate(AgentcadeError, RuntimeError):
    """The namespace is not a private one (it is this machine's network, or has more than lo)."""


def namespace_unavailable() -> str | None:
    """Why a private network namespace cannot be made here, or None when it can."""
    if not sys.platform.startswith("linux"):
        return "private network namespaces need Linux"
    geteuid = getattr(os, "geteuid", None)  # Linux only: checked above
    if geteuid is None or geteuid() != 0:
        return "making a private network namespace needs root (unshare --net)"
    missing = [p for p in _PROGRAMS if shutil.which(p) is None]
    if missing:
        return f"needs {', '.join(missing)} (install: apt-get install util-linux iproute2)"
    return None


def _setns(fd: int) -> None:
    setns = getattr(os, "setns", None)  # Python 3.12+
    if setns is not None:
        setns(fd, _CLONE_NEWNET)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


class PrivateNetwork:
    """A network namespace held by a ``sleep`` process; see the module docstring."""

    def __init__(self, holder: trio.Process) -> None:
        self._holder = holder
        self.path = _PROC / str(holder.pid) / "ns" / "net"
        """The namespace (``nsenter --net=PATH``)."""
        self._fd: int | None = None
        self._checked = False

    # -- making sockets and commands inside ----------------------------------------------

    def _inside(self, make: Callable[[], _T]) -> _T:
        """``make()`` run on a fresh thread that has entered the namespace."""
        self.check()
        assert self._fd is not None
        fd = self._fd
        result: list[_T] = []
        error: list[BaseException] = []

        def target() -> None:
            try:
                _setns(fd)
                result.append(make())
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                error.append(exc)

        thread = threading.Thread(target=target, name="agentcade-netns")
        thread.start()
        thread.join()
        if error:
            raise error[0]
        return result[0]

    def interfaces(self) -> list[str]:
        """The names of the namespace's network interfaces."""
        fd = self._fd
        assert fd is not None
        names: list[str] = []

        def target() -> None:
            _setns(fd)
            names.extend(name for _, name in socket.if_nameindex())

        thread = threading.Thread(target=target, name="agentcade-netns")
        thread.start()
        thread.join()
        return names

    def check(self) -> None:
        """Refuse unless this is a namespace of its own with ``lo`` as its only interface.

        Raises:
            NotPrivate: it is this process's (the machine's) network, or has another interface.
        """
        if self._checked:
            return
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        mine = os.stat(_OWN).st_ino
        if os.fstat(self._fd).st_ino == mine:
            raise NotPrivate(f"{self.path} is this machine's own network: refusing to use it")
        names = self.interfaces()
        if names != ["lo"]:
            raise NotPrivate(f"{self.path} has interfaces {names}, not only lo: refusing to use it")
        self._checked = True

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the namespace (after :meth:`check`)."""
        self.check()
        return ["nsenter", f"--net={self.path}", "--", *argv]

    def udp_socket(self, address: tuple[str, int], *, broadcast: bool = False) -> trio.socket.SocketType:
        """A UDP socket bound to ``address`` inside the namespace."""

        def make() -> socket.socket:
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            if broadcast:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            sock.bind(address)
            return sock

        return trio.socket.from_stdlib_socket(self._inside(make))

    async def connect_tcp(self, host: str, port: int, *, local: str | None = None) -> trio.SocketStream:
        """A TCP connection to ``host:port`` made inside the namespace (from ``local``)."""

        def make() -> socket.socket:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if local is not None:
                sock.bind((local, 0))
            return sock

        sock = trio.socket.from_stdlib_socket(self._inside(make))
        try:
            await sock.connect((host, port))
        except BaseException:
            sock.close()
            raise
        return trio.SocketStream(sock)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


async def _wait_for_own_namespace(path: Path, holder: trio.Process) -> None:
    mine = os.stat(_OWN).st_ino
    with trio.fail_after(5):
        while True:
            if holder.poll() is not None:
                raise NotPrivate(f"unshare --net ended with {holder.returncode}")
            try:
                if os.stat(path).st_ino != mine:
                    return
            except FileNotFoundError:
                pass
            await trio.sleep(0.01)


@asynccontextmanager
async def open_private_network() -> AsyncIterator[PrivateNetwork]:
    """A fresh private namespace, set up and checked; gone when the block ends.

    Everything started inside it must be stopped by whoever started it: ending the
    namespace's holder does not end them.

    Raises:
        NotPrivate: the namespace could not be made private (nothing was started in it).
    """
    reason = namespace_unavailable()
    if reason is not None:
        raise NotPrivate(reason)
    holder = await trio.lowlevel.open_process(
        ["unshare", "--net", "--", "sleep", "infinity"],
        stdin=None,
    )
    net = PrivateNetwork(holder)
    try:
        await _wait_for_own_namespace(net.path, holder)
        # Before anything: the namespace must be private (only lo, not ours).
        net.check()
        net._checked = False  # addresses are added next; checked again after
        nsenter = ["nsenter", f"--net={net.path}", "--"]
        for argv in (
            ["ip", "link", "set", "lo", "up"],
            ["ip", "addr", "add", f"{DAEMON_IP}/24", "brd", BROADCAST_IP, "dev", "lo"],
            ["ip", "addr", "add", f"{ROBOT_IP}/32", "dev", "lo"],
        ):
            await trio.run_process([*nsenter, *argv], capture_stdout=True, capture_stderr=True)
        net.check()
        yield net
    finally:
        net.close()
        with trio.CancelScope(shield=True):
            holder.kill()
            await holder.wait()
