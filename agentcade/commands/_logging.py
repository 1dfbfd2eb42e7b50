"""Log records on stderr, one line each: what the family's operator or the author reads.

Python's fallback handler prints a record's traceback; a game's bug logged with
``log.exception`` would put one on the screen of ``play`` or ``chat``. Every command
gets this handler instead (``agentcade.cli``): warnings and errors as one line
(``agentcade <command>: <message>: <ExcType>: <text>``), the traceback only with
``--debug``.
"""

from __future__ import annotations

import logging
import sys
import traceback

__all__ = ["OneLineHandler", "one_line"]


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class OneLineHandler(logging.Handler):
    """Warnings and errors on stderr, one line each (a game's too)."""

    def __init__(self, command: str, *, debug: bool = False) -> None:
        super().__init__(logging.WARNING)
        self.command = command
        self.debug = debug

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            exc = record.exc_info[1] if record.exc_info else None
            if exc is not None:
                text += f": {type(exc).__name__}: {exc}"
            print(f"agentcade {self.command}: {one_line(text)}", file=sys.stderr, flush=True)
            if self.debug and exc is not None:
                traceback.print_exception(exc)
        except Exception:  # noqa: BLE001 - logging must never fail the program
            self.handleError(record)
