"""``python -m agentcade`` runs the CLI."""

from agentcade.cli import main

raise SystemExit(main())
