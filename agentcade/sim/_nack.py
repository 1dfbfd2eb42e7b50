"""The simulated device's refusal of a command (``sys.nack`` with a reason).

Its own module so the firmware, the link and the audio side (``audio``, which both of the
others import) can all raise it without importing one another.
"""

from __future__ import annotations


class _Nack(Exception):
    """A command the simulated firmware refuses; ``reason`` goes into ``sys.nack``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
