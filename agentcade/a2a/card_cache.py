"""The agent card's caching headers: an ETag, ``Last-Modified`` and conditional GETs.

A2A §8.6 (SHOULD): the card carries an ETag (a hash of the card without its signatures),
``Last-Modified`` (when it last changed) and ``Cache-Control: max-age`` (:data:`CARD_MAX_AGE`);
``If-None-Match`` / ``If-Modified-Since`` that still hold are answered with 304 by
:class:`agentcade.a2a.server.A2AServer`.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
from typing import Any

__all__ = ["CARD_MAX_AGE", "card_etag", "etag_hits", "http_date", "not_modified_since"]

CARD_MAX_AGE = 300
"""Seconds a client may reuse the agent card without asking again (``Cache-Control``).
A card changes only when the game is redeployed; 5 minutes bounds how long a main agent
keeps a stale one, and the ETag makes the re-check cheap."""


def card_etag(card: dict[str, Any]) -> str:
    unsigned = {k: v for k, v in card.items() if k != "signatures"}
    body = json.dumps(unsigned, sort_keys=True, separators=(",", ":"))
    return f'W/"{hashlib.sha256(body.encode()).hexdigest()}"'


def etag_hits(header: str, etag: str) -> bool:
    candidates = [c.strip() for c in header.split(",")]
    return "*" in candidates or any(
        c.removeprefix("W/") == etag.removeprefix("W/") for c in candidates
    )


def http_date(moment: dt.datetime) -> str:
    return email.utils.format_datetime(moment.astimezone(dt.UTC), usegmt=True)


def not_modified_since(header: str, last_modified: dt.datetime) -> bool:
    try:
        since = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False
    if since.tzinfo is None:
        return False
    return last_modified.replace(microsecond=0) <= since
