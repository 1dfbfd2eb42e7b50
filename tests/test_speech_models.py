"""The speech models inside the one-file executable: kept in its archive, copied out once.

The archives here are written by PyInstaller's own archive writer (the one that builds the
executable), between a stand-in for the bootloader before and a stand-in for a code
signature after; ``tests/test_executable.py`` runs the real executable.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentcade.voice import models
from agentcade.voice.models import BAKER_VOICE, BUNDLE_FOLDER, ModelMissing, archive_entries
from tests.needs import need_module, need_speech_models


def _executable(path: Path, entries: list[tuple[str, Path, bool, str]]) -> Path:
    """A file laid out as a one-file executable: bootloader, PyInstaller archive, signature."""
    need_module("PyInstaller", install="pip install -e '.[build]'")
    from PyInstaller.archive.writers import CArchiveWriter  # type: ignore[import-untyped]

    archive = path.with_suffix(".pkg")
    CArchiveWriter(str(archive), [(name, str(src), compress, kind) for name, src, compress, kind in entries],
                   "libpython3.11.so.1.0")
    path.write_bytes(b"\x7fELF" + bytes(70_000) + archive.read_bytes() + b"SIGNATURE" * 30_000)
    return path


def test_the_kept_entries_are_found_with_where_their_bytes_are(tmp_path: Path) -> None:
    kept = tmp_path / "kept.bin"
    kept.write_bytes(bytes(range(256)) * 1000)
    data = tmp_path / "data.txt"
    data.write_text("unpacked at every start\n" * 100, encoding="utf-8")
    exe = _executable(tmp_path / "agentcade", [
        ("games/riddle/SKILL.md", data, True, "x"),  # unpacked by the bootloader: not listed
        (f"{BUNDLE_FOLDER}/m/kept.bin", kept, False, "a"),
    ])
    entries = archive_entries(exe)
    assert list(entries) == [f"{BUNDLE_FOLDER}/m/kept.bin"]
    offset, length = entries[f"{BUNDLE_FOLDER}/m/kept.bin"]
    with exe.open("rb") as f:
        f.seek(offset)
        assert f.read(length) == kept.read_bytes()


def test_a_file_without_an_archive_has_no_entries(tmp_path: Path) -> None:
    plain = tmp_path / "python"
    plain.write_bytes(b"\x7fELF" + bytes(100_000))
    assert archive_entries(plain) == {}


def _frozen(monkeypatch: pytest.MonkeyPatch, exe: Path, models_dir: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    monkeypatch.setenv("AGENTCADE_MODELS_DIR", str(models_dir))


def _voice_entries(source: Path) -> list[tuple[str, Path, bool, str]]:
    return [(f"{BUNDLE_FOLDER}/{BAKER_VOICE.name}/{name}", source / name, False, "a")
            for name, _digest, _size in BAKER_VOICE.files]


def test_the_executable_copies_a_model_out_once_and_checks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = need_speech_models() / BAKER_VOICE.name
    exe = _executable(tmp_path / "agentcade", _voice_entries(source))
    _frozen(monkeypatch, exe, tmp_path / "models")

    folder = models.baker_voice_dir()
    assert folder == tmp_path / "models" / BAKER_VOICE.name
    for name, _digest, _size in BAKER_VOICE.files:
        assert (folder / name).read_bytes() == (source / name).read_bytes()
    stamp = (folder / ".verified").stat().st_mtime_ns
    exe.unlink()  # the second start finds the checked copy, not the executable
    assert models.baker_voice_dir() == folder
    assert (folder / ".verified").stat().st_mtime_ns == stamp


def test_a_model_that_is_not_the_known_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = need_speech_models() / BAKER_VOICE.name
    altered = tmp_path / "altered"
    altered.mkdir()
    for name, _digest, _size in BAKER_VOICE.files:
        content = bytearray((source / name).read_bytes())
        if name == "mb_melgan.tflite":
            content[len(content) // 2] ^= 1  # one bit, same size
        (altered / name).write_bytes(bytes(content))
    exe = _executable(tmp_path / "agentcade", _voice_entries(altered))
    _frozen(monkeypatch, exe, tmp_path / "models")

    with pytest.raises(ModelMissing, match="校验失败"):
        models.baker_voice_dir()
