"""settings.py: settings.yaml, .env parsing, precedence, errors, secrets, folders."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentcade.core.dotenv import read_dotenv
from agentcade.core.host_settings import load_outputs
from agentcade.core.settings import (
    LLM_KEYS,
    SETTINGS_YAML_HEADER,
    AgentSettings,
    LLMSettings,
    SettingsError,
    SettingSpec,
    load_game_settings,
    load_settings_spec,
    render_env_example,
    resolve_values,
    user_config_dir,
    user_data_dir,
)
from agentcade.core.skill import is_game_id

SECRET = "sk-very-secret-123456"


class Settings(AgentSettings):
    rounds: int = 5
    library_url: str | None = None
    strict_mode: bool = False


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- LLMSettings


def test_llm_defaults_are_offline() -> None:
    llm = LLMSettings.from_values({})
    assert llm == LLMSettings()
    assert llm.model == "gpt-4o-mini"
    assert llm.timeout == 60.0
    assert llm.temperature == 0.7
    assert llm.offline


def test_llm_from_values_reads_every_key() -> None:
    llm = LLMSettings.from_values(
        {
            "LLM_BASE_URL": "http://127.0.0.1:11434/v1",
            "LLM_API_KEY": SECRET,
            "LLM_MODEL": "qwen2.5",
            "LLM_TIMEOUT": "12.5",
            "LLM_TEMPERATURE": "0",
        }
    )
    assert llm.base_url == "http://127.0.0.1:11434/v1"
    assert llm.api_key is not None
    assert llm.api_key.get_secret_value() == SECRET
    assert (llm.model, llm.timeout, llm.temperature) == ("qwen2.5", 12.5, 0.0)
    assert not llm.offline


@pytest.mark.parametrize(
    ("values", "offline"),
    [
        ({"LLM_API_KEY": SECRET}, False),
        ({"LLM_BASE_URL": "http://localhost:8000/v1"}, False),
        ({"LLM_API_KEY": "", "LLM_BASE_URL": "  "}, True),
    ],
)
def test_offline_means_no_key_and_no_base_url(values: dict[str, str], offline: bool) -> None:
    assert LLMSettings.from_values(values).offline is offline


@pytest.mark.parametrize(
    ("key", "raw", "fragment"),
    [
        ("LLM_TIMEOUT", "ten", "应该是数字"),
        ("LLM_TIMEOUT", "0", "1 到 300"),
        ("LLM_TIMEOUT", "nan", "1 到 300"),
        ("LLM_TEMPERATURE", "hot", "应该是数字"),
        ("LLM_TEMPERATURE", "3", "0 到 2"),
    ],
)
def test_bad_numbers_name_the_key(key: str, raw: str, fragment: str) -> None:
    with pytest.raises(SettingsError) as info:
        LLMSettings.from_values({key: raw})
    assert key in str(info.value)
    assert fragment in str(info.value)


def test_secret_never_shown() -> None:
    llm = LLMSettings.from_values({"LLM_API_KEY": SECRET})
    settings = Settings.from_values({"LLM_API_KEY": SECRET})
    for text in (repr(llm), str(llm), llm.model_dump_json(), repr(settings), str(settings),
                 settings.model_dump_json(), f"{llm}", f"{settings!r}"):  # fmt: skip
        assert SECRET not in text
    assert "**********" in llm.model_dump_json()


def test_llm_settings_are_frozen() -> None:
    llm = LLMSettings()
    with pytest.raises(ValueError, match="frozen"):
        llm.model = "other"  # type: ignore[misc]


# ---------------------------------------------------------------- AgentSettings


def test_agent_settings_reads_fields_from_upper_case_keys() -> None:
    settings = Settings.from_values(
        {"ROUNDS": "3", "LIBRARY_URL": "https://x", "STRICT_MODE": "true", "LLM_MODEL": "m"}
    )
    assert (settings.rounds, settings.library_url, settings.strict_mode) == (3, "https://x", True)
    assert settings.llm.model == "m"


def test_agent_settings_keeps_defaults_for_unset_or_empty_keys() -> None:
    settings = Settings.from_values({"ROUNDS": ""})
    assert settings.rounds == 5
    assert settings.library_url is None
    assert settings.llm == LLMSettings()


def test_agent_settings_error_names_key_and_fix_but_not_value() -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_values({"ROUNDS": "many-secret-rounds"})
    message = str(info.value)
    assert "ROUNDS" in message
    assert ".env" in message
    assert "many-secret-rounds" not in message


def test_setting_keys() -> None:
    assert Settings.setting_keys() == [*LLM_KEYS, "ROUNDS", "LIBRARY_URL", "STRICT_MODE"]


# ---------------------------------------------------------------- settings.yaml


def test_load_settings_spec(tmp_path: Path) -> None:
    path = write(
        tmp_path / "settings.yaml",
        SETTINGS_YAML_HEADER
        + """settings:
  - key: ROUNDS
    description: 每局几题
    default: 5
  - key: STRICT_MODE
    description: 严格判定
    default: false
  - key: LIBRARY_TOKEN
    description: 题库密钥
    required: true
    secret: true
