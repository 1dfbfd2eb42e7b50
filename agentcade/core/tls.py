"""TLS for every outgoing https connection: the operating system's trust store.

Remote games, the game catalog and the model endpoint are reached over https. Python's own
``ssl.create_default_context()`` reads OpenSSL's CA paths, which a python.org macOS build
and a frozen executable (PyInstaller) often lack, so a game on a perfectly good certificate
would fail to connect on a family's Mac or Windows PC. ``truststore`` verifies through the
platform's own verifier instead (Windows CryptoAPI, macOS Security framework, OpenSSL's
system paths on Linux), as a browser does: corporate and parental-control roots the
family's machine trusts are trusted here too.

Pure: making a context reads nothing; the trust store is consulted at each handshake.
"""

from __future__ import annotations

import ssl

import truststore

__all__ = ["client_context"]


def client_context() -> ssl.SSLContext:
    """A new client-side TLS context verifying certificates and host names with the OS's
    trust store (``truststore.SSLContext``; for ``trio.SSLStream`` and httpx's ``verify``)."""
    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
