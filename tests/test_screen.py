"""Issue 23: the live view shows the robot's screen as a picture and its moves in words.

``ScreenReader`` reads a turn's directives as the game sent them; ``LiveLog`` attaches what
it read to each directive the robot ran (``shown``), so the page can draw the screen.
"""

from __future__ import annotations

import re
from typing import Any

from agentcade.core.allowlist import FRONT_PAN, FRONT_TILT
from agentcade.core.protocol import Directive
from agentcade.core.vector import Stroke, encode_vector, star
from agentcade.device.effects import _moves, kaomoji, stroke_steps
from agentcade.web.live import LiveLog
from agentcade.web.screen import STANDBY_EYES, ScreenReader, svg_of


def update(path: str) -> dict[str, Any]:
    return Directive(call="expression_runtime.update", kwargs={"custom_vector_path": path}).to_wire()


def move(pan: int, tilt: int) -> dict[str, Any]:
    return Directive(call="motion.move_to", kwargs={"pan_deg": pan, "tilt_deg": tilt, "duration_ms": 300}).to_wire()


def test_a_shake_and_a_nod_read_as_shake_and_nod() -> None:
    reader = ScreenReader()
    shake = [reader.read(move(p, t)) for p, t, _ in _moves("shake_head")]
    nod = [reader.read(move(p, t)) for p, t, _ in _moves("nod")]
    assert [s.words for s in shake if s] == ["摇头"] * 4 + ["头转回正前方"]
    assert [s.words for s in nod if s] == ["点头"] * 4 + ["头转回正前方"]
    assert reader.read(move(FRONT_PAN, FRONT_TILT)).words == "头转回正前方"  # type: ignore[union-attr]


def test_lights_read_as_their_colour() -> None:
    reader = ScreenReader()
    green = reader.read(Directive(call="lights.set_color", args=["#00ff00"]).to_wire())
    off = reader.read(Directive(call="lights.off").to_wire())
    assert green is not None
    assert green.words == "亮绿灯"
    assert off is not None
    assert off.words == "关灯"


def test_a_drawing_step_by_step_counts_its_strokes_and_each_step_is_a_picture() -> None:
    strokes = [Stroke([(50 + 30 * i, 100), (50 + 30 * i, 300)], width=8) for i in range(3)]
    reader = ScreenReader()
    steps = [reader.read(update(encode_vector(step))) for step in stroke_steps(strokes)]
    assert [(s.words, s.strokes, s.step) for s in steps if s] == [
        ("屏幕上显示一个图案（1 笔）", 1, False), ("画第 2 笔", 2, True), ("画第 3 笔", 3, True),
    ]
    last = steps[-1]
    assert last is not None
    assert last.svg is not None
    assert last.svg.count("<polyline") == 3


def test_the_kaomoji_and_the_standby_eyes_are_pictures_too() -> None:
    reader = ScreenReader()
    happy = reader.read(update(encode_vector(kaomoji("happy"))))
    eyes = reader.read(Directive(call="expression_runtime.update", kwargs={"preset": "standby", "accessory": "none"}).to_wire())
    assert happy is not None
    assert happy.svg == svg_of(kaomoji("happy"))
    assert eyes is not None
    assert eyes.words == "回到待机的眼睛"
    assert eyes.svg == svg_of(STANDBY_EYES)


def test_the_svg_is_made_of_numbers_only() -> None:
    svg = svg_of([Stroke([(206, 206)], width=12), *[Stroke([(1, 2), (3, 4)], width=5)]])
    assert svg.startswith('<svg class="screen"')
    assert '<circle cx="206" cy="206" r="6" fill="#fff"/>' in svg
    text = re.sub(r'"[^"]*"', '""', svg)
    assert {word.lower() for word in re.findall(r"[A-Za-z]+", text)} <= {"svg", "class", "xmlns", "viewbox", "role", "aria", "label",
                                                 "circle", "cx", "cy", "r", "fill", "polyline", "points",
                                                 "stroke", "width", "linecap", "linejoin"}


def test_the_live_log_shows_what_an_executed_directive_drew() -> None:
    log = LiveLog()
    wire = update(star())
    short = Directive.model_validate(wire).describe()
    log({"type": "game_reply", "request_id": "r1", "directives": [short], "directive_data": [wire], "ts": 1})
    log({"type": "directive_executed", "request_id": "r1", "directive": short, "outcome": "ok", "ts": 2})
    reply, executed = log.snapshot()["turns"][0]["records"]
    assert "directive_data" not in reply  # the full path is read, not kept
    assert executed["shown"]["words"] == "屏幕上显示一个图案（1 笔）"
    assert executed["shown"]["svg"] == svg_of([Stroke(_star_points(), width=10)])


def _star_points() -> list[tuple[int, int]]:
    from agentcade.core.vector import decode_vector

    return list(decode_vector(star())[0].points)
