"""The linear model of the robot's echo (agentcade.voice.echo_model) and what the canceller,
the detector and the listener do with it."""

from __future__ import annotations

import numpy as np

from agentcade.voice.echo import EchoCanceller
from agentcade.voice.echo_model import EchoModel
from agentcade.voice.pcm import rms

RATE = 16000
ROOM = ((0, 0.3), (368, 0.3 * 0.35), (816, 0.3 * 0.15))
"""The simulated room's echo: the direct path, then two reflections (samples, gain)."""


def _voice(rng: np.random.Generator, n: int, level: float = 3000.0) -> np.ndarray:
    """Something with a voice's spectrum tilt: noise, low-passed, at RMS ``level``."""
    sound = np.convolve(rng.normal(0.0, 1.0, n + 8), np.ones(8) / 8, "valid")[:n]
    return sound * level / np.sqrt(np.mean(sound**2))


def _heard(played: np.ndarray, at: int, total: int) -> np.ndarray:
    """What the room returns of ``played`` whose direct path arrives at ``at``."""
    out = np.zeros(total)
    for delay, gain in ROOM:
        a = at + delay
        out[a:a + len(played)] += gain * played[: max(0, min(len(played), total - a))]
    return out


def _pcm(x: np.ndarray) -> bytes:
    return np.clip(np.rint(x), -32768, 32767).astype(np.int16).tobytes()


def _sentences(lags: list[int], *, seconds: float = 1.5, quiet: np.ndarray | None = None,
               quiet_at: int = 0, fan: float = 700.0, loudest: float | None = None,
               ) -> tuple[EchoModel, list[tuple[int, bytes, bool]], int]:
    """A model fed sentences (one per lag, each placed ``lag`` after where it is laid) over a
    fan, in 60 ms frames; returns it and each frame (where, what it left, clean).
    ``loudest``: the echo is clipped there (a speaker driven too hard: not linear)."""
    rng = np.random.default_rng(5)
    n = int(seconds * RATE)
    gap = RATE // 2
    total = len(lags) * (n + gap) + RATE
    mic = rng.normal(0.0, fan, total)
    model = EchoModel()
    laid = []
    for i, lag in enumerate(lags):
        at = gap + i * (n + gap)
        voice = _voice(rng, n)
        heard = _heard(voice, at + lag, total)
        mic += heard if loudest is None else np.clip(heard, -loudest, loudest)
        laid.append((at, lag, _pcm(voice)))
    if quiet is not None:
        mic[quiet_at:quiet_at + len(quiet)] += quiet
    pcm = _pcm(mic)
    frames = []
    for start in range(0, total - 960, 960):
        for at, lag, clip in laid:
            if at == start or start < at < start + 960:
                model.lay(at, clip)
                model.place(at, lag)
        near = pcm[2 * start:2 * (start + 960)]
        cleaned, clean = model.cancel(start, near)
        model.learn(fan)
        frames.append((start, cleaned, clean))
    return model, frames, n + gap


def test_the_model_takes_the_robots_echo_out_down_to_the_rooms_noise() -> None:
    # Each sentence comes back a different number of samples after where it was laid, as a
    # robot's do: placed by its echo, the room's response is the same for all.
    model, frames, step = _sentences([1280, 1310, 1262, 1345, 1290, 1301])
    assert model.trusted
    last = step * 5 + RATE // 2 + 1345
    during = [rms(out) for at, out, _ in frames if last + 960 <= at < last + step - RATE]
    assert during
    assert np.median(during) < 700 * 1.1  # the fan's noise alone: the echo is gone
    assert all(clean for at, _, clean in frames if last <= at < last + step - RATE)


