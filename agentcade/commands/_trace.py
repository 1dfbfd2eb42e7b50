"""``--trace`` / ``--trace-file``: the same two options for every command that plays.

Without ``--trace-file`` the ``AGENTCADE_TRACE_FILE`` setting (environment or the user's
``.env``) names the file: an Application started by the Daemon gets no arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from agentcade.core.errors import TraceFileError
from agentcade.core.host_settings import load_outputs
from agentcade.core.trace import JsonLinesSink, Sink, Trace


def add_trace_options(p: argparse.ArgumentParser, what: str) -> None:
    """Add ``--trace`` (print ``what`` as it happens) and ``--trace-file PATH``."""
    p.add_argument("--trace", action="store_true", help=f"print {what} as it happens")
    p.add_argument("--trace-file", metavar="PATH", help="write the trace as JSON lines to PATH")


@contextmanager
def trace_from_args(args: argparse.Namespace, *printers: Sink) -> Iterator[Trace]:
    """A trace with ``printers`` when ``--trace``, and the JSON-lines file when asked
    (``--trace-file``, else the ``AGENTCADE_TRACE_FILE`` setting).

    Raises:
        TraceFileError: the file cannot be opened (one line says why; exit code 1).
        SettingsError: the user's ``.env`` is malformed.
    """
    trace = Trace(*(printers if args.trace else ()))
    path = args.trace_file or load_outputs().trace_file
    try:
        jsonl = JsonLinesSink(path, report=_say_on_stderr) if path else None
    except TraceFileError as exc:
        if args.trace_file:
            raise
        raise TraceFileError(str(exc).replace("--trace-file", "AGENTCADE_TRACE_FILE", 1)) from None
    if jsonl is not None:
        trace.add_sink(jsonl)
    try:
        yield trace
    finally:
        if jsonl is not None:
            jsonl.close()


def _say_on_stderr(text: str) -> None:
    print(f"agentcade: {text}", file=sys.stderr, flush=True)
