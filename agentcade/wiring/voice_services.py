"""The voice services a robot that talks uses: its recogniser and its synthesiser, reopened.

:class:`VoiceServices` opens what the voice settings name (the embedded recogniser and the
neural voice loaded side by side in worker threads, a scripted recogniser for a scenario on
the simulated robot, an SDK provider behind an asyncio bridge) and opens them again when
the settings page saves new ones (``run``; ``e2e`` opens them once).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AsyncExitStack

import trio

from agentcade.core.errors import VoiceError
from agentcade.voice.asr import Recognizer, make_recognizer
from agentcade.voice.bridge import AsyncioBridge
from agentcade.voice.config import SCRIPTED, VoiceSettings
from agentcade.voice.local_asr import LocalRecognizer
from agentcade.voice.scripted import ScriptedRecognizer
from agentcade.voice.tts import Synthesizer, open_synthesizer
from agentcade.wiring.voice import parse_over

__all__ = ["VoiceServices"]


def _warn(line: str) -> None:
    print(f"agentcade run: {line}", file=sys.stderr, flush=True)


class VoiceServices:
    """The recogniser and synthesiser the voice settings name, reopened when they change.

    The embedded recogniser and the neural voice are loaded in worker threads, side by side,
    before the robot is listened to. The recogniser is None (and :attr:`why_deaf` says why
    in one line) when the embedded one cannot load here; ``ASR_PROVIDER=scripted`` (a
    scenario on the simulated robot) takes the scenario's lines as what was heard. An SDK
    provider gets an asyncio bridge; everything is closed by :meth:`aclose` or when replaced.
    ``warn`` gets a line when the voice falls back (default: stderr).
    """

    def __init__(self, lines: list[str] | None, *, warn: Callable[[str], None] = _warn) -> None:
        self._lines = lines
        self._warn = warn
        self._stack: AsyncExitStack | None = None
        self.recognizer: Recognizer | None = None
        self.synthesizer: Synthesizer | None = None
        self.why_deaf: str | None = None

    async def open(self, settings: VoiceSettings) -> None:
        """Open what ``settings`` name, then close what was open before.

        Raises:
            VoiceError: a provider cannot be made (espeak-ng missing, an unknown one); what
                was open before stays open.
        """
        stack = AsyncExitStack()
        try:
            sdk = {settings.asr.provider, settings.tts.provider} - {
                "", "openai", "espeak", "neural", "local", SCRIPTED}
            bridge: AsyncioBridge | None = None
            if sdk:
                bridge = AsyncioBridge()
                stack.callback(bridge.close)
            voices: list[Synthesizer] = []
            ears: list[LocalRecognizer] = []
            why: list[str] = []

            async def load_voice() -> None:
                voices.append(await open_synthesizer(settings.tts, bridge=bridge, warn=self._warn))

            async def load_ears() -> None:
                try:
                    ears.append(await LocalRecognizer.load())
                except VoiceError as exc:
                    why.append(f"离线语音识别用不了（{exc}）；可以设置 ASR_PROVIDER 用一个语音识别服务")

            recognizer: Recognizer | None = None
            async with trio.open_nursery() as nursery:
                nursery.start_soon(load_voice)
                if settings.asr.provider in ("", "local"):
                    nursery.start_soon(load_ears)
            (synthesizer,) = voices
            stack.push_async_callback(synthesizer.aclose)
            if settings.asr.provider == SCRIPTED:
                if self._lines is None:
                    raise VoiceError("ASR_PROVIDER=scripted 只能用在模拟的机器人上（--robot sim 加 --say-file）")
                recognizer = ScriptedRecognizer(
                    [parse_over(line)[1] for line in self._lines], vad=settings.vad
                )
            elif settings.asr.provider in ("", "local"):
                recognizer = ears[0] if ears else None
            else:
                recognizer = make_recognizer(settings.asr, bridge=bridge)
            if recognizer is not None:
                stack.push_async_callback(recognizer.aclose)
        except BaseException:
            await stack.aclose()
            raise
        old, self._stack = self._stack, stack
        self.recognizer, self.synthesizer = recognizer, synthesizer
        self.why_deaf = why[0] if why else None
        if old is not None:
            await old.aclose()

    async def aclose(self) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
