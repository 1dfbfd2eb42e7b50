"""Who may talk to the local pages: the rules, as pure functions (no I/O).

The pages change settings and install games, so a web page the family happens to open
elsewhere must not be able to do either. Three locks, each enough on its own for the
attacks it names:

* the server listens on 127.0.0.1 only (nothing on the network can connect);
* ``Host`` must be the page's own (``127.0.0.1:PORT`` or ``localhost:PORT``): a DNS
  rebinding attack reaches the port under the attacker's host name and is refused;
* ``Origin``, when the browser sends one, must be the page's own: another site's script
  (a cross-site POST or WebSocket) is refused. Browsers always send it on those.

Writes also need the per-process token the server embeds in every page it serves
(``X-Agentcade-Token``) and a JSON body: a form on another site can neither read the
token nor send that header.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

__all__ = ["TOKEN_HEADER", "Refusal", "check_origin", "check_request", "new_token"]

TOKEN_HEADER = "x-agentcade-token"

_LOCAL_NAMES = ("127.0.0.1", "localhost")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: an HTTP status and one line for whoever looks."""

    status: int
    reason: str


def new_token() -> str:
    """A fresh unguessable token (one per process)."""
    return secrets.token_urlsafe(24)


def _own_hosts(port: int) -> set[str]:
    return {f"{name}:{port}" for name in _LOCAL_NAMES} | (
        set(_LOCAL_NAMES) if port == 80 else set()
    )


def check_origin(origin: str | None, port: int) -> Refusal | None:
    """``Origin`` absent, or ``http://127.0.0.1:PORT`` / ``http://localhost:PORT``."""
    if origin is None:
        return None
    scheme, _, rest = origin.strip().lower().partition("://")
    if scheme != "http" or rest not in _own_hosts(port):
        return Refusal(403, f"refused: Origin {origin!r} is not this page")
    return None


def check_request(
    *,
    method: str,
    host: str | None,
    origin: str | None,
    token: str | None,
    expected_token: str,
    port: int,
    write: bool,
) -> Refusal | None:
    """The refusal for a request, or None when it may be served.

    Args:
        method: the HTTP method (upper case).
        host: the ``Host`` header (None when missing).
        origin: the ``Origin`` header (None when missing).
        token: the ``X-Agentcade-Token`` header.
        expected_token: this process's token.
        port: the port the pages listen on.
        write: whether the request changes something (needs the token).
    """
    if host is None or host.strip().lower() not in _own_hosts(port):
        return Refusal(403, f"refused: Host {host!r} is not 127.0.0.1:{port}")
    if (refusal := check_origin(origin, port)) is not None:
        return refusal
    if write:
        if method != "POST":
            return Refusal(405, "changes are POST requests")
        if token is None or not hmac.compare_digest(token.encode(), expected_token.encode()):
            return Refusal(403, "refused: missing or wrong page token (reload the page)")
    return None
