"""The three pages as HTML: live view (``/``), settings (``/settings``), games (``/games``).

Pure functions from data to text; every value from outside is escaped here, once. The
pages work without a build step: one stylesheet and one script under ``static/``, the
forms rendered here from ``forms.Section`` so what the family sees is exactly what the
server will check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from html import escape
from typing import Any

from agentcade.game.client import is_url
from agentcade.web.forms import FormField, Section

__all__ = [
    "CAPABILITY_WORDS",
    "InstalledGame",
    "capability_words",
    "games_page",
    "live_page",
    "settings_page",
]

CAPABILITY_WORDS: dict[str, str] = {
    "light": "控制灯光",
    "animation": "播放动画",
    "behavior": "做预设的动作",
    "motion": "转头、点头、摇头",
    "expression.runtime.v3": "在屏幕上画图、显示表情",
    "resource.expression.official": "播放官方表情",
    "audio": "播放机器人自带的音效",
    "resource.work.play": "播放你保存的作品",
    "resource.work.expression.play": "播放作品里的表情",
}
"""What each capability lets a game do, in the words the install confirmation uses."""


def capability_words(capabilities: Sequence[str]) -> list[str]:
    """The capabilities in Chinese (an unknown one is named as such)."""
    return [CAPABILITY_WORDS.get(c, f"未知的能力 {c}") for c in capabilities]


@dataclass(frozen=True, slots=True)
class InstalledGame:
    """A game the robot can play, as the games page lists it."""

    id: str
    name: str
    version: str
    author: str | None
    homepage: str | None
    capabilities: tuple[str, ...]
    location: str
    kind: str
    """"builtin" (ships with the app), "remote" (installed from an address), "local" (--game)."""
    removable: bool
    problem: str | None = None
    """Why it cannot be played now (an installed game whose server does not answer)."""
    reconfirm: str | None = None
    """What changed since the family confirmed this remote game (需要重新确认), or None."""
    unreviewed: str | None = None
    """当前版本未经审核: the catalog reviewed another version than the one served, or None."""
    guarded: str | None = None
    """What the speech guard stopped it saying to a child (a remote game), in Chinese."""

    def to_json(self) -> dict[str, Any]:
        """What ``GET /api/games`` says about the game (a slots class has no ``__dict__``)."""
        data = asdict(self)
        data["capabilities"] = list(self.capabilities)
        return data


_NAV = (("/", "实时"), ("/settings", "设置"), ("/games", "游戏"))
_HREF = {"/": "/?live"}  # the live view even while a game lacks settings (``/`` sends to them)


def _layout(path: str, title: str, token: str, body: str, *, banner: str = "") -> str:
    nav = "".join(
        f'<a href="{_HREF.get(href, href)}"{" class=on aria-current=page" if href == path else ""}>{label}</a>'
        for href, label in _NAV
    )
    return (
        "<!doctype html>\n"
        '<html lang="zh-CN"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="agentcade-token" content="{escape(token)}">'
        f"<title>{escape(title)} · 小懒</title>"
        '<link rel="stylesheet" href="/static/app.css"></head>'
        f'<body data-page="{escape(path)}"><header class="top"><div class="brand">小懒 · 游戏</div>'
        f"<nav>{nav}</nav></header>{banner}<main>{body}</main>"
        '<script src="/static/app.js"></script></body></html>\n'
    )


def _missing_banner(sections: Sequence[Section], here: bool) -> str:
    games = [s for s in sections if s.missing]
    if not games:
        return ""
    names = "、".join(escape(s.title) for s in games)
    action = "在下面填好，保存后不用重启就能玩。" if here else '<a href="/settings">去设置页面填写</a>。'
    return f'<div class="banner warn" role="alert">还缺少必填的设置：{names}。{action}</div>'


# --------------------------------------------------------------------------- live


def live_page(token: str, sections: Sequence[Section] = ()) -> str:
    """The live view: filled and kept up to date by the script (``/api/live`` + ``/live``)."""
    body = (
        '<section class="card intro"><h1>实时面板</h1>'
        "<p>每一轮：听到的话、发给游戏的消息、游戏的回答、说出来的话和机器人做的动作。"
        '新的一轮会自动出现在最上面。</p><p class="status" id="live-status">正在连接…</p></section>'
        '<div id="turns" class="turns"></div>'
        '<details class="card other"><summary>其他记录（启动、连接机器人等）</summary>'
        '<ol id="other" class="records"></ol></details>'
    )
    return _layout("/", "实时面板", token, body, banner=_missing_banner(sections, here=False))


# --------------------------------------------------------------------------- settings


def _input(f: FormField) -> str:
    ident = f"f-{escape(f.key)}"
    common = f'id="{ident}" name="{escape(f.key)}" data-kind="{f.kind}"'
    if f.kind == "bool":
        current = (f.value or f.default or "").lower()
        options = "".join(
            f'<option value="{v}"{" selected" if current == v else ""}>{label}</option>'
            for v, label in (("", "（用默认）"), ("true", "是"), ("false", "否"))
        )
        return f"<select {common}>{options}</select>"
    if f.kind == "secret":
        hint = "已设置（留空就不改）" if f.is_set else "还没有设置"
        return (
            f'<input {common} type="password" autocomplete="off" placeholder="{hint}" value="">'
        )
    kinds = {"integer": 'type="text" inputmode="numeric"', "number": 'type="text" inputmode="decimal"',
             "url": 'type="url" inputmode="url"', "text": 'type="text"'}
    placeholder = f"默认：{f.default}" if f.default else ("必填" if f.required else "")
    return (
        f'<input {common} {kinds[f.kind]} autocomplete="off" spellcheck="false" '
        f'value="{escape(f.value)}" placeholder="{escape(placeholder)}">'
    )


def _field(f: FormField) -> str:
    tags = []
    if f.required:
        tags.append('<span class="tag req">必填</span>')
    if f.secret:
        tags.append(
            '<span class="tag ok">已设置</span>' if f.is_set else '<span class="tag">未设置</span>'
        )
    notes = []
    if f.missing:
        notes.append('<p class="hint warn">还没有填，这个游戏现在不能玩。</p>')
    if f.from_environment:
        notes.append(
            f'<p class="hint">已经由环境变量 {escape(f.key)} 设置；它优先，这里的修改要等它去掉才生效。</p>'
        )
    clear = ""
    if f.secret and f.is_set:
        clear = (
            f'<label class="clear"><input type="checkbox" name="__clear" value="{escape(f.key)}">'
            " 清除已保存的密钥</label>"
        )
    return (
        f'<div class="field{" missing" if f.missing else ""}" data-key="{escape(f.key)}">'
        f'<label for="f-{escape(f.key)}">{escape(f.label)} {"".join(tags)}</label>'
        f"{_input(f)}{clear}"
        f'<div class="meta"><code>{escape(f.key)}</code></div>{"".join(notes)}'
        f'<p class="error" role="alert" aria-live="polite"></p></div>'
    )


def _section(sec: Section, *, folded: bool = False) -> str:
    fields = "".join(_field(f) for f in sec.fields)
    note = f'<p class="note">{escape(sec.note)}</p>' if sec.note else ""
    extra = ""
    if sec.id == "model":
        extra = '<button type="button" class="secondary" data-action="test">测试</button>'
    form = (
        f'<form class="settings" data-section="{escape(sec.id)}" novalidate>{fields}'
        f'<p class="error form-error" role="alert"></p>'
        f'<div class="actions"><button type="submit">保存</button>{extra}</div>'
        f'<p class="status" aria-live="polite"></p></form>'
    )
    title = escape(sec.title)
    if folded:
        return (
            f'<details class="card" id="{escape(sec.id)}"><summary><h2>{title}</h2>'
            f'<span class="note">点开填写</span></summary>{note}{form}</details>'
        )
    return f'<section class="card" id="{escape(sec.id)}"><h2>{title}</h2>{note}{form}</section>'


def settings_page(token: str, sections: Sequence[Section], config_file: str) -> str:
    """Model, voice and one form per game; saving writes ``config_file``.

    Games that lack a required setting come first; games with nothing but the model's
    settings are named together in one line instead of a form each; the voice settings
    (only ``agentcade run`` reads them) are folded unless something there is missing.
    """
    general = [s for s in sections if not s.id.startswith("game-")]
    games = [s for s in sections if s.id.startswith("game-")]
    with_fields = sorted((s for s in games if s.fields), key=lambda s: not s.missing)
    plain = [s for s in games if not s.fields]
    ordered = [*(s for s in with_fields if s.missing), *general, *(s for s in with_fields if not s.missing)]
    jump = "".join(
        f'<a href="#{escape(s.id)}"{" class=warn" if s.missing else ""}>{escape(s.title)}</a>'
        for s in ordered
    ) + '<a href="#install">游戏</a>'
    cards = "".join(
        _section(s, folded=s.id == "voice" and not s.missing and not any(f.value for f in s.fields))
        for s in ordered
    )
    cards += _INSTALL_CARD.format(
        title="游戏", more='已有的游戏、卸载和“发现更多游戏”在<a href="/games">游戏</a>页面。'
    )
    if plain:
        names = "、".join(escape(s.title) for s in plain)
        cards += (
            f'<section class="card" id="games-plain"><h2>其他游戏</h2><p>{names}：'
            "只用上面“大模型”一栏的设置，没有别的要填。</p></section>"
        )
    body = (
        '<section class="card intro"><h1>设置</h1>'
        "<p>这里填大模型的地址和密钥、语音服务，以及每个游戏自己的设置。保存后下一局游戏就用新的设置，不用重启。"
        '密钥保存后不会再显示，只显示“已设置”。想安装新游戏，去<a href="/games">游戏</a>页面。</p>'
        f'<nav class="jump" aria-label="跳到">{jump}</nav>'
        f'<p class="meta">保存在 <code>{escape(config_file)}</code></p></section>'
        + cards
    )
    return _layout("/settings", "设置", token, body, banner=_missing_banner(sections, here=True))


# --------------------------------------------------------------------------- games


def _game_row(game: InstalledGame) -> str:
    kinds = {"builtin": "内置", "remote": "远程", "local": "开发中"}
    caps = capability_words(game.capabilities)
    cap_list = "".join(f"<li>{escape(c)}</li>" for c in caps) or "<li>不需要控制机器人</li>"
    homepage = (
        f'<a href="{escape(game.homepage)}" target="_blank" rel="noopener noreferrer">主页</a>'
        if game.homepage and is_url(game.homepage)
        else ""
    )
    author = f"作者：{escape(game.author)}" if game.author else ""
    if game.problem is not None:
        author += f'<p class="hint warn">现在打不开：{escape(game.problem)}</p>'
    if game.guarded is not None:
        author += f'<p class="hint warn guarded">{escape(game.guarded)}</p>'
    confirm = ""
    if game.unreviewed is not None:
        author += f'<p class="hint warn unreviewed">{escape(game.unreviewed)}</p>'
    if game.reconfirm is not None:
        author += (
            f'<p class="hint warn reconfirm"><strong>需要重新确认</strong>：{escape(game.reconfirm)}。'
            "确认之前，新加的能力不会用。</p>"
        )
        confirm = (
            f'<button type="button" data-action="confirm" data-url="{escape(game.location)}"'
            f' data-name="{escape(game.name)}">重新确认</button> '
        )

    remove = (
        f'<button type="button" class="danger" data-action="uninstall" data-url="{escape(game.location)}"'
        f' data-name="{escape(game.name)}">卸载</button>'
        if game.removable
        else ""
    )
    return (
        f'<li class="game" data-id="{escape(game.id)}"><div class="game-head">'
        f'<strong>{escape(game.name)}</strong> <span class="tag">{kinds.get(game.kind, game.kind)}</span>'
        f'{"<span class=version>版本 " + escape(game.version) + "</span>" if game.version else ""}</div>'
        f'<div class="meta">{author} {homepage}</div>'
        f'{"" if game.problem else f"<div class=caps>会用到：<ul>{cap_list}</ul></div>"}'
        f'{"<div class=meta><code>" + escape(game.location) + "</code></div>" if game.kind != "builtin" else ""}'
        f"{confirm}{remove}</li>"
    )


_INSTALL_CARD = (
    '<section class="card" id="install"><h2>{title}</h2>'
    "<p>把游戏作者给你的地址粘贴在这里，先看看游戏的信息和它要用的能力，确认后再安装。{more}</p>"
    '<form id="install-form" novalidate><div class="field" data-key="url">'
    '<label for="install-url">游戏地址</label>'
    '<input id="install-url" name="url" type="url" inputmode="url" autocomplete="off" '
    'spellcheck="false" placeholder="https://…">'
    '<p class="error" role="alert"></p></div>'
    '<div class="actions"><button type="submit">查看游戏</button></div></form>'
    '<div id="preview" class="preview" hidden></div></section>'
)


def games_page(token: str, games: Sequence[InstalledGame], problems: Sequence[str]) -> str:
    """Installed games, install by address, and the catalog (filled by the script)."""
    rows = "".join(_game_row(g) for g in games) or "<li>还没有游戏。</li>"
    trouble = "".join(f"<li>{escape(p)}</li>" for p in problems)
    trouble_html = (
        f'<div class="banner warn"><p>这些游戏没能打开：</p><ul>{trouble}</ul>'
        '<p>缺设置的去<a href="/settings">设置</a>页面填写。</p></div>'
        if trouble
        else ""
    )
    body = (
        '<section class="card intro"><h1>游戏</h1><p>小懒现在能玩的游戏，以及安装新游戏。'
        "安装和卸载马上生效，不用重启。</p></section>"
        f"{trouble_html}"
        + _INSTALL_CARD.format(title="用地址安装", more="")
        + f'<section class="card" id="installed"><h2>已有的游戏</h2><ul class="games">{rows}</ul></section>'
        '<section class="card" id="catalog"><h2>发现更多游戏</h2>'
        "<p>游戏目录里的游戏都经过审核。安装前一样会给你看它要用的能力。</p>"
        '<ul id="catalog-list" class="games"><li>正在读取游戏目录…</li></ul></section>'
    )
    return _layout("/games", "游戏", token, body)
