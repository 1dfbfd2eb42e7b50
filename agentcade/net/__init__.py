"""Where HTTP/1.1 (h11) meets trio: one thin glue layer, no policy.

``_http.H11Stream`` owns one ``h11.Connection`` and one trio stream; the A2A server, the
local pages and the simulated Daemon's control port are built on it.
"""
