"""The simulated child's voice: what speaks the scenario's lines into the simulated microphone.

The neural voice by default, a third higher than the robot's (f0 x1.3): a natural voice is
what a real recogniser must hear (Whisper base hears almost nothing of espeak-ng's short
lines), and a pitch apart from the robot's keeps the child and the robot's echo two voices,
as in a family room. ``--room child=espeak`` keeps espeak-ng's voice.
"""

from __future__ import annotations

from agentcade.sim.room import Room
from agentcade.voice.tts import EspeakSynthesizer, NeuralSynthesizer, Synthesizer

__all__ = ["CHILD_PITCH", "MICROPHONE_RATE", "child_voice"]

MICROPHONE_RATE = 16000
CHILD_PITCH = 1.3


async def child_voice(room: Room | None = None) -> Synthesizer:
    """The voice ``room`` names for the child, at the microphone's rate.

    Raises:
        VoiceError: the voice cannot be loaded (espeak-ng missing, the neural models
            unavailable): a scenario cannot be spoken.
    """
    if room is not None and room.child == "espeak":
        return EspeakSynthesizer(rate=MICROPHONE_RATE)
    return await NeuralSynthesizer.load(rate=MICROPHONE_RATE, pitch=CHILD_PITCH)
