"""Render every 你画我猜 drawing to one PNG grid, to check the drawings by eye.

Usage::

    python build/contact_sheet.py [out.png]

The default output is ``docs/draw_guess_contact_sheet.png``. Each cell shows one drawing
scaled from the robot's 412 x 412 canvas, the safe circle in light grey, and the answer
below it (in Chinese when a CJK font is installed, else its pinyin or its index).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentcade.core.vector import CANVAS, Stroke  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "draw_guess_contact_sheet.png"
COLUMNS = 8
CELL = 206
LABEL_H = 30
SAFE_RADIUS = 190
_SUPERSAMPLE = 3


def render_drawing(
    strokes: Sequence[Stroke],
    size: int = CANVAS,
    *,
    ink: str = "black",
    paper: str = "white",
    guide: str | None = None,
) -> Image.Image:
    """Draw ``strokes`` (412 x 412 canvas coordinates) on a ``size`` x ``size`` image.

    Each stroke is a polyline at its own width with round joints and caps (a disc at
    every point), as the robot draws it. ``guide`` draws the safe circle in that colour.
    """
    big = size * _SUPERSAMPLE
    scale = big / CANVAS
    image = Image.new("RGB", (big, big), paper)
    draw = ImageDraw.Draw(image)
    if guide is not None:
        c, r = CANVAS / 2 * scale, SAFE_RADIUS * scale
        draw.ellipse((c - r, c - r, c + r, c + r), outline=guide, width=_SUPERSAMPLE)
    for stroke in strokes:
        width = max(1.0, stroke.width * scale)
        pts = [((x + 0.5) * scale, (y + 0.5) * scale) for x, y in stroke.points]
        if len(pts) > 1:
            draw.line(pts, fill=ink, width=round(width))
        radius = width / 2
        for x, y in pts:
            draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=ink)
    return image.resize((size, size), Image.Resampling.LANCZOS)


def _cjk_font(size: int) -> ImageFont.FreeTypeFont | None:
    """A font that has Chinese glyphs, if the machine has one."""
    candidates: list[str] = []
    try:
        out = subprocess.run(
            ["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=10
        ).stdout
        candidates += [line.split(":")[0].strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        pass
    candidates += [
        "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
        "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
        "/System/Library/Fonts/PingFang.ttc",
        "C:/Windows/Fonts/msyh.ttc",
    ]
    for path in candidates:
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return None


def _latin_font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default()


def _label(index: int, answer: str, cjk: bool) -> str:
    if cjk:
        return f"{index}. {answer}"
    try:
        from pypinyin import lazy_pinyin
    except ImportError:
        return f"#{index}"
    return f"{index}. {' '.join(lazy_pinyin(answer))}"


def contact_sheet(
    items: Sequence[tuple[str, Sequence[Stroke]]], columns: int = COLUMNS
) -> Image.Image:
    """One grid image of ``(label, strokes)`` items."""
    rows = max(1, -(-len(items) // columns))
    sheet = Image.new("RGB", (columns * CELL, rows * (CELL + LABEL_H)), "white")
    draw = ImageDraw.Draw(sheet)
    font = _cjk_font(20)
    cjk = font is not None
    text_font = font if font is not None else _latin_font(16)
    for i, (answer, strokes) in enumerate(items):
        x, y = (i % columns) * CELL, (i // columns) * (CELL + LABEL_H)
        sheet.paste(render_drawing(strokes, CELL, guide="#dddddd"), (x, y))
        label = _label(i + 1, answer, cjk)
        width = draw.textlength(label, font=text_font)
        draw.text((x + (CELL - width) / 2, y + CELL + 4), label, fill="black", font=text_font)
    return sheet


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0]) if args else DEFAULT_OUT
    from agentcade.games.draw_guess.drawings import ANIMALS

    sheet = contact_sheet([(a.answer, a.strokes) for a in ANIMALS])
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    print(f"{len(ANIMALS)} drawings -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
