"""Vector drawings for the robot's screen: ``Stroke``, ``encode_vector``, ``star``.

The guide's import path (``agentcade.vector``); the code lives in ``agentcade.core.vector``.
"""

from agentcade.core.vector import (
    CANVAS as CANVAS,
    MAX_POINTS as MAX_POINTS,
    MAX_STROKE_POINTS as MAX_STROKE_POINTS,
    MAX_STROKES as MAX_STROKES,
    MAX_WIDTH as MAX_WIDTH,
    Stroke as Stroke,
    VectorError as VectorError,
    decode_vector as decode_vector,
    encode_vector as encode_vector,
    star as star,
)

__all__ = [
    "CANVAS",
    "MAX_POINTS",
    "MAX_STROKES",
    "MAX_STROKE_POINTS",
    "MAX_WIDTH",
    "Stroke",
    "VectorError",
    "decode_vector",
    "encode_vector",
    "star",
]