""",
    )
    specs = load_settings_spec(path)
    assert specs == [
        SettingSpec(key="ROUNDS", description="每局几题", default="5"),
        SettingSpec(key="STRICT_MODE", description="严格判定", default="false"),
        SettingSpec(key="LIBRARY_TOKEN", description="题库密钥", required=True, secret=True),
    ]


def test_header_is_all_comments() -> None:
    assert all(line.startswith("#") for line in SETTINGS_YAML_HEADER.splitlines())
    assert yaml.safe_load(SETTINGS_YAML_HEADER) is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("settings: [\n", "不是合法的 YAML"),
        ("- key: A\n", "顶层"),
        ("settings:\n  key: A\n", "列表"),
        ("settings:\n  - just a string\n", "第 1 项"),
        ("settings:\n  - key: lower_case\n", "大写字母"),
        ("settings:\n  - key: A\n    colour: red\n", "colour"),
        ("settings:\n  - key: A\n  - key: A\n", "重复"),
        ("settings:\n  - key: A\n    secret: true\n    default: x\n", "密钥"),
        ("settings:\n  - key: A\n    required: true\n    default: x\n", "required"),
    ],
)
def test_settings_spec_errors_name_the_file(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path / "settings.yaml", text)
    with pytest.raises(SettingsError) as info:
        load_settings_spec(path)
    assert str(path) in str(info.value)
    assert fragment in str(info.value)


def test_empty_settings_yaml(tmp_path: Path) -> None:
    assert load_settings_spec(write(tmp_path / "settings.yaml", SETTINGS_YAML_HEADER)) == []
    assert load_settings_spec(write(tmp_path / "s2.yaml", "settings: []\n")) == []


def test_missing_settings_yaml_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"settings\.yaml"):
        load_settings_spec(tmp_path / "settings.yaml")


def test_render_env_example_has_no_secrets() -> None:
    text = render_env_example(
        [SettingSpec(key="A", description="说明", default="1"), SettingSpec(key="K", secret=True)]
    )
    assert text == "# 说明\nA=1\nK=\n"


def test_render_env_example_quotes_defaults_so_a_copied_env_reads_them_back(tmp_path: Path) -> None:
    text = render_env_example([SettingSpec(key="GREETING", default="你好 # 朋友")])
    path = write(tmp_path / ".env", text)
    assert read_dotenv(path) == {"GREETING": "你好 # 朋友"}


# ---------------------------------------------------------------- .env


def test_read_dotenv(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".env",
        "\ufeff# comment\n"
        "\n"
        "PLAIN=value\n"
        "SPACED =  padded value  \n"
        "export EXPORTED=yes\n"
        "INLINE=abc # a comment\n"
        "HASH=abc#not-a-comment\n"
        "SINGLE='keep \\n # literally'\n"
        'DOUBLE="line\\nnext \\"q\\" # kept"  # comment\n'
        "EMPTY=\n"
        "EQUALS=a=b=c\n"
        "PLAIN=later wins\n",
    )
    assert read_dotenv(path) == {
        "PLAIN": "later wins",
        "SPACED": "padded value",
        "EXPORTED": "yes",
        "INLINE": "abc",
        "HASH": "abc#not-a-comment",
        "SINGLE": "keep \\n # literally",
        "DOUBLE": 'line\nnext "q" # kept',
        "EMPTY": "",
        "EQUALS": "a=b=c",
    }


@pytest.mark.parametrize(
    ("line", "fragment"),
    [("JUST_A_WORD", "KEY=VALUE"), ("1BAD=x", "KEY=VALUE"), ('Q="open', "引号"), ("Q='a' b", "引号")],
)
def test_read_dotenv_errors_give_file_and_line(tmp_path: Path, line: str, fragment: str) -> None:
    path = write(tmp_path / ".env", f"# first\n{line}\n")
    with pytest.raises(SettingsError) as info:
        read_dotenv(path)
    assert f"{path}:2" in str(info.value)
    assert fragment in str(info.value)


# ---------------------------------------------------------------- precedence


def test_precedence_default_extra_game_env_environ(tmp_path: Path) -> None:
    game = tmp_path / "game"
    game.mkdir()
    specs = [SettingSpec(key=k, default="default") for k in ("A", "B", "C", "D")]
    user_env = write(tmp_path / "user.env", "B=user\nC=user\nD=user\n")
    write(game / ".env", "C=game\nD=game\n")
    values = resolve_values(
        specs, game_dir=game, environ={"D": "environ", "PATH": "/bin"}, extra_env_files=[user_env]
    )
    assert {k: values[k] for k in "ABCD"} == {"A": "default", "B": "user", "C": "game", "D": "environ"}
    assert "PATH" not in values  # undeclared names are not taken from the environment


def test_empty_values_do_not_hide_lower_levels(tmp_path: Path) -> None:
    write(tmp_path / ".env", "A=\nLLM_MODEL=\n")
    values = resolve_values(
        [SettingSpec(key="A", default="d")], game_dir=tmp_path, environ={"A": ""}
    )
    assert values["A"] == "d"
    assert values["LLM_MODEL"] == "gpt-4o-mini"


def test_llm_keys_always_resolved(tmp_path: Path) -> None:
    write(tmp_path / ".env", f"LLM_API_KEY={SECRET}\n")
    values = resolve_values([], game_dir=tmp_path, environ={"LLM_MODEL": "from-env"})
    assert values == {
        "LLM_API_KEY": SECRET,
        "LLM_MODEL": "from-env",
        "LLM_TIMEOUT": "60",
        "LLM_TEMPERATURE": "0.7",
    }


def test_game_spec_overrides_llm_default() -> None:
    values = resolve_values([SettingSpec(key="LLM_MODEL", default="qwen")], game_dir=None, environ={})
    assert values["LLM_MODEL"] == "qwen"


def test_missing_required_lists_every_key(tmp_path: Path) -> None:
    specs = [SettingSpec(key="A", required=True), SettingSpec(key="B", required=True),
             SettingSpec(key="C", required=True)]  # fmt: skip
    with pytest.raises(SettingsError) as info:
        resolve_values(specs, game_dir=tmp_path, environ={"B": "set"})
    message = str(info.value)
    assert "缺少必填的配置：A, C。" in message
    assert ".env" in message


def test_missing_env_files_are_skipped(tmp_path: Path) -> None:
    values = resolve_values(
        [], game_dir=tmp_path / "nowhere", environ={}, extra_env_files=[tmp_path / "none.env"]
    )
    assert values["LLM_MODEL"] == "gpt-4o-mini"


# ---------------------------------------------------------------- load_game_settings


def test_load_game_settings_end_to_end(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    write(home / "config" / ".env", f"LLM_API_KEY={SECRET}\nROUNDS=7\n")
    game = tmp_path / "game"
    game.mkdir()
    write(
        game / "settings.yaml",
        "settings:\n  - key: ROUNDS\n    default: 5\n  - key: LLM_MODEL\n    default: qwen\n",
    )
    write(game / ".env", "ROUNDS=8\n")
    environ = {"AGENTCADE_HOME": str(home), "STRICT_MODE": "1"}

    settings = load_game_settings(Settings, game, environ)

    assert isinstance(settings, Settings)
    assert settings.rounds == 8  # game .env beats the user's .env
    assert settings.strict_mode is True  # declared only in config.py: still read
    assert settings.llm.model == "qwen"
    assert settings.llm.api_key is not None
    assert settings.llm.api_key.get_secret_value() == SECRET


def test_load_game_settings_without_folder() -> None:
    settings = load_game_settings(Settings, None, {"ROUNDS": "2"}, extra_env_files=[])
    assert settings.rounds == 2
    assert settings.llm.offline


def test_load_game_settings_required_missing(tmp_path: Path) -> None:
    write(tmp_path / "settings.yaml", "settings:\n  - key: LIBRARY_URL\n    required: true\n")
    with pytest.raises(SettingsError, match="LIBRARY_URL"):
        load_game_settings(Settings, tmp_path, {}, extra_env_files=[])


# ---------------------------------------------------------------- folders


def test_user_dirs_follow_agentcade_home(tmp_path: Path) -> None:
    environ = {"AGENTCADE_HOME": str(tmp_path)}
    assert user_config_dir(environ) == tmp_path / "config"
    assert user_data_dir("riddle", environ) == tmp_path / "data" / "riddle"
    assert user_data_dir("riddle", environ) == user_config_dir(environ).parent / "data" / "riddle"
    assert not (tmp_path / "config").exists()  # nothing is created


@pytest.mark.parametrize("game_id", ["../riddle", "Riddle", "riddle/x", "1riddle", "r" * 65])
def test_a_data_folder_needs_what_skill_md_accepts_as_an_id(game_id: str) -> None:
    assert not is_game_id(game_id)
    with pytest.raises(ValueError, match="not a game ID"):
        user_data_dir(game_id, {"AGENTCADE_HOME": "/x"})


def test_config_dir_override(tmp_path: Path) -> None:
    environ = {"AGENTCADE_CONFIG_DIR": str(tmp_path / "cfg"), "AGENTCADE_HOME": "/ignored"}
    assert user_config_dir(environ) == tmp_path / "cfg"
    assert user_data_dir("riddle", environ) == tmp_path / "data" / "riddle"


def test_config_dir_default_is_per_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "agentcade" / "config"
    assert user_config_dir({}) == Path.home() / ".config" / "agentcade" / "config"


@pytest.mark.parametrize("bad", ["../etc", "Riddle", "a/b", ""])
def test_user_data_dir_rejects_bad_ids(bad: str) -> None:
    with pytest.raises(ValueError, match="game ID"):
        user_data_dir(bad, {"AGENTCADE_HOME": "/tmp/x"})


BUILTIN = Path(__file__).resolve().parents[1] / "games"


@pytest.mark.parametrize("game", sorted(p.parent.name for p in BUILTIN.glob("*/settings.yaml")))
def test_every_builtin_settings_yaml_starts_with_the_documented_header(game: str) -> None:
    path = BUILTIN / game / "settings.yaml"
    assert path.read_text(encoding="utf-8").startswith(SETTINGS_YAML_HEADER)
    assert load_settings_spec(path)  # and it loads


def test_the_trace_file_and_record_folder_come_from_the_env_file_and_the_environment_wins(
    tmp_path: Path,
) -> None:
    environ = {"AGENTCADE_HOME": str(tmp_path)}
    assert load_outputs(environ).trace_file is None
    assert load_outputs(environ).record_dir is None
    env_file = user_config_dir(environ) / ".env"
    env_file.parent.mkdir(parents=True)
    env_file.write_text("AGENTCADE_TRACE_FILE=/srv/a.jsonl\nAGENTCADE_RECORD_DIR=~/rec\n",
                        encoding="utf-8")
    outputs = load_outputs(environ)
    assert outputs.trace_file == Path("/srv/a.jsonl")
    assert outputs.record_dir == Path("~/rec").expanduser()
    outputs = load_outputs({**environ, "AGENTCADE_TRACE_FILE": str(tmp_path / "b.jsonl")})
    assert outputs.trace_file == tmp_path / "b.jsonl"
