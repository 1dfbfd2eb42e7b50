"""Shared fixtures. Every server in a test listens on 127.0.0.1 with a dynamic port."""

from __future__ import annotations

import os

# Tests never reach a real model: an accidental key in the developer's environment must
# not turn a test into a network call.
for _name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)
