"""What the pages do: each route as a method from a parsed request to a ``Response``.

It serves no connection (``server.py`` owns the listening socket and moves the bytes),
but its actions are the real ones and make real outbound calls: saving
writes the user's ``.env`` with ``agentcade.core.dotenv.write_dotenv``; installing fetches the
game's card with the A2A client, opens the game in the running registry and adds it to
``games.json``; the model test sends one real request through the ``openai`` client.

Every answer to the script is JSON: ``{"ok": true, "message": ...}`` or, for a bad
submission, status 400 with ``{"errors": {field: message}}`` (``""`` for the form as a
whole) — and then nothing was written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import trio
from pydantic import ValidationError

from agentcade.a2a.client import A2AClient, GameRemoteError, negotiate_protocol
from agentcade.check.catalog import Catalog, CatalogEntry, load_catalog
from agentcade.core.dotenv import read_dotenv, write_dotenv
from agentcade.core.settings import (
    LLM_KEYS,
    LLM_SPECS,
    LLMSettings,
    SettingsError,
    SettingSpec,
    load_settings_spec,
    user_config_dir,
)
from agentcade.core.skill import Skill, SkillError
from agentcade.core.tls import client_context
from agentcade.game.client import is_url
from agentcade.game.loader import GameLoadError, builtin_games_dir, load_game
from agentcade.llm import ModelError, make_model
from agentcade.main.registry import GameRegistry
from agentcade.web.forms import Section, check_submission, section
from agentcade.web.live import LiveLog
from agentcade.web.marks import GuardMarks
from agentcade.web.pages import (
    InstalledGame,
    capability_words,
    games_page,
    live_page,
    settings_page,
)
from agentcade.wiring.registry import (
    forget_remote_game,
    installed_remote_games,
    remember_remote_game,
)
from agentcade.wiring.remote import Confirmed, RemoteGameClient

__all__ = ["STATIC_DIR", "PagesApp", "Response"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
_STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".svg": "image/svg+xml"}

_MODEL_NOTE = (
    "主 Agent 和内置游戏都用这个大模型（OpenAI 兼容的服务）。地址和密钥都不填时用离线模型："
    "能按游戏名开局，但闲聊和判定都很简单。"
)
_VOICE_NOTE = "机器人听和说用的服务（agentcade run）。保存以后 agentcade run 马上换用新的设置，不用重启。"


@dataclass(frozen=True, slots=True)
class Response:
    """One HTTP answer."""

    status: int
    body: bytes
    content_type: str = "application/json"
    location: str | None = None
    """Where a redirect (303) points."""

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Response:
        return cls(status, json.dumps(data, ensure_ascii=False).encode())

    @classmethod
    def html(cls, text: str) -> Response:
        return cls(200, text.encode(), "text/html; charset=utf-8")


class _BadRequest(Exception):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__(errors)
        self.errors = errors


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("127.0.0.1", "localhost", "::1")


def _check_url(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _BadRequest({"url": "请填游戏的地址"})
    url = value.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _BadRequest({"url": "地址要以 https:// 或 http:// 开头，比如 https://example.com/"})
    if len(url) > 2000 or any(ord(c) < 33 for c in url):
        raise _BadRequest({"url": "这不像一个地址（太长，或者有空格）"})
    return url


@dataclass
class PagesApp:
    """The pages' behaviour over the running program's registry and trace."""

    registry: GameRegistry
    live: LiveLog
    token: str
    marks: GuardMarks = field(default_factory=GuardMarks)
    """Remote games the speech guard stopped (fed by the same trace as ``live``)."""
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    catalog_path: Path | None = None
    """Default: the ``catalog.json`` next to the built-in games."""
    catalog_url: str | None = None
    on_saved: Callable[[frozenset[str]], Awaitable[None]] | None = None
    """Called after settings were written, with the keys that changed."""
    voice_required: bool | Callable[[], bool] = False
    """``agentcade run``: while the robot cannot hear, ``/`` leads to the voice settings.
    A callable says whether it cannot hear now (``run`` knows: its recogniser did not load);
    ``True`` asks the saved settings."""
    a2a: A2AClient = field(default_factory=lambda: A2AClient(reply_timeout=20, connect_timeout=10))
    saves: int = 0
    _saved: trio.Event = field(default_factory=trio.Event)

    # ------------------------------------------------------------------ plumbing

    @property
    def config_file(self) -> Path:
        return user_config_dir(self.environ) / ".env"

    @property
    def config_dir(self) -> Path:
        return user_config_dir(self.environ)

    async def wait_saved(self) -> None:
        """Wait until the family saves settings next (``agentcade run`` waits on missing ones)."""
        await self._saved.wait()

    def _saved_values(self) -> dict[str, str]:
        try:
            return read_dotenv(self.config_file)
        except FileNotFoundError:
            return {}
        except (OSError, SettingsError) as exc:
            log.warning("%s: %s", self.config_file, exc)
            return {}

    # ------------------------------------------------------------------ sections

    def _game_folders(self) -> list[Path]:
        """Local game folders: those playing and those that failed to open."""
        folders: dict[str, Path] = {}
        for info in self.registry.games:
            path = Path(info.location)
            if not is_url(info.location) and path.is_dir():
                folders.setdefault(str(path.resolve()), path)
        for target in self.registry.failed:
            path = Path(target)
            if not is_url(target) and path.is_dir():
                folders.setdefault(str(path.resolve()), path)
        return list(folders.values())

    def sections(self) -> list[Section]:
        """Every settings form, in page order: model, voice, then each local game."""
        saved = self._saved_values()
        out = [section("model", "大模型", LLM_SPECS, saved=saved, environ=self.environ,
                       note=_MODEL_NOTE, config=LLMSettings)]
        try:
            from agentcade.voice.config import voice_settings_spec

            voice = voice_settings_spec()
        except SettingsError as exc:
            log.warning("%s", exc)
            voice = []
        out.append(section("voice", "语音", voice, saved=saved, environ=self.environ, note=_VOICE_NOTE))
        for folder in self._game_folders():
            out.append(self._game_section(folder, saved))
        return out

    def _game_section(self, folder: Path, saved: Mapping[str, str]) -> Section:
        title = folder.name
        with contextlib.suppress(SkillError, OSError):
            title = Skill.load(folder / "SKILL.md").name
        specs: list[SettingSpec] = []
        note = "大模型用“大模型”一栏的设置。"
        if (folder / "settings.yaml").is_file():
            try:
                specs = [s for s in load_settings_spec(folder / "settings.yaml") if s.key not in LLM_KEYS]
            except SettingsError as exc:
                note = f"settings.yaml 有问题：{exc}"
        config = None
        with contextlib.suppress(GameLoadError, AttributeError):
            config = load_game(folder).agent_cls.config
        try:
            other = read_dotenv(folder / ".env")
        except (OSError, SettingsError):
            other = {}
        return section(f"game-{folder.name}", title, specs, saved=saved, environ=self.environ,
                       other=other, note=note, config=config)

    def _current(self, sec: Section) -> dict[str, str]:
        """Every value of ``sec`` and the LLM keys as resolved now (defaults < saved < env)."""
        saved = self._saved_values()
        values: dict[str, str] = {s.key: s.default for s in LLM_SPECS if s.default}
        for f in sec.fields:
            if f.default:
                values[f.key] = f.default
        for key in {*LLM_KEYS, *(f.key for f in sec.fields)}:
            if saved.get(key):
                values[key] = saved[key]
            if self.environ.get(key):
                values[key] = self.environ[key]
        return values

    # ------------------------------------------------------------------ routing

    async def handle(self, method: str, path: str, body: bytes) -> Response:
        """Answer one request that passed the security checks."""
        if method == "GET":
            return self.get(path)
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            return Response.json({"errors": {"": "请求不是 JSON"}}, 400)
        if not isinstance(data, dict):
            return Response.json({"errors": {"": "请求应该是一个 JSON 对象"}}, 400)
        actions: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            "/api/settings": self.save_settings,
            "/api/test-model": self.test_model,
            "/api/games/preview": self.preview_game,
            "/api/games/install": self.install_game,
            "/api/games/uninstall": self.uninstall_game,
            "/api/games/confirm": self.confirm_game,
        }
        action = actions.get(path)
        if action is None:
            return Response.json({"errors": {"": "没有这个操作"}}, 404)
        try:
            return Response.json(await action(data))
        except _BadRequest as exc:
            return Response.json({"errors": exc.errors}, 400)

    def get(self, path: str, query: str = "") -> Response:
        if path == "/":
            if self.voice_required and "live" not in query.split("&") and self._asr_missing():
                # agentcade run cannot hear anyone yet: the voice form is what to fill in.
                return Response(303, b"", "text/plain; charset=utf-8", location="/settings#voice")
            sections = self.sections()
            if any(s.missing for s in sections) and "live" not in query.split("&"):
                # The guide: while a game lacks a required setting the app stays on the
                # settings page (the live view is one click away, at /?live).
                return Response(303, b"", "text/plain; charset=utf-8", location="/settings")
            return Response.html(live_page(self.token, sections))
        if path == "/settings":
            return Response.html(settings_page(self.token, self.sections(), str(self.config_file)))
        if path == "/games":
            return Response.html(games_page(self.token, self.installed(), self._problems()))
        if path == "/api/live":
            return Response.json(self.live.snapshot())
        if path == "/api/games":
            return Response.json({"games": [g.to_json() for g in self.installed()]})
        if path.startswith("/static/"):
            name = path.removeprefix("/static/")
            file = STATIC_DIR / name
            kind = _STATIC_TYPES.get(file.suffix)
            if "/" not in name and kind is not None and file.is_file():
                return Response(200, file.read_bytes(), kind)
        return Response.json({"errors": {"": "没有这个页面"}}, 404)

    async def get_async(self, path: str) -> Response | None:
        """GET routes that need I/O (the catalog may live at an address)."""
        if path == "/api/catalog":
            return Response.json(await self.catalog())
        return None

    def _asr_missing(self) -> bool:
        if callable(self.voice_required):
            return self.voice_required()
        # Imported here: the voice stack (PyAV, Silero) is only ``agentcade run``'s, and a
        # game binary (``build-game``: serve, whose pages import this module) ships without it.
        from agentcade.voice.config import load_voice_settings

        try:
            return load_voice_settings(self.environ).missing_asr is not None
        except SettingsError:
            return True

    # ------------------------------------------------------------------ settings

    async def save_settings(self, data: dict[str, Any]) -> dict[str, Any]:
        sections = {s.id: s for s in self.sections()}
        sec = sections.get(str(data.get("section")))
        if sec is None:
            raise _BadRequest({"": "没有这一栏，请刷新页面再试"})
        values = data.get("values", {})
        clear = data.get("clear", [])
        if not isinstance(values, dict) or not isinstance(clear, list) or not all(
            isinstance(c, str) for c in clear
        ):
            raise _BadRequest({"": "表单的格式不对，请刷新页面再试"})
        result = check_submission(sec, values, clear=clear, current=self._current(sec))
        if not result.ok:
            raise _BadRequest(result.errors)
        saved = self._saved_values()
        changes = {k: v for k, v in result.updates.items() if saved.get(k) != v and (v or saved.get(k))}
        if changes:
            try:
                write_dotenv(self.config_file, changes)
            except SettingsError as exc:
                raise _BadRequest({"": str(exc)}) from None
        started = await self._retry_games()
        self.saves += 1
        self._saved.set()
        self._saved = trio.Event()
        if changes and self.on_saved is not None:
            await self.on_saved(frozenset(changes))
        message = "已保存。下一局游戏就用新的设置。" if changes else "没有改动。"
        if started:
            message += f"现在可以玩：{'、'.join(started)}。"
        return {"ok": True, "message": message, "saved": sorted(changes), "started": started}

    async def _retry_games(self) -> list[str]:
        """Open the local games that failed (their settings may be complete now)."""
        started = []
        for target in list(self.registry.failed):
            if is_url(target):
                continue
            try:
                with trio.fail_after(30):
                    info = await self.registry.open(target)
            except Exception as exc:  # noqa: BLE001 - still broken: keep the reason shown
                self.registry.failed[target] = str(exc)
                continue
            started.append(info.name)
        return started

    async def test_model(self, data: dict[str, Any]) -> dict[str, Any]:
        """One real request to the model with the form's values (saved or not)."""
        sec = next(s for s in self.sections() if s.id == "model")
        values = data.get("values", {})
        if not isinstance(values, dict):
            raise _BadRequest({"": "表单的格式不对，请刷新页面再试"})
        current = self._current(sec)
        result = check_submission(sec, values, current=current)
        if not result.ok:
            raise _BadRequest(result.errors)
        merged = dict(current)
        merged.update({k: v for k, v in result.updates.items() if v})
        settings = LLMSettings.from_values(merged)
        if settings.offline:
            return {"ok": False, "message": "还没有填大模型的地址或密钥，现在用的是离线模型。"}
        model = make_model(settings)
        started = time.monotonic()
        try:
            with trio.move_on_after(min(settings.timeout, 30) + 5) as scope:
                reply = await model.complete([{"role": "user", "content": "请只回答两个字：你好"}], [])
            if scope.cancelled_caught:
                return {"ok": False, "message": "大模型太久没有回答，请检查地址，或把超时调大。"}
        except ModelError as exc:
            return {"ok": False, "message": f"没能用上大模型：{exc}"}
        finally:
            with trio.CancelScope(shield=True):
                await model.aclose()
        ms = math.ceil((time.monotonic() - started) * 1000)
        text = reply.text.strip()[:60] or "（空的回答）"
        return {"ok": True, "message": f"连上了：{settings.model} 用 {ms} 毫秒回答了“{text}”"}

    # ------------------------------------------------------------------ games

    def installed(self) -> list[InstalledGame]:
        remote = set(self._remote_urls())
        out = []
        for info in self.registry.games:
            is_remote = is_url(info.location)
            client = self.registry.get(info.id)
            card = getattr(client, "card", None)
            author = getattr(card, "author", None)
            homepage = getattr(card, "homepage", None)
            if not is_remote:
                try:
                    skill = Skill.load(Path(info.location) / "SKILL.md")
                    author, homepage = skill.author, skill.homepage
                except (SkillError, OSError):
                    pass
            builtin = not is_remote and Path(info.location).resolve().parent == builtin_games_dir().resolve()
            out.append(InstalledGame(
                id=info.id, name=info.name, version=info.version, author=author, homepage=homepage,
                capabilities=tuple(getattr(card, "capabilities", info.capabilities)), location=info.location,
                reconfirm=_what_changed(client) if is_remote else None,
                unreviewed=self._unreviewed(info.id, info.location, info.version) if is_remote else None,
                kind="remote" if is_remote else "builtin" if builtin else "local",
                removable=is_remote and info.location in remote,
                guarded=self._guarded(info.id) if is_remote else None,
            ))
        for url in remote:
            if url in self.registry.failed and not any(g.location == url for g in out):
                out.append(InstalledGame(
                    id="", name=urlsplit(url).hostname or url, version="", author=None, homepage=None,
                    capabilities=(), location=url, kind="remote", removable=True,
                    problem=self.registry.failed[url],
                ))
        return out

    def _unreviewed(self, game_id: str, url: str, version: str) -> str | None:
        entry = self._catalog_entry(game_id, url)
        if entry is None or entry.reviewed_version == version:
            return None
        return f"当前版本未经审核（游戏目录审核过的是 {entry.reviewed_version} 版，现在是 {version} 版）"

    def _guarded(self, game_id: str) -> str | None:
        mark = self.marks.get(game_id)
        if mark is None:
            return None
        return f"小懒拦下了它的 {mark.count} 句话，没有念出来：它{mark.what}。不放心的话可以卸载它。"

    def _problems(self) -> list[str]:
        return [f"{target}：{why}" for target, why in self.registry.failed.items()]

    def _remote_urls(self) -> list[str]:
        return installed_remote_games(self.config_dir)

    async def catalog(self) -> dict[str, Any]:
        """The catalog's games (the shipped file, then the optional address's)."""
        entries: dict[str, CatalogEntry] = {}
        errors: list[str] = []
        path = self.catalog_path or builtin_games_dir() / "catalog.json"
        if path.is_file():
            loaded, problems = load_catalog(path)
            if loaded is not None:
                entries.update({e.id: e for e in loaded.games})
            errors += [p.message for p in problems]
        if self.catalog_url:
            try:
                with trio.fail_after(15):
                    async with httpx.AsyncClient(
                        timeout=10, follow_redirects=True, verify=client_context()
                    ) as http:
                        response = await http.get(self.catalog_url)
                response.raise_for_status()
                if len(response.content) > 1024 * 1024:
                    raise ValueError("the catalog is larger than 1 MiB")
                remote = Catalog.model_validate(response.json())
                entries.update({e.id: e for e in remote.games})
            except (httpx.HTTPError, trio.TooSlowError, ValueError, ValidationError) as exc:
                errors.append(f"没能读取游戏目录 {self.catalog_url}：{str(exc)[:200] or '超时'}")
        installed = {g.location for g in self.installed()}
        games = [
            {
                **e.model_dump(),
                "capability_words": capability_words(e.required_capabilities),
                "installed": e.url in installed,
                "reviewed": e.version == e.reviewed_version,
            }
            for e in entries.values()
        ]
        return {"games": games, "errors": errors}

    def _catalog_entry(self, game_id: str, url: str) -> CatalogEntry | None:
        path = self.catalog_path or builtin_games_dir() / "catalog.json"
        if not path.is_file():
            return None
        loaded, _ = load_catalog(path)
        for entry in loaded.games if loaded is not None else []:
            if entry.id == game_id or entry.url.rstrip("/") == url.rstrip("/"):
                return entry
        return None

    async def preview_game(self, data: dict[str, Any]) -> dict[str, Any]:
        """Fetch a game's card and say what installing it means."""
        url = _check_url(data.get("url"))
        try:
            with trio.fail_after(20):
                _raw, card = await self.a2a.fetch_card(url)
        except trio.TooSlowError:
            raise _BadRequest({"url": "这个地址 20 秒都没有回应，请检查地址，或者稍后再试"}) from None
        except GameRemoteError as exc:
            raise _BadRequest({"url": f"没能读到游戏的信息：{exc.message}"}) from None
        if negotiate_protocol(card) is None:
            raise _BadRequest({"url": "这个游戏用的协议版本小懒还不支持（需要 agentcade/1）"})
        warnings = []
        if urlsplit(url).scheme == "http":
            warnings.append(
                "这是本机上的游戏（开发用）。" if _is_loopback(url)
                else "这个地址用的是 http，传输不加密，别人可能看到你们和游戏说的话。"
            )
        entry = self._catalog_entry(card.game_id, url)
        if entry is None:
            warnings.append("这个游戏不在游戏目录里，没有经过审核。只安装你信任的人给的游戏。")
        elif card.version != entry.reviewed_version:
            warnings.append(f"当前版本未经审核（游戏目录审核过的是 {entry.reviewed_version} 版）。")
        existing = self.registry.get(card.game_id)
        if existing is not None and existing.info.location != url:
            warnings.append(f"会替换现在的“{existing.info.name}”。")
        return {
            "ok": True, "url": url, "id": card.game_id, "name": card.name, "version": card.version,
            "author": card.author, "homepage": card.homepage, "summary": card.summary,
            "description": card.description, "capabilities": list(card.capabilities),
            "capability_words": capability_words(card.capabilities), "warnings": warnings,
            "installed": existing is not None and existing.info.location == url,
        }

    async def install_game(self, data: dict[str, Any]) -> dict[str, Any]:
        """Open the game in the running program and remember it in ``games.json``."""
        url = _check_url(data.get("url"))
        try:
            with trio.fail_after(30):
                info = await self.registry.open(url)
        except trio.TooSlowError:
            raise _BadRequest({"url": "这个地址 30 秒都没有回应，没有安装"}) from None
        except Exception as exc:  # noqa: BLE001 - whatever failed, the family gets one line
            message = exc.message if isinstance(exc, GameRemoteError) else str(exc)
            raise _BadRequest({"url": f"没能安装：{message}"}) from None
        try:  # what the family saw and confirmed: the capabilities and the version
            confirmed = Confirmed(version=info.version, capabilities=info.capabilities)
            remember_remote_game(url, self.config_dir, confirmed=confirmed)
        except OSError as exc:
            self.registry.close(info.id)
            raise _BadRequest({"url": f"没能保存到 games.json：{exc.strerror or exc}"}) from None
        return {"ok": True, "message": f"已安装“{info.name}”，现在就可以对小懒说“我想玩{info.name}”。",
                "id": info.id, "name": info.name}

    async def confirm_game(self, data: dict[str, Any]) -> dict[str, Any]:
        """The family confirms an installed game again, as its card is now: what it
        declares is granted from its next round (the game is opened again)."""
        url = _check_url(data.get("url"))
        if url not in self._remote_urls():
            raise _BadRequest({"url": "这个游戏不是从地址安装的"})
        try:
            with trio.fail_after(20):
                _raw, card = await self.a2a.fetch_card(url)
        except trio.TooSlowError:
            raise _BadRequest({"url": "这个地址 20 秒都没有回应，请稍后再试"}) from None
        except GameRemoteError as exc:
            raise _BadRequest({"url": f"没能读到游戏的信息：{exc.message}"}) from None
        confirmed = Confirmed(version=card.version, capabilities=tuple(card.capabilities))
        try:
            remember_remote_game(url, self.config_dir, confirmed=confirmed)
        except OSError as exc:
            raise _BadRequest({"url": f"没能保存到 games.json：{exc.strerror or exc}"}) from None
        try:
            with trio.fail_after(30):
                info = await self.registry.open(url)
        except Exception as exc:  # noqa: BLE001 - confirmed and saved; it opens at the next start
            message = exc.message if isinstance(exc, GameRemoteError) else str(exc)
            raise _BadRequest({"url": f"已确认，但现在没能打开：{message}"}) from None
        return {"ok": True, "message": f"已确认“{info.name}”{info.version} 版，从下一局起可以用它要的能力。",
                "id": info.id, "capabilities": list(info.capabilities)}

    async def uninstall_game(self, data: dict[str, Any]) -> dict[str, Any]:
        url = _check_url(data.get("url"))
        if url not in self._remote_urls():
            raise _BadRequest({"url": "这个游戏不是从地址安装的，不能在这里卸载"})
        try:
            forget_remote_game(url, self.config_dir)
        except OSError as exc:
            raise _BadRequest({"url": f"没能改 games.json：{exc.strerror or exc}"}) from None
        names = [g.name for g in self.registry.games if g.location == url]
        for game in [g for g in self.registry.games if g.location == url]:
            self.registry.close(game.id)
        return {"ok": True, "message": f"已卸载“{'、'.join(names) or url}”。"}


def _what_changed(client: object) -> str | None:
    """需要重新确认: how an installed game's card differs from what the family confirmed."""
    if not isinstance(client, RemoteGameClient) or not client.needs_confirmation:
        return None
    assert client.confirmed is not None
    changes = []
    if client.card.version != client.confirmed.version:
        changes.append(f"版本从 {client.confirmed.version} 变成了 {client.card.version}")
    if client.withheld:
        changes.append("它还想" + "、".join(capability_words(client.withheld)))
    return "；".join(changes)
