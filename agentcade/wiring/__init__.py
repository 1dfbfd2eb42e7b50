"""The top layer, where the program is wired: nothing below it opens games or serves them.

* ``games``: open a game named on the command line (a folder, a built-in id, or a URL);
* ``remote``: ``RemoteGameClient``, the A2A adapter behind ``GameClient``;
* ``serve``: serve one opened game over A2A (``serve``, and ``check`` for a folder);
* ``registry``: open every game the main agent can start;
* ``pipeline``: registry, output queue and main agent, as ``play`` (and ``run``) use them;
* ``robot``: open the robot a command names, the simulated one (``agentcade.sim``) included;
* ``voice``: the voice loop of ``run`` (listen, recognise, answer, barge in); ``hearing``:
  what the robot may hear now; ``voice_services``: the recogniser and the voice the
  settings name, reopened when they change (``run``, ``e2e``).

The wiring imports the simulated robot (``agentcade.sim``), never the test kit
(``agentcade.testing``).

Below it, ``game/`` knows no transport, ``a2a/`` knows only the handler contract and the
pure core imports no device, model or I/O module.
"""
