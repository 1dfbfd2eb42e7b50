"""Judging a robot step of ``scenarios.yaml`` (``agentcade e2e``) from the trace records of
what the host did with its line: where it was routed, whether code judged it, the head's
gesture, what was said and never said, the device calls, the answer revealed and kept, the
screen put back, busy and cancelled turns, a drawing complete before the words that announce
it. The steps themselves are loaded by :mod:`agentcade.check.scenarios`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agentcade.check.scenarios import Gesture, Step, said_and_run

__all__ = ["gesture_of", "judge_robot_step"]


def gesture_of(records: Sequence[dict[str, Any]]) -> Gesture:
    """The head gesture the robot made, from its executed ``motion.move_to`` directives:
    pans to and fro is a shake, tilts a nod."""
    pans, tilts = set(), set()
    for r in records:
        if r["type"] == "directive_executed" and r["call"] == "motion.move_to" and not r.get("reset"):
            text = str(r["directive"])
            pan = re.search(r"pan_deg=(\d+)", text)
            tilt = re.search(r"tilt_deg=(\d+)", text)
            if pan:
                pans.add(pan.group(1))
            if tilt:
                tilts.add(tilt.group(1))
    if len(pans) > 1:
        return "shake"
    if len(tilts) > 1:
        return "nod"
    return "none"


def judge_robot_step(
    step: Step,
    records: Sequence[dict[str, Any]],
    *,
    revealed: str | None,
    secrets: Sequence[str],
    heard: bool,
    shown: bool,
    playing: bool,
) -> list[str]:
    """What went wrong with one robot step, from the trace records of what the host did
    with its line (``agentcade e2e``).

    ``revealed``: the answer that must be said; ``secrets``: what the game still keeps
    hidden after the line (its ``unrevealed()``), none of which may have been said;
    ``shown``: the game ran something on the robot, so the screen must be put back;
    ``playing``: a game still runs after the line.
    """
    said = "".join(str(r["text"]) for r in records if r["type"] == "speech_text")
    problems: list[str] = []
    problem = problems.append
    if not heard:
        return ["not heard"]
    routes = [r for r in records if r["type"] == "main_route"]
    if step.route is not None:
        got = routes[0]["route"] if routes else "none"
        if got != step.route:
            problem(f"routed {got}, expected {step.route}")
        elif step.game is not None and routes[0].get("game") != step.game:
            problem(f"started {routes[0].get('game')}, expected {step.game}")
    turns = [r for r in records if r["type"] == "turn"]
    if step.judged is not None:
        judged = bool(turns and turns[-1].get("judged"))
        if judged != step.judged:
            problem("judged by code" if judged else "not judged by code")
    if step.gesture is not None and (got_gesture := gesture_of(records)) != step.gesture:
        problem(f"gesture {got_gesture}, expected {step.gesture}")
    if not said:
        problem("nothing was said")
    calls = [str(r["call"]) for r in records if r["type"] == "directive_executed" and not r.get("reset")]
    problems += said_and_run(step, said, calls)
    if step.session is not None and playing != (step.session == "active"):
        problem("the game still runs" if playing else "the game ended")
    if revealed is not None and revealed not in said:
        problem(f"the answer {revealed} was not said")
    if any(secret and secret in said for secret in secrets):
        problem("the hidden answer was said")
    if step.standby and shown and not any(r["type"] == "session_reset" for r in records):
        problem("the screen was not put back after the game")
    if step.busy and not any(r["type"] == "busy" for r in records):
        problem("not answered as busy")
    if step.cancels and not any(r["type"] == "turn_cancelled" for r in records):
        problem("the turn in flight was not cancelled")
    if step.drawn_before is not None:
        frames = [i for i, r in enumerate(records) if r["type"] == "directive_executed"
                  and str(r["call"]).startswith("expression_runtime")]
        done = [i for i, r in enumerate(records) if r["type"] == "speech_start"
                and re.search(step.drawn_before, str(r["sentence"]))]
        if not frames or not done or max(frames) > done[0]:
            problem(f"the drawing was not complete before /{step.drawn_before}/")
    return problems
