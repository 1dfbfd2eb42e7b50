"""``port_number``: the argparse type of every port option (``serve``, a game binary, the pages).

Its own small module so that ``serve`` takes it without importing the pages (``_pages``
imports the main agent and the web pages, which serving never needs).
"""

from __future__ import annotations

import argparse

__all__ = ["port_number"]


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0..65535 (0: any free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return port
