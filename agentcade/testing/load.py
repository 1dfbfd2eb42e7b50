"""A busy desktop for tests and benches: CPU-bound processes beside the robot's host.

A family's computer is often busy (a browser, a video call, an update). :func:`cpu_load`
starts ``workers`` processes that spin on the CPU until the block ends, so a test or a bench
can run the same thing with and without them: on two cores, two workers make a load average
of about four with the host. They are plain ``python -c`` loops of the running interpreter
(no shell, no Linux-only program), killed when the block ends, whatever ended it — and
each stops by itself once the process that started it is gone (a bench killed by a signal
runs no ``finally``: its workers must not spin on beside the next measurement).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cpu_load"]

_SPIN = (
    "import os\n"
    "parent = os.getppid()\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(1_000_000):\n"
    "        pass\n"
)


@contextmanager
def cpu_load(workers: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``workers`` CPU-bound processes for the duration of the block (none when 0)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(workers):
            procs.append(subprocess.Popen(
                [sys.executable, "-c", _SPIN],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()
