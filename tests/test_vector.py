"""``agentcade.core.vector`` against the robot SDK's own ``custom_vector_path`` validator."""

from __future__ import annotations

import random

import pytest
from watcherobot.robot import ExpressionRuntimeDomain, _expression_custom_vector_path

from agentcade.core.vector import (
    MAX_COORD,
    MAX_POINTS,
    MAX_STROKE_POINTS,
    MAX_STROKES,
    MAX_WIDTH,
    Stroke,
    VectorError,
    decode_vector,
    encode_vector,
)


def sdk_accepts(path: str) -> bool:
    try:
        _expression_custom_vector_path(path)
    except ValueError:
        return False
    return True


def raw(strokes: list[tuple[int, list[tuple[int, int]]]]) -> str:
    """A hand-built path with no checks at all (robot-sdk.md §2's reference encoder)."""
    out = bytearray([1, len(strokes)])
    for width, points in strokes:
        out += bytes([width, len(points)])
        for x, y in points:
            out += x.to_bytes(2, "big") + y.to_bytes(2, "big")
    return out.hex()


def random_drawing(rng: random.Random) -> list[Stroke]:
    strokes: list[Stroke] = []
    budget = rng.choice([MAX_POINTS, rng.randint(1, MAX_POINTS)])
    for _ in range(rng.randint(0, MAX_STROKES)):
        if budget == 0:
            break
        n = rng.randint(1, min(MAX_STROKE_POINTS, budget))
        budget -= n
        points = [
            (rng.choice([0, MAX_COORD, rng.randint(0, MAX_COORD)]), rng.randint(0, MAX_COORD))
            for _ in range(n)
        ]
        strokes.append(Stroke(points, width=rng.choice([1, MAX_WIDTH, rng.randint(1, MAX_WIDTH)])))
    return strokes


def test_worked_example_from_the_sdk_notes() -> None:
    strokes = [
        Stroke([(100, 100), (300, 100)], width=4),
        Stroke([(206, 50), (206, 200), (250, 250)], width=8),
    ]
    path = encode_vector(strokes)
    assert path == "0102040200640064012c0064080300ce003200ce00c800fa00fa"
    assert _expression_custom_vector_path(path) == path
    assert decode_vector(path) == strokes


def test_empty_drawing_is_the_expression_lab_default() -> None:
    assert encode_vector([]) == "0100"
    assert sdk_accepts("0100")
    assert decode_vector("0100") == []


def test_random_drawings_match_the_sdk() -> None:
    rng = random.Random(20240607)
    for _ in range(400):
        strokes = random_drawing(rng)
        path = encode_vector(strokes)
        assert sdk_accepts(path), strokes
        assert decode_vector(path) == strokes
        # The SDK's full argument builder agrees (and lowercases nothing: we emit lowercase).
        payload = ExpressionRuntimeDomain._build_payload(custom_vector_path=path)
        assert payload == {"custom_vector_path": path}


def test_every_limit_exactly() -> None:
    corners = [(0, 0), (MAX_COORD, MAX_COORD), (0, MAX_COORD), (MAX_COORD, 0)]
    cases = {
        "12 strokes": [Stroke([(5, 5)], width=1) for _ in range(MAX_STROKES)],
        "width 1 and 48": [Stroke([(5, 5)], width=1), Stroke([(6, 6)], width=MAX_WIDTH)],
        "48 points in a stroke": [Stroke([(i, i) for i in range(MAX_STROKE_POINTS)])],
        "192 points in all": [Stroke([(i, 2 * i) for i in range(48)]) for _ in range(4)],
        "12 strokes, 192 points": [Stroke([(1, 1)] * 16, width=MAX_WIDTH) for _ in range(12)],
        "coordinates 0 and 411": [Stroke(corners * 12, width=1)],
    }
    for name, strokes in cases.items():
        path = encode_vector(strokes)
        assert sdk_accepts(path), name
        assert decode_vector(path) == strokes, name
    assert len(encode_vector(cases["12 strokes, 192 points"])) == 1588  # the SDK's maximum


