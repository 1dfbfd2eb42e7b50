"""The labelled sets in ``tests/data/*.tsv``: one case a line, fields separated by tabs.

Blank lines and lines starting with ``#`` (the header and comments) are not cases.
"""

from __future__ import annotations

from pathlib import Path


def rows(path: Path) -> list[tuple[int, list[str]]]:
    """Each case of the set as (line number, its fields)."""
    found = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            found.append((lineno, line.split("\t")))
    return found
