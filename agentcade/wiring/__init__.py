"""The top layer, where the program is wired: nothing below it opens games or serves them.

* ``games``: open a game named on the command line (a folder, a built-in id, or a URL);
* ``remote``: ``RemoteGameClient``, the A2A adapter behind ``GameClient``;
* ``serve``: serve one opened game over A2A (``serve``, and ``check`` for a folder);
* ``registry``: open every game the main agent can start;
* ``pipeline``: registry, output queue and main agent, as ``play`` (and ``run``) use them.

Below it, ``game/`` knows no transport, ``a2a/`` knows only the handler contract and the
pure core imports no device, model or I/O module.
"""
