"""A game's settings: ``AgentSettings``, ``LLMSettings``, where a game keeps its data.

The guide's import path (``agentcade.settings``); the code lives in ``agentcade.core.settings``.
What an author uses only: the host's own budgets and outputs (``core.host_settings``) and the
``.env`` writer of the settings page (``core.dotenv``) are not here.
"""

from agentcade.core.settings import (
    LLM_KEYS as LLM_KEYS,
    LLM_SPECS as LLM_SPECS,
    SETTINGS_YAML_HEADER as SETTINGS_YAML_HEADER,
    AgentSettings as AgentSettings,
    LLMSettings as LLMSettings,
    SettingsError as SettingsError,
    SettingSpec as SettingSpec,
    env_example as env_example,
    env_example_specs as env_example_specs,
    game_settings_files as game_settings_files,
    load_game_settings as load_game_settings,
    load_settings_spec as load_settings_spec,
    render_env_example as render_env_example,
    resolve_values as resolve_values,
    user_config_dir as user_config_dir,
    user_data_dir as user_data_dir,
)

__all__ = [
    "LLM_KEYS",
    "LLM_SPECS",
    "SETTINGS_YAML_HEADER",
    "AgentSettings",
    "LLMSettings",
    "SettingSpec",
    "SettingsError",
    "env_example",
    "env_example_specs",
    "game_settings_files",
    "load_game_settings",
    "load_settings_spec",
    "render_env_example",
    "resolve_values",
    "user_config_dir",
    "user_data_dir",
]
