"""Shared fixtures. Every server in a test listens on 127.0.0.1 with a dynamic port."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from agentcade.testing.fake_openai import FakeOpenAI, serve_fake_openai

# Tests never reach a real model: an accidental key in the developer's environment must
# not turn a test into a network call.
for _name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)


@pytest.fixture
async def fake(nursery: trio.Nursery) -> FakeOpenAI:
    """A scripted OpenAI-compatible server on 127.0.0.1, for the length of the test."""
    server: FakeOpenAI = await nursery.start(serve_fake_openai)
    return server


@pytest.fixture
async def hosts(game: object) -> AsyncIterator[object]:
    """``GameHost``s over the test file's ``game`` fixture, all closed after the test."""
    from tests.game_helpers import Hosts

    made = Hosts(game)  # type: ignore[arg-type]
    yield made
    await made.aclose()


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """An environment for running ``agentcade`` offline, in a home of its own."""
    from tests.processes import offline_env

    return offline_env(tmp_path)
