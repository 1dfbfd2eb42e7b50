"""Where HTTP/1.1 (h11) meets trio: the glue and the one server loop.

``_http.H11Stream`` owns one ``h11.Connection`` and one trio stream (the A2A client reads
through it too); ``server.HttpServer`` is the one HTTP/1.1 server loop, and the A2A server,
the local pages, the simulated Daemon's control port and the test's fake OpenAI model are
route handlers over it.
"""