def test_a_voice_quieter_than_the_robots_echo_is_left_standing() -> None:
    rng = np.random.default_rng(9)
    quiet = _voice(rng, RATE // 2, 750.0)
    lags = [1280, 1310, 1262, 1345, 1290, 1301]
    step = int(1.5 * RATE) + RATE // 2
    at = step * 5 + RATE // 2 + 1301 + RATE // 2
    _, frames, _ = _sentences(lags, quiet=quiet, quiet_at=at)
    inside = [(a, out) for a, out, _ in frames if at <= a < at + RATE // 2 - 960]
    left = np.concatenate([np.frombuffer(out, np.int16) for _, out in inside]).astype(np.float64)
    voice = quiet[inside[0][0] - at:][: len(left)]
    assert np.corrcoef(left, voice)[0, 1] > 0.6  # it is most of what is left
    assert rms(_pcm(left)) > 700 * 1.3


def test_the_model_is_not_trusted_before_it_has_learned_the_room() -> None:
    model, frames, _ = _sentences([1280])
    assert not model.trusted
    assert not any(clean for _, _, clean in frames)


def test_what_the_model_leaves_must_be_lost_in_the_rooms_noise_for_it_to_be_trusted() -> None:
    # An echo the model cannot quite follow (clipped) leaves a little of the robot's voice:
    # under a fan nobody hears it; in a quiet room Silero would.
    lags = [1280, 1310, 1262, 1345, 1290, 1301]
    assert _sentences(lags, loudest=2000.0)[0].trusted
    assert not _sentences(lags, loudest=2000.0, fan=30.0)[0].trusted


def test_a_sentence_whose_echo_was_not_found_is_never_clean() -> None:
    model, frames, _ = _sentences([1280, 1310, 1262, 1345])
    assert model.trusted
    voice = _pcm(_voice(np.random.default_rng(1), RATE))
    at = frames[-1][0] + 960
    model.lay(at, voice)  # never placed
    near = bytes(2 * 960)
    assert not model.cancel(at + 1300, near)[1]
    assert model.cancel(at + RATE + RATE // 4 + 1100, near)[1]  # its echo is over


def test_stopping_the_sound_cuts_the_model_at_the_present() -> None:
    model = EchoModel()
    model.lay(1000, bytes(2 * 8000))
    model.place(1000, 1280)
    model.cut(3000)
    assert [len(c.pcm) for c in model._clips] == [2000]
    model.cut(500)
    assert model._clips == []


def test_the_canceller_places_each_sentence_in_the_model_by_its_echo() -> None:
    # The canceller's own placing (as for AEC3) tells the model where each echo is.
    rng = np.random.default_rng(3)
    n, gap = 24000, 8000
    lags = [1280, 1300, 1270, 1310, 1290, 1285]
    total = len(lags) * (n + gap) + RATE
    mic = rng.normal(0.0, 700.0, total)
    clips = {}
    for i, lag in enumerate(lags):
        at = gap + i * (n + gap)
        at -= at % 960
        voice = _voice(rng, n)
        clips[at] = _pcm(voice)
        mic += _heard(voice, at + lag, total)
    pcm = _pcm(mic)
    echo = EchoCanceller()
    clean: list[tuple[int, bool, float]] = []
    for i in range(0, len(pcm) - 1919, 1920):
        if (clip := clips.get(i // 2)) is not None:
            echo.play(clip)
        echo.arrived(pcm[i:i + 1920])
        if echo.process(pcm[i:i + 1920]):
            clean.append((i // 2, echo.clean, rms(echo.last_clean)))
    last = max(clips) + lags[-1]
    during = [(c, level) for at, c, level in clean if last + 4800 <= at < last + n - 1920]
    assert during
    assert all(c for c, _ in during)
    assert np.median([level for _, level in during]) < 700 * 1.15


def test_the_rooms_response_is_solved_as_a_general_solver_would() -> None:
    from agentcade.voice.echo_model import _toeplitz_solve

    rng = np.random.default_rng(4)
    sound = _voice(rng, 20000)
    r = np.array([sound[k:] @ sound[:len(sound) - k] for k in range(64)])
    r[0] *= 1.01
    b = rng.normal(size=64)
    matrix = r[np.abs(np.subtract.outer(np.arange(64), np.arange(64)))]
    assert np.allclose(_toeplitz_solve(r, b), np.linalg.solve(matrix, b), rtol=1e-8, atol=1e-12)


def test_what_the_model_leaves_is_measured_only_where_the_echo_stands_out_of_the_room() -> None:
    # Where the robot's voice is quieter than the room, what the model leaves of it is lost
    # in the room whatever the model is worth: such frames would make any model look good.
    model, _, _ = _sentences([1280, 1310, 1262, 1345])
    rng = np.random.default_rng(3)
    for laid, level, measured in ((10**6, 3000.0, True), (2 * 10**6, 300.0, False)):
        voice = _voice(rng, 4 * 960, level)
        model.lay(laid, _pcm(voice))
        model.place(laid, 1300)
        at = laid + 1300 + 960
        heard = _heard(voice, 0, 4 * 960 + 1300)[960:1920] + rng.normal(0.0, 700.0, 960)
        model.cancel(at, _pcm(heard))
        assert model.learn(700.0) is measured
