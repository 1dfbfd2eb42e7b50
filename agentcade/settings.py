"""A game's settings: ``AgentSettings``, ``LLMSettings``, where a game keeps its data.

The guide's import path (``agentcade.settings``); the code lives in ``agentcade.core.settings``.
"""

from agentcade.core.settings import (
    BUDGET_SPECS as BUDGET_SPECS,
    LLM_KEYS as LLM_KEYS,
    LLM_SPECS as LLM_SPECS,
    SETTINGS_YAML_HEADER as SETTINGS_YAML_HEADER,
    AgentSettings as AgentSettings,
    Budgets as Budgets,
    LLMSettings as LLMSettings,
    SettingsError as SettingsError,
    SettingSpec as SettingSpec,
    env_example as env_example,
    env_example_specs as env_example_specs,
    game_settings_files as game_settings_files,
    load_budgets as load_budgets,
    load_game_settings as load_game_settings,
    load_settings_spec as load_settings_spec,
    read_dotenv as read_dotenv,
    render_env_example as render_env_example,
    resolve_values as resolve_values,
    user_config_dir as user_config_dir,
    user_data_dir as user_data_dir,
    write_dotenv as write_dotenv,
)

__all__ = [
    "BUDGET_SPECS",
    "LLM_KEYS",
    "LLM_SPECS",
    "SETTINGS_YAML_HEADER",
    "AgentSettings",
    "Budgets",
    "LLMSettings",
    "SettingSpec",
    "SettingsError",
    "env_example",
    "env_example_specs",
    "game_settings_files",
    "load_budgets",
    "load_game_settings",
    "load_settings_spec",
    "read_dotenv",
    "render_env_example",
    "resolve_values",
    "user_config_dir",
    "user_data_dir",
    "write_dotenv",
]
