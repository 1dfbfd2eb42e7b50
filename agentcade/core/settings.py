"""Game settings: ``settings.yaml`` + ``.env`` files + environment -> a ``Settings`` object.

Public for game authors (the guide's "配置" section). A game folder has:

* ``settings.yaml``: every key the game reads, in this format (copy
  ``SETTINGS_YAML_HEADER`` to the top of the file)::

      settings:
        - key: LLM_MODEL            # 大写字母、数字和下划线，也是 .env 和环境变量里的名字
          description: 大模型名称    # 说明
          default: gpt-4o-mini      # 可选；没填时用它
          required: false           # 可选，默认 false；true 时没填就不能启动
          secret: false             # 可选，默认 false；true 时是密钥，不能写 default

  The ``LLM_*`` keys (``LLM_BASE_URL``, ``LLM_API_KEY``, ``LLM_MODEL``, ``LLM_TIMEOUT``,
  ``LLM_TEMPERATURE``) are always resolved, even when ``settings.yaml`` leaves them out.
* ``config.py``: ``class Settings(AgentSettings)`` with ``llm: LLMSettings`` (inherited)
  and one field per other key: the field ``foo_bar`` reads the key ``FOO_BAR``.

Where a value comes from, lowest priority first (``resolve_values``):

1. the ``default`` in ``settings.yaml``;
2. extra ``.env`` files (``load_game_settings`` uses ``user_config_dir() / ".env"``, the
   file the settings page writes);
3. the game folder's ``.env``;
4. environment variables of the same names.

An empty value (``LLM_API_KEY=``) counts as "not set" at every level, so a copied
``.env.example`` never hides a default. A ``required`` key that is still unset after all
four levels is a ``SettingsError`` listing every missing key.

Errors: everything wrong with settings is a ``SettingsError`` whose message names the
file or the key and says how to fix it. Messages never contain secret values.

Secrets: ``LLMSettings.api_key`` is a ``SecretStr``, so ``repr``, ``str`` and
``model_dump_json`` show ``**********``; call ``get_secret_value()`` only where the key is
sent.

The ``.env`` reader and writer are :mod:`agentcade.core.dotenv`'s; the host's own
``AGENTCADE_*`` settings (time budgets, trace and recording outputs) are
:mod:`agentcade.core.host_settings`'s, read the same way (:func:`resolve_values`).

Data directories: ``user_config_dir()`` is ``<root>/config`` and ``user_data_dir(id)`` is
``user_config_dir().parent / "data" / id`` (the guide's recipe), where ``<root>`` is
``$AGENTCADE_HOME`` or the platform's per-user config folder + ``agentcade``
(``~/.config/agentcade`` on Linux).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

import platformdirs
import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from agentcade.core.dotenv import dotenv_line, not_utf8, read_dotenv
from agentcade.core.errors import SettingsError
from agentcade.core.skill import is_game_id

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

SETTINGS_YAML_HEADER = """\
# 这个游戏读取的全部配置项。每一项：
#   key          名字：大写字母开头，只用大写字母、数字和下划线；也是 .env 和环境变量里的名字
#   description  说明，告诉使用的人这一项是做什么的
#   default      默认值（可选）。没有在 .env 或环境变量里填时用它。密钥不能写默认值
#   required     是否必填（可选，默认 false）。必填项没填时游戏不能启动，所以能给默认值的尽量给
#   secret       是否是密钥（可选，默认 false）。密钥只写在 .env 或环境变量里，不会显示也不会写进日志
# 读取顺序（后面的覆盖前面的）：default < 用户配置目录的 .env < 游戏目录的 .env < 环境变量。
# LLM_BASE_URL、LLM_API_KEY、LLM_MODEL、LLM_TIMEOUT、LLM_TEMPERATURE 总会读取，这里可以不写；
# 写了就用这里的说明和默认值。config.py 里的字段 foo_bar 读取 FOO_BAR。
"""
"""Leading comment of every ``settings.yaml``: games copy it verbatim."""

_KEY_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


# --------------------------------------------------------------------------- specs


class SettingSpec(BaseModel):
    """One item of ``settings.yaml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    description: str = ""
    default: str | None = None
    required: bool = False
    secret: bool = False

    @field_validator("key")
    @classmethod
    def _key_format(cls, value: str) -> str:
        if not _KEY_RE.match(value):
            raise ValueError("key 只能用大写字母、数字和下划线，并以大写字母开头，比如 LLM_MODEL")
        return value

    @field_validator("default", mode="before")
    @classmethod
    def _scalar_default(cls, value: object) -> object:
        # YAML turns `default: 60` into an int and `default: true` into a bool; settings
        # are strings everywhere else (.env, environment), so normalise here.
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        return value


