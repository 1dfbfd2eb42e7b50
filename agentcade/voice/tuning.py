"""Every knob of the listening path, in one table: what each one trades.

Hearing a family over the robot's own voice is a handful of judgements — is this sound a
voice, is it the robot's echo or a child, has the child finished, is what they said worth
acting on before they go on — and each one is a threshold or a duration that trades one
failure for another: a child missed against the robot stopping itself, a quick answer
against a line cut in half. Until now they lived in four modules in two styles, each tuned
on one bench's room, and nobody could see what traded against what. Here each is written
once, with one line saying what it trades; the stories of how each value was measured are
in ``docs/tuning.md``. ``settings.yaml`` and the settings page take their defaults for the
four user settings (``VAD_*``) from here (:data:`SETTING_KNOBS`).

Sans-IO: no trio, no I/O. Every part of the listening path takes a :class:`Tuning`
(:data:`TUNING` by default), so a benchmark can judge another value on the same sound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["MIC_RATE", "SETTING_KNOBS", "TUNING", "Tuning"]

MIC_RATE = 16000
"""The microphone's sample rate (mono s16le) everywhere on the listening path: the robot's
frames, the echo canceller, voice detection and the recognisers."""


@dataclass(frozen=True)
class Tuning:
    """The knobs; each docstring says what raising it buys and what it costs."""

    # --- voice detection (voice.vad) ------------------------------------------------------
    detector: Literal["silero", "loudness"] = "silero"
    """Which detector judges frames (``VAD_DETECTOR``): Silero's model, or the SDK's loudness."""
    threshold: float = 550
    """Loudness detector only: RMS of a voiced frame — higher: fewer noises taken for a voice,
    more quiet children missed (``VAD_THRESHOLD``)."""
    silence_ms: int = 800
    """Silence that ends an utterance when nothing ended it early — longer: fewer children cut
    off mid-line, a slower answer to open lines (``VAD_SILENCE_MS``)."""
    pre_roll_ms: int = 300
    """Audio kept from before a start — longer: a soft first syllable kept, more noise given
    to the recogniser (``VAD_PRE_ROLL_MS``)."""
    max_ms: int = 30_000
    """The longest utterance — longer: a long story heard whole, a stuck voice held longer
    (``VAD_MAX_MS``)."""
    speech_prob: float = 0.5
    """Silero's probability from which a chunk is speech in a quiet room — lower: quieter
    children found, more noises started."""
    quiet_prob: float = 0.35
    """Silero's probability under which a chunk is silence (between the two: no change) —
    higher: utterances end sooner, a soft tail counted as silence."""
    min_speech_ms: int = 96
    """Speech in a row that starts an utterance in a quiet room — longer: clicks and bangs
    ignored, a one-syllable answer found later."""
    over_speech_prob: float = 0.4
    """Silero's probability from which a chunk is speech while the robot speaks and its echo
    is well taken out — lower: a quiet child over the robot found, the robot's residue taken
    for a child."""
    over_speech_ms: int = 64
    """Speech in a row that starts an utterance over the robot — longer: fewer self-starts,
    a child stops the robot later."""
    over_echo_ms: int = 64
    """The same when the sound is louder than the robot's echo could be (somebody else) —
    longer: fewer starts on bangs, a child louder than the echo stops it later."""
    heard_prob: float = 0.9
    """Silero's probability on the microphone's own samples (the model of the echo taken
    out) from which a chunk over the robot is speech when the microphone is louder than the
    echo and the room could make it (``heard_over_echo``) — lower: a child the canceller's
    suppressor thinned found sooner, the robot's residue under a noise burst taken for one."""
    warming_prob: float = 0.9
    """``over_speech_prob`` while the canceller is still learning, just after the robot's
    voice began, or while the host is behind — lower: a child found in those moments, the
    robot's onsets taken for a child."""
    warming_ms: int = 256
    """``over_speech_ms`` in the same moments — shorter: a child found sooner, more
    self-starts on onsets."""
    resume_prob: float = 0.5
    """``over_speech_prob`` just after the robot's voice resumed inside a sentence — lower:
    a child found there, the resumed voice's residue taken for a child."""
    resume_ms: int = 64
    """``over_speech_ms`` in the same moments."""
    residual_chunks: int = 96
    """Silero chunks (32 ms) of what the model of the echo leaves that say whether Silero
    hears it — more: a surer trust of the model, trust found later in a session."""

    # --- turn-taking (voice.turn_taking) --------------------------------------------------
    speculate_ms: int = 32
    """Silence after the voice before what was said is recognised — longer: fewer
    recognitions thrown away on mid-line pauses, a slower answer."""
    number_wait_ms: int = 480
    """Silence after a round number (十, 二十) before it is acted on — longer: 十……五 heard
    as 15 after a longer pause, a bare 十 answered later."""
    confirm_ms: int = 128
    """Voice after the robot paused for it, with the robot's voice out of the frames, that
    makes it a child's — longer: fewer releases of the robot's residue taken for a child,
    a short answer missed."""
    confirm_long_ms: int = 384
    """Voice after the hold that makes it a child's whatever may still be in the frames —
    longer: a busy host's late stop not taken for a child, a child held longer."""
    confirm_loud_ms: int = 120
    """Voice louder than the robot's echo could be that makes it a child's — longer: fewer
    bangs confirmed, a one-syllable 七 released."""
    loud_periodicity: float = 0.25
    """How much a louder frame must repeat at a voice's pitch to count towards a confirmation
    (``confirm_loud_ms``, and as voiced time for ``confirm_ms`` and ``confirm_long_ms``) —
    higher: fewer noise bursts (a television, a door) taken for a child, a child whose voice
    a fan's noise blurs confirmed later or released."""
    confirm_clean_ms: int = 64
    """Voice begun on a clean microphone (the echo modelled out) that makes it a child's —
    longer: surer, a quiet one-syllable answer missed."""
    release_ms: int = 160
    """Silence after the hold that makes the voice no child's: the robot goes on — longer: a
    child who breathes mid-word kept, the robot paused longer for its own residue."""
    voiced_enough_s: float = 0.25
    """Voice in an utterance that gave no words for it to be a child (answered 没听清) rather
    than a noise — lower: fewer children unanswered, more noises answered."""
    echo_tail_s: float = 0.3
    """Half duplex: how long after the robot stops the microphone is still ignored — longer:
    less of its echo heard, a child's quick answer lost."""

    # --- the echo canceller (voice.echo) --------------------------------------------------
    onset_ms: int = 600
    """After the robot begins a sentence, how long a start over it asks for more — longer:
    fewer self-starts on onsets, a child over a sentence's start found later."""
    resume_after_pause_ms: int = 300
    """After its voice resumes inside a sentence, how long a start asks for more (as
    ``onset_ms``)."""
    pause_ms: int = 120
    """A pause of the robot's voice that makes the next sound a resume — shorter: more
    resumes guarded, more of the sentence guarded."""
    far_quiet: float = 200.0
    """RMS under which the robot's own 10 ms of voice counts as a pause of it."""
    converged_ms: int = 10_000
    """The robot's voice AEC3 must hear before it is trusted — longer: fewer self-starts in a
    session's first sentences, a child over them found later."""
    behind_ms: int = 300
    """How late a frame may be processed before the host counts as behind (a start then asks
    for more) — lower: fewer self-starts on a starved host, a child found later there."""
    max_lag_s: float = 2.0
    """How far the present may be carried past the last frame read."""
    align_window_ms: int = 120
    """How much of a sentence's echo is matched to place it — longer: surer placing, frames
    held longer."""
    align_voice_ms: int = 600
    """How far into a sentence its voice is looked for to place it by."""
    align_search_ms: tuple[int, int] = (0, 250)
    """Where a sentence's echo is looked for before the room's lag is known — wider: a far
    echo found, more chance of a wrong match."""
    align_spread_ms: int = 30
    """Once the lag is known, how far from it an echo is looked for."""
    align_learn: int = 3
    """Sentences searched over the whole range before the room's lag narrows the search."""
    align_min_match: float = 0.2
    """Least correlation that counts as the echo found — higher: fewer misplaced sentences,
    more left where the clock put them."""
    model_min_match: float = 0.3
    """Least correlation that places a sentence in the model of the echo — higher: the model
    trusted less often, fewer misplaced sentences judged as a child."""
    lag_memory: int = 9
    """Sentences whose median lag and gain are the room's — more: steadier against one
    sentence found far off, slower to follow a room that changed."""
    align_give_up: int = 3
    """Sentences in a row without an echo found after which none is aligned."""
    over_echo: float = 1.5
    """How much louder than the echo could be the canceller's output must be to be somebody
    else — lower: a child found sooner, bangs and the echo's peaks taken for a child."""
    heard_over_echo: float = 2.0
    """How much louder than the echo and the room the microphone must be to hold somebody
    else — lower: a child whose voice the suppressor thinned found, the echo's peaks too."""
    own_voice_periodicity: float = 0.5
    """How much the robot's voice heard now must repeat at its pitch for a louder sound at
    that pitch to be taken for it (its onsets, where the echo is underestimated) — lower:
    more of its onsets told from a child, a child's voice over a breathy sentence taken for
    the robot's."""
    same_pitch: float = 0.04
    """How near the robot's pitch (a share of the period; an octave off counts) a louder sound
    must be to be the robot's own voice — wider: more of its onsets told from a child, a child
    speaking at the robot's pitch taken for it."""
    room_levels: int = 50
    """Frames without the robot's voice whose median is the room's noise."""
    echo_tail_frames: int = 12
    """10 ms frames of the robot's voice before the room's lag whose reverb may still be heard."""
    echo_early_frames: int = 6
    """10 ms frames after the room's lag that may already be heard (a sentence placed late)."""
    echo_after_ms: int = 150
    """How long after its reference ended the robot's voice may still be heard (the reverb)."""

    # --- the model of the robot's echo (voice.echo_model) ---------------------------------
    model_taps: int = 1024
    """The room's response in samples (64 ms) — longer: more reverb modelled, slower solves."""
    model_pre: int = 64
    """Of which before where the echo was found (a sentence found a little late)."""
    model_learn_s: float = 2.0
    """Seconds of echo learned from between two solutions — shorter: follows a changing room,
    more CPU."""
    model_forget: float = 0.8
    """What earlier echo counts at each solution — lower: follows a changing room, noisier."""
    model_ridge: float = 0.01
    """Regularisation, a share of the voice's energy: what it barely played is not fitted to
    the fan."""
    trust_left: float = 0.45
    """The most of the echo the model may leave to be trusted — higher: the model (which keeps
    a quiet child) trusted more, its residue taken for a child more."""
    trust_masked: float = 0.7
    """... and the most of the room's noise what it leaves may be (as ``trust_left``)."""
    model_quiet_rms: float = 100.0
    """RMS under which the robot's voice (or the room) is too quiet to learn the echo from or
    measure what the model leaves — higher: learns only from clear echo, learns slower."""
    trust_frames: int = 64
    """Frames whose median says what the model leaves — more: surer, trust found later."""


TUNING = Tuning()
"""The values the product runs with."""

SETTING_KNOBS = {
    "VAD_DETECTOR": "detector",
    "VAD_THRESHOLD": "threshold",
    "VAD_SILENCE_MS": "silence_ms",
    "VAD_PRE_ROLL_MS": "pre_roll_ms",
    "VAD_MAX_MS": "max_ms",
}
"""The knobs a family may set (``settings.yaml``), by setting name: their defaults are these."""


def setting_default(key: str) -> str | None:
    """The default of a voice setting that is a knob, as ``settings.yaml`` writes values."""
    name = SETTING_KNOBS.get(key)
    if name is None:
        return None
    value = getattr(TUNING, name)
    return f"{value:g}" if isinstance(value, float) else str(value)
