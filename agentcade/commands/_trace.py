"""``--trace`` / ``--trace-file``: the same two options for every command that plays."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from agentcade.core.trace import JsonLinesSink, Sink, Trace


def add_trace_options(p: argparse.ArgumentParser, what: str) -> None:
    """Add ``--trace`` (print ``what`` as it happens) and ``--trace-file PATH``."""
    p.add_argument("--trace", action="store_true", help=f"print {what} as it happens")
    p.add_argument("--trace-file", metavar="PATH", help="write the trace as JSON lines to PATH")


@contextmanager
def trace_from_args(args: argparse.Namespace, *printers: Sink) -> Iterator[Trace]:
    """A trace with ``printers`` when ``--trace``, and the JSON-lines file when asked.

    Raises:
        TraceFileError: the file cannot be opened (one line says why; exit code 1).
    """
    trace = Trace(*(printers if args.trace else ()))
    jsonl = JsonLinesSink(args.trace_file, report=_say_on_stderr) if args.trace_file else None
    if jsonl is not None:
        trace.add_sink(jsonl)
    try:
        yield trace
    finally:
        if jsonl is not None:
            jsonl.close()


def _say_on_stderr(text: str) -> None:
    print(f"agentcade: {text}", file=sys.stderr, flush=True)
