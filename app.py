"""WatcheRobot Application entry point: ``agentcade run --robot app`` (the Daemon starts it).

Start it with ``watcherobot app run .`` from the environment agentcade is installed in
(the README's set-up): the Daemon launches this file with that Python and injects the
``WATCHER_APP_*`` variables; it asks the Application to stop by creating the file named
by ``WATCHER_APP_SHUTDOWN_SIGNAL`` and kills it 3 s later, and ``agentcade run`` is done
well within that.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent
sys.path.insert(0, str(CHECKOUT))  # this checkout, if not installed


def _checkout_games() -> None:
    """This checkout's built-in games, as ``agentcade.games``, with this checkout's agentcade.

    An editable install maps ``agentcade.games`` to the folder it was made from, and the
    Daemon drops ``PYTHONPATH``: an Application started from another checkout of the same
    environment (a second git worktree) ran this checkout's host with the other one's games.
    """
    init = CHECKOUT / "games" / "__init__.py"
    if not init.is_file() or "agentcade.games" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        "agentcade.games", init, submodule_search_locations=[str(init.parent)]
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agentcade.games"] = module
    spec.loader.exec_module(module)


_checkout_games()

from agentcade.cli import main  # noqa: E402 - after this checkout is first on the path

if __name__ == "__main__":
    code = main(["run", "--robot", "app", *sys.argv[1:]])
    # Leave at once: agentcade has closed everything, but the interpreter's own teardown
    # (idle worker threads, PyAV) took 2 s more on a busy machine, and the Daemon kills
    # the Application 3 s after asking it to stop.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