LLM_SPECS: tuple[SettingSpec, ...] = (
    SettingSpec(key="LLM_BASE_URL", description="大模型服务地址（OpenAI 兼容），比如 https://api.openai.com/v1"),
    SettingSpec(key="LLM_API_KEY", description="大模型服务的密钥", secret=True),
    SettingSpec(key="LLM_MODEL", description="大模型名称", default="gpt-4o-mini"),
    SettingSpec(key="LLM_TIMEOUT", description="每次请求大模型最多等多少秒（1 到 300）", default="60"),
    SettingSpec(key="LLM_TEMPERATURE", description="大模型的温度，0 到 2", default="0.7"),
)
"""The ``LLM_*`` keys every game resolves, with their defaults."""

LLM_KEYS: tuple[str, ...] = tuple(spec.key for spec in LLM_SPECS)


def load_settings_spec(path: Path) -> list[SettingSpec]:
    """Read and validate a ``settings.yaml``.

    Args:
        path: the file.

    Returns:
        The items in file order (an empty file or ``settings: []`` gives ``[]``).

    Raises:
        SettingsError: the file is unreadable, not YAML, or an item is invalid; the message
            starts with the path and names the item.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"{path}: 读不到这个文件（{exc.strerror or exc}）") from exc
    except UnicodeDecodeError as exc:
        raise SettingsError(not_utf8(path, exc)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SettingsError(f"{path}: 不是合法的 YAML：{exc}") from exc
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) - {"settings"}:
        raise SettingsError(f"{path}: 顶层只能有一个 settings:，下面是配置项的列表")
    items = data.get("settings") or []
    if not isinstance(items, list):
        raise SettingsError(f"{path}: settings: 下面应该是列表，每一项以 - key: 开头")
    specs: list[SettingSpec] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = f"{path}: settings 第 {index + 1} 项"
        if not isinstance(item, dict):
            raise SettingsError(f"{where} 应该是 key: ... 这样的映射")
        if isinstance(item.get("key"), str):
            where += f"（{item['key']}）"
        try:
            spec = SettingSpec.model_validate(item)
        except ValidationError as exc:
            raise SettingsError(f"{where}: {_describe_validation(exc)}") from None
        if spec.key in seen:
            raise SettingsError(f"{where}: key 重复了")
        if spec.secret and spec.default:  # an empty default is harmless
            raise SettingsError(f"{where}: 密钥（secret: true）不能写 default，填在 .env 或环境变量里")
        if spec.required and spec.default:
            raise SettingsError(f"{where}: 有 default 的项不用写 required: true，删掉其中一个")
        seen.add(spec.key)
        specs.append(spec)
    return specs


def _describe_validation(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        loc = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        parts.append(f"{loc}: {message}" if loc else message)
    return "；".join(parts)


def render_env_example(specs: Iterable[SettingSpec]) -> str:
    """The text of a ``.env.example`` for ``specs`` (descriptions as comments, no secrets)."""
    lines: list[str] = []
    for spec in specs:
        note = spec.description + ("（必填）" if spec.required else "")
        if note:
            lines.append(f"# {note}")
        lines.append(dotenv_line(spec.key, "" if spec.secret else spec.default or ""))
    return "\n".join(lines) + "\n"


ENV_EXAMPLE_HEADER = """\
# 这个游戏的配置项，由 agentcade env-example 按 settings.yaml 生成，不要手改。
# 复制成 .env（已经被 git 忽略）并填上密钥；空着的项用默认值。
"""


def env_example_specs(folder: Path) -> list[SettingSpec]:
    """What a game folder's ``.env.example`` lists: ``settings.yaml`` in file order, then
    the ``LLM_*`` keys it leaves out (every game reads them)."""
    spec_path = Path(folder) / "settings.yaml"
    specs = load_settings_spec(spec_path) if spec_path.is_file() else []
    listed = {spec.key for spec in specs}
    return [*specs, *(spec for spec in LLM_SPECS if spec.key not in listed)]


def env_example(folder: Path) -> str:
    """The text of ``folder``'s ``.env.example`` (``agentcade env-example`` writes it,
    ``check`` compares it).

    Raises:
        SettingsError: ``settings.yaml`` does not load.
    """
    return ENV_EXAMPLE_HEADER + render_env_example(env_example_specs(folder))


# --------------------------------------------------------------------------- resolution


def resolve_values(
    specs: Sequence[SettingSpec],
    *,
    game_dir: Path | None,
    environ: Mapping[str, str],
    extra_env_files: Sequence[Path] = (),
) -> dict[str, str]:
    """Resolve every declared key (plus the ``LLM_*`` keys) to a string value.

    Precedence, lowest first: ``default`` < ``extra_env_files`` (in order) <
    ``game_dir / ".env"`` < ``environ``. Only declared keys are taken from each level;
    empty values count as unset. Missing files are skipped.

    Returns:
        Key -> value for every key that has a non-empty value (unset optional keys are
        absent).

    Raises:
        SettingsError: required keys are unset (all of them are listed), or a ``.env``
            file is malformed.
    """
    declared = {spec.key: spec for spec in LLM_SPECS}
    declared.update({spec.key: spec for spec in specs})

    values = {key: spec.default for key, spec in declared.items() if spec.default}
    files = [*extra_env_files]
    if game_dir is not None:
        files.append(Path(game_dir) / ".env")
    for file in files:
        try:
            layer = read_dotenv(file)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SettingsError(f"{file}: 读不到这个文件（{exc.strerror or exc}）") from exc
        values.update({k: v for k, v in layer.items() if k in declared and v})
    values.update({k: v for k, v in environ.items() if k in declared and v})

    missing = [key for key, spec in declared.items() if spec.required and not values.get(key)]
    if missing:
        where = f"{Path(game_dir) / '.env'} 或环境变量" if game_dir is not None else "环境变量"
        raise SettingsError(f"缺少必填的配置：{', '.join(missing)}。请在 {where} 里设置")
    return values


# --------------------------------------------------------------------------- models


class LLMSettings(BaseModel):
    """How to reach an OpenAI-compatible chat-completions model.

    ``offline`` (neither key nor base URL) means the host uses the offline model.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    timeout: float = Field(default=60.0, gt=0, le=300)
    """The budget of one model call in seconds, retries included (``LLM_TIMEOUT``, 1..300)."""
    temperature: float = Field(default=0.7, ge=0, le=2)

    @property
    def offline(self) -> bool:
        """True when neither ``api_key`` nor ``base_url`` is configured."""
        return self.api_key is None and not self.base_url

    @classmethod
    def from_values(cls, values: Mapping[str, str]) -> Self:
        """Build from ``LLM_*`` keys; missing or empty keys keep their defaults.

        Raises:
            SettingsError: ``LLM_TIMEOUT`` / ``LLM_TEMPERATURE`` is not a number in range;
                the message names the key.
        """
        data: dict[str, Any] = {}
        if base_url := values.get("LLM_BASE_URL", "").strip():
            data["base_url"] = base_url
        if api_key := values.get("LLM_API_KEY", "").strip():
            data["api_key"] = SecretStr(api_key)
        if model := values.get("LLM_MODEL", "").strip():
            data["model"] = model
        for key, field, low, high in (
            ("LLM_TIMEOUT", "timeout", 1.0, 300.0),
            ("LLM_TEMPERATURE", "temperature", 0.0, 2.0),
        ):
            raw = values.get(key, "").strip()
            if raw:
                data[field] = number_in_range(key, raw, low, high)
        return cls(**data)


