"""A real browser for the page tests: Debian's ``chromium`` driven by Playwright (sync API).

Playwright's sync API runs its own loop, so a whole browser session runs in one worker
thread (``trio.to_thread.run_sync``); the session calls back into the test's trio code with
``trio.from_thread.run`` (to type into ``agentcade play``, to start a server). No browser is
ever downloaded: the Debian package's ``/usr/bin/chromium`` is launched by path.

Screenshots go to ``$AGENTCADE_SCREENSHOTS`` or ``tests/screenshots/`` (git-ignored), one
at laptop width and one at phone width, for a person to look at.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import trio

from tests.needs import need_module, need_program

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

T = TypeVar("T")

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAPTOP: ViewportSize = {"width": 1280, "height": 860}
PHONE: ViewportSize = {"width": 390, "height": 844}


def screenshot_dir() -> Path:
    folder = Path(os.environ.get("AGENTCADE_SCREENSHOTS") or Path(__file__).parent / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page: Any, name: str) -> None:
    """Full-page screenshots of ``page`` at laptop and phone width (``name-laptop.png`` ...)."""
    for label, size in (("laptop", LAPTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.wait_for_timeout(150)
        page.screenshot(path=str(screenshot_dir() / f"{name}-{label}.png"), full_page=True)
    page.set_viewport_size(LAPTOP)


async def in_browser(session: Callable[[Any], T]) -> T:
    """Run ``session(page)`` in a fresh headless chromium (in a worker thread); its result."""
    need_module("playwright", install="pip install playwright")
    chromium = need_program("chromium", package="chromium")

    def run() -> T:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport=LAPTOP, locale="zh-CN")
                page.set_default_timeout(20_000)
                return session(page)
            finally:
                browser.close()

    return await trio.to_thread.run_sync(run)
