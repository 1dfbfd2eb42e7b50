"""WatcheRobot Application entry point: ``agentcade run --robot app`` (the Daemon starts it).

Start it with ``watcherobot app run .`` from the environment agentcade is installed in
(the README's set-up): the Daemon launches this file with that Python and injects the
``WATCHER_APP_*`` variables; it asks the Application to stop by creating the file named
by ``WATCHER_APP_SHUTDOWN_SIGNAL`` and kills it 3 s later, and ``agentcade run`` is done
well within that.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this checkout, if not installed

from agentcade.cli import main

if __name__ == "__main__":
    code = main(["run", "--robot", "app", *sys.argv[1:]])
    # Leave at once: agentcade has closed everything, but the interpreter's own teardown
    # (idle worker threads, PyAV) took 2 s more on a busy machine, and the Daemon kills
    # the Application 3 s after asking it to stop.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
