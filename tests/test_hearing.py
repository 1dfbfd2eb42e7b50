"""What the robot may act on before the silence window ends (``wiring.hearing.actionable``),
read from the real main agent playing a built-in game on the offline model."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agentcade.device.robots import ConsoleRobot
from agentcade.game.loader import builtin_games_dir
from agentcade.main.agent import OfflineMainModel
from agentcade.wiring import hearing
from agentcade.wiring.pipeline import open_pipeline


@pytest.mark.parametrize(("line", "acted_on"), [
    ("彩虹", True), ("是彩虹吗", True), ("是不是彩虹", True), ("我猜是彩虹", True),
    ("是不是彩虹桥", False), ("你今天开心吗", False),
])
async def test_an_answer_of_the_game_is_acted_on_alone_or_in_a_guess_frame(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, line: str, acted_on: bool,
) -> None:
    monkeypatch.setenv("AGENTCADE_HOME", str(tmp_path))
    async with open_pipeline(ConsoleRobot(io.StringIO()), builtin_dir=builtin_games_dir(),
                             remote=[], model=OfflineMainModel) as (agent, _):
        await agent.on_user("玩猜谜语")
        assert hearing.actionable(agent, line) is acted_on
