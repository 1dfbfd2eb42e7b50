"""The local pages on http://127.0.0.1:8790: live view, settings, games.

``serve_pages(registry=..., trace=...)`` runs them inside the program that plays
(``agentcade play``, ``agentcade run``); see ``server.py``. Layout:

* ``security.py`` — who may talk to the pages (Host, Origin, token), pure;
* ``forms.py`` — settings forms from ``settings.yaml`` and their checks, pure;
* ``pages.py`` — the HTML, pure;
* ``live.py`` — the last turns of the trace, grouped by request id;
* ``marks.py`` — the remote games the speech guard stopped (a trace sink);
* ``app.py`` — what each route does (writes ``.env``, installs games, tests the model);
* ``server.py`` — h11 + trio-websocket on 127.0.0.1;
* ``static/`` — one stylesheet and one script, no build step.
"""

from agentcade.web.server import DEFAULT_PORT, Pages, PagesError, serve_pages

__all__ = ["DEFAULT_PORT", "Pages", "PagesError", "serve_pages"]
