"""The simulated device's refusal of a command (``sys.nack`` with a reason).

Its own module so the device (``sim``) and its audio side (``sim_audio``) can both raise it
without importing each other.
"""

from __future__ import annotations


class _Nack(Exception):
    """A command the simulated firmware refuses; ``reason`` goes into ``sys.nack``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