def test_one_past_each_limit_fails_here_and_in_the_sdk() -> None:
    # 13 strokes
    with pytest.raises(VectorError, match="13 strokes"):
        encode_vector([Stroke([(1, 1)]) for _ in range(MAX_STROKES + 1)])
    assert not sdk_accepts(raw([(1, [(1, 1)])] * (MAX_STROKES + 1)))
    # 193 points in all (4 x 48 + 1)
    too_many = [Stroke([(2, 2)] * MAX_STROKE_POINTS) for _ in range(4)] + [Stroke([(3, 3)])]
    with pytest.raises(VectorError, match="193 points"):
        encode_vector(too_many)
    assert not sdk_accepts(raw([(6, [(2, 2)] * 48)] * 4 + [(6, [(3, 3)])]))
    # 49 points in one stroke, and 0 points
    with pytest.raises(VectorError, match="49 points"):
        Stroke([(1, 1)] * (MAX_STROKE_POINTS + 1))
    assert not sdk_accepts(raw([(6, [(1, 1)] * 49)]))
    with pytest.raises(VectorError, match="0 points"):
        Stroke([])
    assert not sdk_accepts(raw([(6, [])]))
    # width 0 and 49
    for width in (0, MAX_WIDTH + 1):
        with pytest.raises(VectorError, match="width"):
            Stroke([(1, 1)], width=width)
        assert not sdk_accepts(raw([(width, [(1, 1)])]))
    # coordinate 412 on either axis, and -1
    for point in ((MAX_COORD + 1, 0), (0, MAX_COORD + 1)):
        with pytest.raises(VectorError, match="off the canvas"):
            Stroke([point])
        assert not sdk_accepts(raw([(6, [point])]))
    with pytest.raises(VectorError, match="off the canvas"):
        Stroke([(-1, 5)])


def test_bad_values_are_refused() -> None:
    for bad in ([(1.5, 2)], [(True, 2)], [(1, 2, 3)], [("1", 2)]):
        with pytest.raises(VectorError):
            Stroke(bad)  # type: ignore[arg-type]
    with pytest.raises(VectorError):
        Stroke([(1, 1)], width=True)


@pytest.mark.parametrize(
    "path",
    [
        "",
        "01",
        "0",
        "010",
        "0200",  # version 2
        "01 00",  # bytes.fromhex would accept the space; the SDK does not
        "zz00",
        "0101",  # a stroke header is missing
        "01010601",  # points missing
        "0101060100010001ff",  # trailing byte
        "010d" + "0601" + "00010001" * 13,  # 13 strokes
    ],
)
def test_decode_refuses_what_the_sdk_refuses(path: str) -> None:
    assert not sdk_accepts(path)
    with pytest.raises(VectorError):
        decode_vector(path)


def test_decode_accepts_uppercase_like_the_sdk() -> None:
    path = "0102040200640064012C0064080300CE003200CE00C800FA00FA"
    assert sdk_accepts(path)
    assert encode_vector(decode_vector(path)) == path.lower()


def test_random_bytes_decode_exactly_when_the_sdk_accepts() -> None:
    rng = random.Random(7)
    for _ in range(300):
        strokes = random_drawing(rng)
        data = bytearray.fromhex(encode_vector(strokes))
        if data and rng.random() < 0.7:
            i = rng.randrange(len(data))
            data[i] = rng.randrange(256)  # corrupt one byte
        path = data.hex()
        try:
            decode_vector(path)
            ours = True
        except VectorError:
            ours = False
        assert ours == sdk_accepts(path), path


def test_the_star_is_one_closed_stroke_of_eleven_points_the_robot_accepts() -> None:
    from agentcade.core.vector import star

    [stroke] = decode_vector(star())
    assert len(stroke.points) == 11
    assert stroke.points[0] == stroke.points[-1] == (206, 56)
    assert stroke.width == 10