def number_in_range(key: str, raw: str, low: float, high: float) -> float:
    """``raw`` as a number in ``low..high``; ``inf``, ``nan`` and words are refused.

    Raises:
        SettingsError: naming ``key``, the range and the value given.
    """
    try:
        number = float(raw)
    except ValueError:
        raise SettingsError(f"{key} 应该是数字，现在是 {raw!r}") from None
    if not low <= number <= high:  # also false for nan; inf is out of every range
        raise SettingsError(f"{key} 应该在 {low:g} 到 {high:g} 之间，现在是 {raw!r}")
    return number


class AgentSettings(BaseModel):
    """Base class of a game's ``config.py`` ``Settings``.

    Every field ``foo_bar`` reads the key ``FOO_BAR``; ``llm`` reads the ``LLM_*`` keys.
    Fields keep their pydantic defaults when the key is unset::

        class Settings(AgentSettings):
            rounds: int = 5          # ROUNDS
            library_url: str | None = None
    """

    llm: LLMSettings = Field(default_factory=LLMSettings)

    @classmethod
    def from_values(cls, values: Mapping[str, str]) -> Self:
        """Build from resolved values (see ``resolve_values``).

        Raises:
            SettingsError: a value does not validate; the message names the key (not its
                value, which may be a secret) and where to change it.
        """
        data: dict[str, Any] = {}
        for name in cls.model_fields:
            if name == "llm":
                data["llm"] = LLMSettings.from_values(values)
            elif values.get(name.upper()):
                data[name] = values[name.upper()]
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                field = str(error["loc"][0]) if error["loc"] else ""
                key = field.upper() or cls.__name__
                problems.append(f"{key}：{error['msg']}")
            raise SettingsError(
                "配置不对：" + "；".join(problems) + "。请在 settings.yaml 的 default、.env 或环境变量里改正"
            ) from None

    @classmethod
    def setting_keys(cls) -> list[str]:
        """The keys this class reads (``LLM_*`` for ``llm``, ``FOO_BAR`` for ``foo_bar``)."""
        keys: list[str] = []
        for name in cls.model_fields:
            keys.extend(LLM_KEYS if name == "llm" else (name.upper(),))
        return keys


