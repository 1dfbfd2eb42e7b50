"""The turn-taking machine, driven by event sequences (no audio, no trio)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest

from agentcade.voice.tuning import TUNING, Tuning
from agentcade.voice.turn_taking import (
    Abandon,
    BargeIn,
    Deaf,
    Decision,
    Drop,
    End,
    Event,
    Frame,
    Hold,
    Recognised,
    Release,
    Speculate,
    State,
    TurnTaking,
    TurnTakingError,
    Waiting,
)

MS = 60.0
"""One microphone frame."""


def run(machine: TurnTaking, events: Iterable[Event]) -> list[Decision]:
    decisions: list[Decision] = []
    for event in events:
        decisions += machine.feed(event)
    return decisions


def voice(n: int, *, start_voiced: float = 0.0, **robot: bool | float) -> list[Frame]:
    """``n`` frames of voice after a start (voiced time grows by a frame each)."""
    return [Frame("voice", MS, start_voiced + MS * (i + 1), 0.0, **robot)  # type: ignore[arg-type]
            for i in range(n)]


def silence(n: int, *, voiced: float, kind_last: str = "voice", **robot: bool) -> list[Frame]:
    """``n`` frames of silence at the end of an utterance of ``voiced`` ms."""
    frames = [Frame("voice", MS, voiced, MS * (i + 1), **robot) for i in range(n)]
    if kind_last == "end":
        last = frames[-1]
        frames[-1] = Frame("end", MS, voiced, last.silence_ms, **robot)
    return frames


START = Frame("start", MS, 96.0)
OVER_ROBOT = Frame("start", MS, 64.0, speaking=True, audible=True)


def test_a_voice_begun_in_the_quiet_is_heard_to_its_end_without_touching_the_robot() -> None:
    machine = TurnTaking()
    decisions = run(machine, [Frame("quiet", MS, 0), START, *voice(5, start_voiced=96),
                              *silence(14, voiced=396, kind_last="end")])
    assert decisions == [End(False, None, 396, 14 * MS)]
    assert machine.state is State.ENDED


def test_a_voice_over_the_robot_pauses_it_until_it_goes_on_after_the_robots_voice_left() -> None:
    machine = TurnTaking()
    assert run(machine, [OVER_ROBOT]) == [Hold(64, False)]
    assert machine.held
    # The robot's voice is still in the frames: undecided however long (short of confirm_long).
    assert run(machine, voice(2, start_voiced=64, audible=True)) == []
    # It left the frames: confirm_ms more of the voice (from the first frame without it)
    # make it a child's.
    frames = voice(4, start_voiced=184)
    assert frames[-2].voiced_ms - frames[0].voiced_ms < TUNING.confirm_ms
    assert frames[-1].voiced_ms - frames[0].voiced_ms >= TUNING.confirm_ms
    decisions = run(machine, frames)
    assert decisions == [BargeIn(frames[-1].voiced_ms, confirmed=True)]
    assert machine.state is State.HEARING


def test_a_voice_over_the_robot_that_falls_silent_first_was_its_own_echo() -> None:
    machine = TurnTaking()
    run(machine, [OVER_ROBOT])
    decisions = run(machine, silence(3, voiced=64, audible=True))
    assert decisions == [Release(64)]
    assert machine.state is State.RELEASED
    with pytest.raises(TurnTakingError):
        machine.feed(Frame("voice", MS, 64, 0))


@pytest.mark.parametrize(("loud_frames", "child"), [(2, True), (1, False)])
def test_a_short_voice_louder_than_the_robots_echo_could_be_is_a_childs(
    loud_frames: int, child: bool,
) -> None:
    # 七 over the robot: over before the robot's voice left the frames; what makes it a
    # child's is how long it was louder than the echo could be (two 60 ms frames: 120 ms).
    machine = TurnTaking()
    run(machine, [OVER_ROBOT])
    loud = voice(loud_frames, start_voiced=64, audible=True, louder=True, periodicity=0.8)
    rest = silence(3, voiced=loud[-1].voiced_ms, audible=True)
    decisions = run(machine, [*loud, *rest])
    assert isinstance(decisions[0], BargeIn if child else Release)


def test_a_noise_louder_than_the_robots_echo_that_is_no_voice_is_not_a_childs() -> None:
    # A television's burst over the robot's onset: louder than the echo could be, but its
    # sound does not repeat at a voice's pitch.
    machine = TurnTaking()
    run(machine, [OVER_ROBOT])
    loud = voice(3, start_voiced=64, audible=True, louder=True, periodicity=0.15)
    rest = silence(3, voiced=loud[-1].voiced_ms, audible=True)
    assert [type(d) for d in run(machine, [*loud, *rest])] == [Release]


def test_a_noise_that_goes_on_after_the_robot_paused_for_it_is_not_a_childs() -> None:
    # The burst outlasts the robot's voice in the frames: voiced time after the robot's voice
    # left them would make it a child's, but none of it is a voice's.
    machine = TurnTaking()
    run(machine, [OVER_ROBOT])
    burst = voice(6, start_voiced=64, heard_over_echo=True, periodicity=0.12)
    rest = silence(3, voiced=burst[-1].voiced_ms)
    assert [type(d) for d in run(machine, [*burst, *rest])] == [Release]


def test_a_voice_that_goes_on_after_the_robot_paused_for_it_is_a_childs() -> None:
    machine = TurnTaking()
    run(machine, [OVER_ROBOT])
    child = voice(6, start_voiced=64, heard_over_echo=True, periodicity=0.8)
    assert [type(d) for d in run(machine, child)] == [BargeIn]


def test_the_frame_that_started_it_counts_when_the_microphone_heard_it_over_the_echo() -> None:
    machine = TurnTaking()
    start = Frame("start", MS, 64, speaking=True, audible=True, heard_over_echo=True,
                  periodicity=0.9)
    run(machine, [start])
    decisions = run(machine, voice(1, start_voiced=64, audible=True, louder=True, periodicity=0.9))
    assert decisions == [BargeIn(124, confirmed=True)]


def test_a_voice_begun_with_the_robots_echo_taken_out_is_a_childs_sooner() -> None:
    taken = Frame("start", MS, 96, speaking=True, audible=True, taken_out=True)
    machine = TurnTaking()
    assert run(machine, [taken]) == [Hold(96, True)]
    more = Frame("voice", MS, 96 + TUNING.confirm_clean_ms, 0, speaking=True, audible=True)
    assert run(machine, [more]) == [BargeIn(more.voiced_ms, confirmed=True)]


def test_a_voice_that_goes_on_long_enough_is_a_childs_whatever_is_in_the_frames() -> None:
    machine = TurnTaking()
    run(machine, [OVER_ROBOT])
    frames = voice(7, start_voiced=64, speaking=True, audible=True)
    decisions = run(machine, frames)
    assert decisions == [BargeIn(64 + 7 * MS, confirmed=True)]
    assert 64 + 6 * MS - 64 < TUNING.confirm_long_ms <= 64 + 7 * MS - 64


def test_a_robot_that_cannot_be_paused_is_stopped_at_once() -> None:
    machine = TurnTaking(can_hold=False)
    assert run(machine, [OVER_ROBOT]) == [BargeIn(64, confirmed=False)]
    assert machine.state is State.HEARING


def test_the_robot_beginning_to_speak_while_a_child_talks_is_stopped_once() -> None:
    machine = TurnTaking()
    run(machine, [START])
    decisions = run(machine, [Waiting(speaking=True), *voice(3, start_voiced=96, speaking=True)])
    assert decisions == [BargeIn(96, confirmed=False)]


def test_a_pause_is_recognised_at_once_and_an_actionable_text_ends_the_line_early() -> None:
    machine = TurnTaking(speculative=True)
    run(machine, [START, *voice(3, start_voiced=96)])
    pause = silence(1, voiced=276)
    assert run(machine, pause) == [Speculate(1, 276, MS)]
    assert run(machine, [Recognised(1, actionable=True)]) == [End(True, 1, 276, MS)]
    assert machine.state is State.ENDED


def test_a_child_who_goes_on_after_a_pause_abandons_its_recognition() -> None:
    machine = TurnTaking(speculative=True)
    run(machine, [START, *voice(3, start_voiced=96), *silence(1, voiced=276)])
    decisions = run(machine, [Frame("voice", MS, 336, 0.0)])
    assert decisions == [Abandon(1)]
    # Its text, late, is not the line's; the line's end waits for the detector.
    assert run(machine, [Recognised(1, actionable=True)]) == []
    decisions = run(machine, silence(14, voiced=336, kind_last="end"))
    assert decisions[0] == Speculate(2, 336, MS)
    assert decisions[-1] == End(False, 2, 336, 14 * MS)


def test_a_round_number_waits_for_its_units_before_it_is_acted_on() -> None:
    machine = TurnTaking(speculative=True)
    run(machine, [START, *voice(2, start_voiced=96), *silence(1, voiced=216)])
    assert run(machine, [Recognised(1, actionable=True, may_go_on=True)]) == []
    waited = [f for f in silence(12, voiced=216)[1:] if f.silence_ms <= TUNING.number_wait_ms]
    decisions = run(machine, waited)
    assert decisions == [End(True, 1, 216, waited[-1].silence_ms)]
    assert waited[-2].silence_ms < TUNING.number_wait_ms <= waited[-1].silence_ms


def test_half_duplex_drops_a_voice_the_robot_spoke_over() -> None:
    machine = TurnTaking()
    assert run(machine, [Deaf(), START]) == []
    assert run(machine, [*voice(2), Deaf()]) == [Drop()]
    assert machine.state is State.DROPPED


@pytest.mark.parametrize("event", [
    Frame("voice", MS, 0),
    Frame("end", MS, 0),
    Recognised(1, actionable=True),
])
def test_events_that_cannot_happen_before_a_start_are_refused(event: Event) -> None:
    with pytest.raises(TurnTakingError):
        TurnTaking().feed(event)


def test_a_second_start_inside_an_utterance_is_refused() -> None:
    machine = TurnTaking()
    machine.feed(START)
    with pytest.raises(TurnTakingError):
        machine.feed(START)


def test_a_recognition_finishing_after_the_end_changes_nothing() -> None:
    machine = TurnTaking(speculative=True)
    run(machine, [START, *voice(2, start_voiced=96), *silence(14, voiced=216, kind_last="end")])
    assert machine.state is State.ENDED
    assert machine.feed(Recognised(1, actionable=True)) == []


RECORDED = Path(__file__).parent / "data" / "turn_taking"
"""Event sequences the listener told the machine on the simulated robot in its default room
(``tests/bench/bench_rooms.py --events``: the robot reading, lines said over it)."""


def _recorded(name: str) -> list[Event]:
    data = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    fields = data["fields"][1:]
    events: list[Event] = []
    for row in data["rows"]:
        if row[0] == "Frame":
            values = dict(zip(fields, row[1:], strict=True))
            flags = {k: bool(v) for k, v in values.items() if k not in ("kind", "ms", "voiced_ms",
                                                                        "silence_ms", "periodicity")}
            # Recorded before periodicity was measured: its louder frames count as they did then
            periodicity = float(values.get("periodicity", 1.0))
            events.append(Frame(values["kind"], values["ms"], values["voiced_ms"],
                                values["silence_ms"], **flags, periodicity=periodicity))
        elif row[0] == "Waiting":
            events.append(Waiting(bool(row[1])))
        else:
            events.append(Deaf())
    return events


def _replay(events: list[Event], tuning: Tuning = TUNING) -> list[Decision]:
    """Every utterance in ``events`` through a machine of its own, as the listener does."""
    decisions: list[Decision] = []
    machine = TurnTaking(tuning=tuning)
    for event in events:
        if machine.done:
            machine = TurnTaking(tuning=tuning)
        if machine.state is State.LISTENING and isinstance(event, Frame) and event.kind in (
                "voice", "end"):
            continue  # the recording began inside an utterance
        decisions += machine.feed(event)
    return decisions


@pytest.mark.parametrize("name", ["over_robot_end_game.json", "over_robot_dont_know.json"])
def test_a_recorded_line_over_the_robot_pauses_it_then_stops_it(name: str) -> None:
    decisions = [d for d in _replay(_recorded(name)) if isinstance(d, Hold | BargeIn | Release)]
    assert isinstance(decisions[0], Hold)
    assert decisions[1] == BargeIn(decisions[1].voiced_ms, confirmed=True)


def test_the_robots_own_voice_that_paused_it_while_it_read_is_released() -> None:
    """Recorded on a loaded host: the robot reading alone paused itself three times; twice
    what paused it fell silent and the robot went on (the third, confirmed, is one of the
    self-interruptions the room matrix counts)."""
    decisions = [d for d in _replay(_recorded("robot_reading_alone.json"))
                 if isinstance(d, Hold | BargeIn | Release)]
    assert [type(d) for d in decisions] == [Hold, BargeIn, Hold, Release, Hold, Release]


def test_a_televisions_noise_bursts_over_the_robots_onsets_do_not_stop_it() -> None:
    """Recorded in the room matrix's television room before periodicity counted: its bursts,
    louder than the robot's echo could be where the robot's sentences began, confirmed a
    child and stopped the robot six times; a voice's pitch is what they lack."""
    events = _recorded("robot_reading_television.json")
    assert not [d for d in _replay(events) if isinstance(d, BargeIn)]
    before = replace(TUNING, loud_periodicity=0.0)
    assert [d for d in _replay(events, before) if isinstance(d, BargeIn)]


def test_a_slower_confirmation_in_the_table_confirms_a_recorded_line_later() -> None:
    """The table is the machine's only knob: a value changed there changes what it decides."""
    events = _recorded("over_robot_end_game.json")
    slow = replace(TUNING, confirm_ms=512, confirm_loud_ms=512, confirm_clean_ms=512,
                   confirm_long_ms=1024)
    confirmed = {}
    for name, machine in (("table", TurnTaking()), ("slow", TurnTaking(tuning=slow))):
        for event in events:
            if machine.state is State.LISTENING and isinstance(event, Frame) and event.kind in (
                    "voice", "end"):
                continue
            barge = [d for d in machine.feed(event) if isinstance(d, BargeIn)]
            if barge:
                confirmed[name] = barge[0].voiced_ms
                break
    assert confirmed["table"] < confirmed["slow"]
