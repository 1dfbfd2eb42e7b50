"""The host's own settings: its time budgets and where a run writes its trace and recordings.

Read like a game's ``LLM_*`` keys (:func:`agentcade.core.settings.resolve_values`): the
``AGENTCADE_*`` keys from the user's ``.env`` (the settings page's file) and the
environment. Not a game author's: games read theirs through ``AgentSettings``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict

from agentcade.core.settings import SettingSpec, number_in_range, resolve_values, user_config_dir

__all__ = ["BUDGET_SPECS", "OUTPUT_SPECS", "Budgets", "Outputs", "load_budgets", "load_outputs"]


BUDGET_SPECS: tuple[tuple[SettingSpec, float, float], ...] = (
    (SettingSpec(key="AGENTCADE_PATIENCE", default="4",
                 description="一句话说完后最多安静几秒，没有回应就先说“稍等”（0.5 到 30）"), 0.5, 30.0),
    (SettingSpec(key="AGENTCADE_LINE_BUDGET", default="45",
                 description="主 Agent 的大模型最多想几秒，超过就由代码接手（5 到 600）"), 5.0, 600.0),
    (SettingSpec(key="AGENTCADE_GAME_TIMEOUT", default="210",
                 description="游戏最多几秒没有任何回复，超过就当成连接超时（5 到 600）"), 5.0, 600.0),
)
"""The host's time budgets, with their ranges (the README's "Time budgets" table)."""


class Budgets(BaseModel):
    """How long the family may wait; read from ``AGENTCADE_*`` like the ``LLM_*`` keys.

    The model's own budget is ``LLM_TIMEOUT`` (one call, retries included); a game's is
    ``game``: the guide promises a game 210 s without any reply before the host treats
    it as a connection timeout (a remote game may think long: a slow model, a drawing).
    What is heard in the meantime is the main agent's business (``agentcade.main.agent``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    patience: float = 4.0
    """Seconds of silence after a line before the main agent says "稍等"."""
    line: float = 45.0
    """Seconds the main agent's model turn may take before the code router takes over."""
    game: float = 210.0
    """Seconds a game may stay without any reply (to a request, between its replies)."""

    @classmethod
    def from_values(cls, values: Mapping[str, str]) -> Self:
        """Build from the ``AGENTCADE_*`` budget keys; unset keeps the defaults.

        Raises:
            SettingsError: a value that is not a number in its range (the key is named).
        """
        fields = dict(zip(("patience", "line", "game"), BUDGET_SPECS, strict=True))
        data: dict[str, float] = {}
        for field, (spec, low, high) in fields.items():
            raw = values.get(spec.key, "").strip()
            if raw:
                data[field] = number_in_range(spec.key, raw, low, high)
        return cls(**data)


def load_budgets(environ: Mapping[str, str] = os.environ) -> Budgets:
    """The budgets from the user's ``.env`` (the settings page's file) and the environment.

    Raises:
        SettingsError: a malformed ``.env`` or a value out of range.
    """
    specs = [spec for spec, _, _ in BUDGET_SPECS]
    values = resolve_values(
        specs, game_dir=None, environ=environ, extra_env_files=[user_config_dir(environ) / ".env"]
    )
    return Budgets.from_values(values)


# --------------------------------------------------------------------------- outputs


OUTPUT_SPECS: tuple[SettingSpec, ...] = (
    SettingSpec(key="AGENTCADE_TRACE_FILE", default="",
                description="把运行记录（trace，每行一个 JSON）追加到这个文件；和 --trace-file 一样，"
                            "命令行给了就用命令行的。作为 WatcheRobot 应用运行时 Daemon 不传参数，用它"),
    SettingSpec(key="AGENTCADE_RECORD_DIR", default="",
                description="agentcade run 把小懒说的和听到的每段声音存成 WAV 放进这个文件夹；"
                            "和 --record 一样，命令行给了就用命令行的"),
)
"""Where a run writes its trace and recordings, for a run given no arguments (an Application)."""


class Outputs(BaseModel):
    """Where a run writes what it did; None: nowhere. ``~`` is expanded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_file: Path | None = None
    record_dir: Path | None = None


def load_outputs(environ: Mapping[str, str] = os.environ) -> Outputs:
    """``AGENTCADE_TRACE_FILE`` / ``AGENTCADE_RECORD_DIR`` from the user's ``.env`` and the
    environment (the environment wins), like the budgets.

    Raises:
        SettingsError: a malformed ``.env``.
    """
    values = resolve_values(
        list(OUTPUT_SPECS), game_dir=None, environ=environ,
        extra_env_files=[user_config_dir(environ) / ".env"],
    )

    def path(key: str) -> Path | None:
        raw = values.get(key, "").strip()
        return Path(raw).expanduser() if raw else None

    return Outputs(trace_file=path("AGENTCADE_TRACE_FILE"), record_dir=path("AGENTCADE_RECORD_DIR"))