_Config = TypeVar("_Config", bound="AgentSettings")


def load_game_settings(
    config_cls: type[_Config],
    game_dir: Path | None,
    environ: Mapping[str, str] = os.environ,
    *,
    extra_env_files: Sequence[Path] | None = None,
) -> _Config:
    """Load a game's settings: ``settings.yaml`` + ``.env`` files + environment.

    Args:
        config_cls: the game's ``Settings`` class.
        game_dir: the game folder (``settings.yaml`` and ``.env`` are read from it when
            present), or None for a game without a folder.
        environ: environment variables (also consulted for ``AGENTCADE_HOME``).
        extra_env_files: lower-priority ``.env`` files; default
            ``[user_config_dir() / ".env"]``.

    Raises:
        SettingsError: invalid ``settings.yaml``, malformed ``.env``, missing required keys
            or values that do not validate.
    """
    specs: list[SettingSpec] = []
    if game_dir is not None and (Path(game_dir) / "settings.yaml").is_file():
        specs = load_settings_spec(Path(game_dir) / "settings.yaml")
    declared = {spec.key for spec in specs}
    # Fields of config.py missing from settings.yaml are still read (check reports the gap).
    specs += [SettingSpec(key=k) for k in config_cls.setting_keys() if k not in declared]
    if extra_env_files is None:
        extra_env_files = [user_config_dir(environ) / ".env"]
    values = resolve_values(
        specs, game_dir=game_dir, environ=environ, extra_env_files=extra_env_files
    )
    return config_cls.from_values(values)


def game_settings_files(game_dir: Path | None, environ: Mapping[str, str] = os.environ) -> tuple[Path, ...]:
    """Every file ``load_game_settings`` (with its default ``extra_env_files``) may read.

    Whether each exists or not: one that appears changes the settings as much as one that
    changes. Whoever keeps settings between reads watches these (``wiring.games``).
    """
    files = [user_config_dir(environ) / ".env"]
    if game_dir is not None:
        files += [Path(game_dir) / "settings.yaml", Path(game_dir) / ".env"]
    return tuple(files)


# --------------------------------------------------------------------------- folders


def _root_dir(environ: Mapping[str, str]) -> Path:
    """``$AGENTCADE_HOME``, else the platform's per-user config folder + ``agentcade``.

    The folder comes from ``platformdirs`` (which asks Windows for the roaming AppData
    known folder instead of trusting ``%APPDATA%``); the locations earlier versions
    computed by hand are the same on an ordinary machine, and where they differ (a
    redirected profile) a folder that exists only at the old place is still used, so a
    family's settings and installed games are never lost.
    """
    if home := environ.get("AGENTCADE_HOME"):
        return Path(home).expanduser()
    legacy = _legacy_root_dir(environ)
    if sys.platform not in ("win32", "darwin") and environ.get("XDG_CONFIG_HOME"):
        return legacy  # the XDG variable of the environment given (platformdirs reads os.environ)
    current = platformdirs.user_config_path("agentcade", appauthor=False, roaming=True)
    if current != legacy and not current.exists() and legacy.exists():
        return legacy
    return current


def _legacy_root_dir(environ: Mapping[str, str]) -> Path:
    """Where versions before platformdirs kept the folder (computed by hand)."""
    if sys.platform == "win32":
        base = environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(base) / "agentcade"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "agentcade"
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentcade"


def user_config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """The per-user configuration folder (not created).

    ``$AGENTCADE_CONFIG_DIR`` if set; else ``<root>/config`` where ``<root>`` is
    ``$AGENTCADE_HOME`` or ``$XDG_CONFIG_HOME/agentcade`` (``~/.config/agentcade``;
    ``~/Library/Application Support/agentcade`` on macOS, ``%APPDATA%\\agentcade`` on
    Windows).
    """
    if override := environ.get("AGENTCADE_CONFIG_DIR"):
        return Path(override).expanduser()
    return _root_dir(environ) / "config"


def user_data_dir(game_id: str, environ: Mapping[str, str] = os.environ) -> Path:
    """Where a built-in game keeps local data: ``user_config_dir().parent / "data" / id``.

    Not created; the game does ``mkdir(parents=True, exist_ok=True)`` when it writes.

    Raises:
        ValueError: ``game_id`` is not a valid game ID (it would escape the folder).
    """
    if not is_game_id(game_id):
        raise ValueError(f"not a game ID: {game_id!r}")
    return user_config_dir(environ).parent / "data" / game_id
