"""The pipeline ``play`` (and next ``run``) share: registry, output queue and main agent.

All of it lives in one nursery; leaving the block shuts the main agent down (ending a
running game) and closes the model.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from agentcade.core.host_settings import Budgets, load_budgets
from agentcade.core.settings import AgentSettings, load_game_settings
from agentcade.core.trace import NULL_TRACE, Trace
from agentcade.device.robots import Robot
from agentcade.llm import ChatModel, make_model, offline_notice
from agentcade.main.agent import MainAgent, OfflineMainModel
from agentcade.main.output import OutputQueue
from agentcade.main.registry import GameRegistry
from agentcade.wiring.registry import open_registry

__all__ = ["follow_model_settings", "main_model", "open_pipeline"]


def main_model(registry: GameRegistry, trace: Trace) -> tuple[ChatModel, bool]:
    """The main agent's model from ``LLM_*`` settings; the offline router when none."""
    settings = load_game_settings(AgentSettings, None)
    if settings.llm.offline:
        return OfflineMainModel(registry), True
    if settings.llm.api_key is not None:
        trace.add_secret(settings.llm.api_key.get_secret_value())
    return make_model(settings.llm), False


@asynccontextmanager
async def open_pipeline(
    robot: Robot,
    *,
    games: Sequence[str] = (),
    trace: Trace = NULL_TRACE,
    builtin_dir: Path | None = None,
    builtins: bool = True,
    remote: Sequence[str] | None = None,
    model: Callable[[GameRegistry], ChatModel] | None = None,
    budgets: Budgets | None = None,
    shutdown_grace: float | None = None,
) -> AsyncIterator[tuple[MainAgent, GameRegistry]]:
    """Registry, output queue and main agent, all living in one nursery.

    ``builtin_dir``, ``remote``, ``model`` and ``budgets`` replace the defaults
    (``games/``, the installed remote games, the configured model, the ``AGENTCADE_*``
    budgets) — for tests and embedding; ``builtins=False`` offers no built-in game. ``shutdown_grace`` bounds the whole way out
    instead (an Application has 3 s in all).

    Raises:
        SettingsError: the budgets or the main model's settings are invalid.
    """
    budgets = budgets or load_budgets()
    async with open_registry(
        extra=games, remote=remote, builtin_dir=builtin_dir, builtins=builtins, trace=trace,
        game_timeout=budgets.game,
    ) as registry:
        if model is None:
            chat_model, offline = main_model(registry, trace)
        else:
            chat_model, offline = model(registry), False
        if offline:
            print(offline_notice(), file=sys.stderr)
        for problem in registry.problems:
            print(f"游戏没能加载：{problem}", file=sys.stderr)
        async with trio.open_nursery() as nursery:
            output = OutputQueue(robot, trace=trace)
            await nursery.start(output.run)
            agent = MainAgent(registry, output, chat_model, nursery, trace=trace, budgets=budgets)
            try:
                yield agent, registry
            finally:
                # agent.shutdown bounds itself (shutdown_grace, then the reset); the outer
                # bound is for closing the models (or the caller's own, tighter one).
                outer = agent.shutdown_grace + 5 if shutdown_grace is None else shutdown_grace
                with trio.CancelScope(shield=True), trio.move_on_after(outer):
                    await agent.shutdown()
                    for used in {id(chat_model): chat_model, id(agent.model): agent.model}.values():
                        await used.aclose()
                nursery.cancel_scope.cancel()


def follow_model_settings(
    agent: MainAgent, registry: GameRegistry, trace: Trace
) -> Callable[[frozenset[str]], Awaitable[None]]:
    """What to do when the settings page saved keys: the main agent's model follows ``LLM_*``.

    (A game's new session reads its settings again when their files changed; the main
    agent holds one model, so it is rebuilt here.) The old model is closed; the pipeline
    closes the last one.
    """

    async def saved(keys: frozenset[str]) -> None:
        if not any(key.startswith("LLM_") for key in keys):
            return
        old = agent.model
        agent.model, offline = main_model(registry, trace)
        if offline:
            print(offline_notice(), file=sys.stderr, flush=True)
        await old.aclose()

    return saved
