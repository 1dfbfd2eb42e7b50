"""Settings forms from ``settings.yaml``, the checks of a submission, and the ``.env`` writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcade.core.dotenv import read_dotenv, write_dotenv
from agentcade.core.settings import (
    LLM_SPECS,
    AgentSettings,
    LLMSettings,
    SettingsError,
    SettingSpec,
)
from agentcade.web.forms import check_submission, field_kind, section
from agentcade.web.pages import settings_page


class Settings(AgentSettings):
    rounds: int = 3
    ratio: float = 0.5
    hard: bool = False
    wordbook_url: str = ""


SPECS = [
    SettingSpec(key="ROUNDS", description="一局几题", default="3"),
    SettingSpec(key="RATIO", description="比例", default="0.5"),
    SettingSpec(key="HARD", description="难", default="false"),
    SettingSpec(key="WORDBOOK_URL", description="题库地址", required=True),
    SettingSpec(key="WORDBOOK_KEY", description="题库密钥", secret=True),
    SettingSpec(key="NICKNAME", description="称呼"),
]


def game_section(saved: dict[str, str] | None = None, environ: dict[str, str] | None = None):
    return section("game-x", "某游戏", SPECS, saved=saved or {}, environ=environ or {}, config=Settings)


def test_field_kinds_come_from_config_py_then_the_declaration() -> None:
    kinds = {f.key: f.kind for f in game_section().fields}
    assert kinds == {
        "ROUNDS": "integer", "RATIO": "number", "HARD": "bool",
        "WORDBOOK_URL": "url", "WORDBOOK_KEY": "secret", "NICKNAME": "text",
    }


def test_without_config_py_a_numeric_default_makes_a_number_field() -> None:
    assert field_kind(SettingSpec(key="VAD_MAX_MS", default="30000")) == "integer"
    assert field_kind(SettingSpec(key="GAIN", default="1.5")) == "number"
    assert field_kind(SettingSpec(key="ASR_BASE_URL", default="")) == "url"
    assert field_kind(SettingSpec(key="ASR_LANGUAGE", default="zh")) == "text"


def test_a_required_unset_field_is_missing_until_saved_or_in_the_environment() -> None:
    assert [f.key for f in game_section().missing] == ["WORDBOOK_URL"]
    assert game_section(saved={"WORDBOOK_URL": "https://w.example/"}).missing == []
    assert game_section(environ={"WORDBOOK_URL": "https://w.example/"}).missing == []


def test_a_secret_is_shown_as_set_or_not_set_never_its_value() -> None:
    sec = game_section(saved={"WORDBOOK_KEY": "s3cret-value"})
    key = sec.get("WORDBOOK_KEY")
    assert key is not None
    assert (key.value, key.is_set) == ("", True)
    html = settings_page("tok", [sec], "/x/.env")
    assert "s3cret-value" not in html
    assert "已设置" in html


def test_the_settings_page_escapes_what_it_shows() -> None:
    sec = section("game-x", "<script>", [SettingSpec(key="A", description="<b>x</b>")],
                  saved={"A": '"><script>'}, environ={})
    html = settings_page("tok", [sec], "/x/.env")
    assert "<script>" not in html.split("<body", 1)[1].replace('<script src="/static/app.js">', "")


def test_good_values_become_updates_and_empty_ones_remove_the_saved_value() -> None:
    result = check_submission(
        game_section(saved={"NICKNAME": "小明"}),
        {"ROUNDS": " 5 ", "HARD": "TRUE", "WORDBOOK_URL": "https://w.example/api", "NICKNAME": "",
         "WORDBOOK_KEY": ""},
        current={},
    )
    assert result.errors == {}
    assert result.updates == {
        "ROUNDS": "5", "HARD": "true", "WORDBOOK_URL": "https://w.example/api", "NICKNAME": None,
    }  # an empty secret means "keep it"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("ROUNDS", "三", "整数"),
        ("RATIO", "abc", "数字"),
        ("HARD", "maybe", "是"),
        ("WORDBOOK_URL", "words.example", "http"),
        ("WORDBOOK_URL", "", "必填"),
        ("NICKNAME", "a\nb", "换行"),
        ("NICKNAME", "x" * 2001, "太长"),
    ],
)
def test_a_bad_value_gets_a_message_beside_its_field_and_nothing_to_write(
    key: str, value: str, message: str
) -> None:
    values = {"WORDBOOK_URL": "https://w.example/", "ROUNDS": "4", key: value}
    result = check_submission(game_section(), values, current={})
    assert set(result.errors) == {key}
    assert message in result.errors[key]
    assert result.updates == {}


def test_the_model_section_checks_values_with_llm_settings() -> None:
    sec = section("model", "大模型", LLM_SPECS, saved={}, environ={}, config=LLMSettings)
    bad = check_submission(sec, {"LLM_TEMPERATURE": "3"}, current={})
    assert "0 到 2" in bad.errors["LLM_TEMPERATURE"]
    bad = check_submission(sec, {"LLM_TIMEOUT": "0"}, current={})
    assert "1 到 300" in bad.errors["LLM_TIMEOUT"]
    assert check_submission(sec, {"LLM_TEMPERATURE": "1.2"}, current={}).ok


def test_a_key_the_form_does_not_have_is_refused() -> None:
    result = check_submission(game_section(), {"PATH": "/evil"}, current={})
    assert "PATH" in result.errors[""]
    assert result.updates == {}


def test_clearing_a_secret_removes_it() -> None:
    result = check_submission(game_section(), {"WORDBOOK_URL": "https://w/"}, clear=["WORDBOOK_KEY"],
                              current={})
    assert result.updates["WORDBOOK_KEY"] is None


def test_write_dotenv_changes_keys_in_place_and_keeps_the_rest(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("# 我的设置\nA=1\nexport B=2\nC='keep me'\nA=old duplicate\n", encoding="utf-8")
    write_dotenv(env, {"A": 'x "y" \\ z #not a comment', "B": None, "D": "新的"})
    assert env.read_text(encoding="utf-8").splitlines()[0] == "# 我的设置"
    assert read_dotenv(env) == {"A": 'x "y" \\ z #not a comment', "C": "keep me", "D": "新的"}


def test_write_dotenv_refuses_a_line_break_and_leaves_the_file(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="换行"):
        write_dotenv(env, {"A": "1\nLLM_BASE_URL=http://evil"})
    assert env.read_text(encoding="utf-8") == "A=1\n"


def test_write_dotenv_creates_the_folder_and_a_private_file(tmp_path: Path) -> None:
    env = tmp_path / "config" / ".env"
    write_dotenv(env, {"LLM_API_KEY": "sk-1"})
    assert read_dotenv(env) == {"LLM_API_KEY": "sk-1"}
    assert env.stat().st_mode & 0o077 == 0


def test_the_voice_form_is_made_from_the_voice_settings_yaml() -> None:
    from agentcade.voice.config import voice_settings_spec

    sec = section("voice", "语音", voice_settings_spec(), saved={"TTS_PROVIDER": "openai"},
                  environ={})
    kinds = {f.key: f.kind for f in sec.fields}
    assert kinds["ASR_API_KEY"] == "secret"
    assert kinds["ASR_BASE_URL"] == "url"
    assert kinds["VAD_MAX_MS"] == "integer"
    tts = sec.get("TTS_PROVIDER")
    assert tts is not None
    assert (tts.value, tts.default) == ("openai", "neural")
    assert check_submission(sec, {"VAD_SILENCE_MS": "八百"}, current={}).errors == {
        "VAD_SILENCE_MS": "请填一个整数，比如 5"}


def test_a_builtin_games_form_is_made_from_its_settings_yaml() -> None:
    from agentcade.core.settings import load_settings_spec
    from agentcade.game.loader import builtin_games_dir

    specs = load_settings_spec(builtin_games_dir() / "riddle" / "settings.yaml")
    sec = section("game-riddle", "猜谜语", specs, saved={}, environ={})
    assert [f.key for f in sec.fields] == [s.key for s in specs]
    assert sec.missing == []  # a built-in game plays without any setting
