"""WatcheRobot Application entry point: ``agentcade run --robot app`` (the Daemon starts it).

Start it with ``watcherobot app run .`` from the environment agentcade is installed in
(the README's set-up): the Daemon launches this file with that Python and injects the
``WATCHER_APP_*`` variables; it asks the Application to stop by creating the file named
by ``WATCHER_APP_SHUTDOWN_SIGNAL`` and kills it 3 s later, and ``agentcade run`` is done
well within that.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this checkout, if not installed

from agentcade.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["run", "--robot", "app", *sys.argv[1:]]))
