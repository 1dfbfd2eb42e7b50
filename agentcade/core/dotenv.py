"""``.env`` files: the subset agentcade reads, and the one writer that keeps a file's lines.

:func:`read_dotenv` parses ``KEY=VALUE`` lines (comments, ``export``, quotes and escapes as
its docstring says); :func:`write_dotenv` changes or removes keys in place, keeping every
other line, and replaces the file atomically. Reading a game's settings
(:mod:`agentcade.core.settings`) reads them; the settings page writes the user's one.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from agentcade.core.errors import SettingsError

__all__ = ["dotenv_line", "not_utf8", "read_dotenv", "write_dotenv"]

_DOTENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def read_dotenv(path: Path) -> dict[str, str]:
    """Parse a ``.env`` file.

    The accepted subset: ``KEY=VALUE`` lines, blank lines, ``#`` comments (whole-line, or
    after an unquoted value when preceded by a space), an optional ``export`` prefix,
    values in single quotes (literal) or double quotes (``\\n``, ``\\t``, ``\\"`` and
    ``\\\\`` escapes). Surrounding whitespace of unquoted values is dropped. A later line
    wins over an earlier one with the same key.

    Raises:
        FileNotFoundError: (and other ``OSError``) the file cannot be read.
        SettingsError: a line is not ``KEY=VALUE``, or the file is not UTF-8 text; the
            message gives ``path:line``.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SettingsError(not_utf8(path, exc)) from None
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("export ", "export\t")):
            line = line[len("export") :].lstrip()
        key, sep, rest = line.partition("=")
        key = key.strip()
        if not sep or not _DOTENV_KEY_RE.match(key):
            raise SettingsError(f"{path}:{number}: 应该写成 KEY=VALUE，比如 LLM_MODEL=gpt-4o-mini")
        try:
            values[key] = _dotenv_value(rest.strip())
        except ValueError as exc:
            raise SettingsError(f"{path}:{number}: {key} 的值{exc}") from None
    return values


def not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """The one line for a settings file in another encoding (GBK from Notepad, binary)."""
    line = exc.object[: exc.start].count(b"\n") + 1
    return f"{path}:{line}: 不是 UTF-8 文本，请用 UTF-8 编码另存这个文件"


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _dotenv_value(rest: str) -> str:
    if rest[:1] in ("'", '"'):
        quote = rest[0]
        out: list[str] = []
        i = 1
        while i < len(rest):
            char = rest[i]
            if char == quote:
                tail = rest[i + 1 :].strip()
                if tail and not tail.startswith("#"):
                    raise ValueError("在引号后面还有多余的内容")
                return "".join(out)
            if quote == '"' and char == "\\" and i + 1 < len(rest):
                out.append(_ESCAPES.get(rest[i + 1], "\\" + rest[i + 1]))
                i += 2
                continue
            out.append(char)
            i += 1
        raise ValueError("少了结尾的引号")
    return re.split(r"\s#", rest, maxsplit=1)[0].strip()


_PLAIN_VALUE_RE = re.compile(r"^[A-Za-z0-9_./:@+,=-]*$")


def dotenv_line(key: str, value: str) -> str:
    """``KEY=value``, quoted when needed so ``read_dotenv`` gives ``value`` back exactly."""
    if _PLAIN_VALUE_RE.match(value):
        return f"{key}={value}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{key}="{escaped}"'


def write_dotenv(path: Path, updates: Mapping[str, str | None]) -> None:
    """Set (or, with ``None``, remove) keys in a ``.env`` file, keeping everything else.

    Other lines, comments and their order stay as they were; a changed key is rewritten
    in place (its later duplicates dropped), a new key is appended. The file is replaced
    atomically (a crash leaves the old or the new file, never half of one) and, because it
    holds secrets, is readable by its owner only where the platform supports it.

    Raises:
        SettingsError: a value has a line break or another control character (it could
            not be read back), or the file cannot be read or written.
    """
    for key, value in updates.items():
        if not _DOTENV_KEY_RE.match(key):
            raise SettingsError(f"{key!r} 不是合法的配置名")
        if value is not None and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise SettingsError(f"{key} 的值里不能有换行或控制字符")
    path = Path(path)
    try:
        old = path.read_text(encoding="utf-8-sig").splitlines() if path.exists() else []
    except OSError as exc:
        raise SettingsError(f"{path}: 读不到这个文件（{exc.strerror or exc}）") from exc
    pending = dict(updates)
    done: set[str] = set()
    lines: list[str] = []
    for raw in old:
        stripped = raw.strip()
        body = stripped[len("export") :].lstrip() if stripped.startswith(("export ", "export\t")) else stripped
        key = body.partition("=")[0].strip() if "=" in body and not stripped.startswith("#") else ""
        if key in pending:
            if key not in done and pending[key] is not None:
                lines.append(dotenv_line(key, pending[key] or ""))
            done.add(key)
            continue
        lines.append(raw)
    lines += [dotenv_line(k, v) for k, v in pending.items() if k not in done and v is not None]
    text = "\n".join(lines) + ("\n" if lines else "")
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        with contextlib.suppress(OSError):  # Windows: permissions are the folder's
            tmp.chmod(0o600)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SettingsError(f"{path}: 写不进去（{exc.strerror or exc}）") from exc
