"""``python -m tests.check_peers <compliant|violating|old_version> <port>``: serve one peer game."""

from __future__ import annotations

import importlib
import sys

import uvicorn


def main() -> None:
    name, port = sys.argv[1], int(sys.argv[2])
    module = importlib.import_module(f"tests.check_peers.{name}")
    uvicorn.run(module.make_app(port), host="127.0.0.1", port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main()
