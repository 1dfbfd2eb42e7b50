"""The neural Mandarin voice: FastSpeech2 + Multi-band MelGAN (TensorFlowTTS, trained on the
Baker corpus) run on LiteRT (``ai-edge-litert``), 24 kHz, offline.

Why LiteRT and a rewrite: the models are TensorFlow Lite flatbuffers made in 2020, and
FastSpeech2 holds two TF-Select ops, ``FlexRandomUniform`` (dropout left on at inference, on
the f0/energy embeddings). TensorFlow itself is 1.6 GB, and the TensorFlow that still runs Flex
ops is old; LiteRT (~20 MB) has a builtin ``RANDOM_UNIFORM`` with the same inputs and outputs.
:func:`builtin_random_uniform` points the model's operator code at that builtin, in memory,
at load time (milliseconds): the flatbuffer is not re-serialised, a new ``OperatorCode`` table
is appended and the operator-code vector's entry aimed at it (flatbuffer offsets point
forward, so a table at the end is reachable from anywhere).

:class:`NeuralVoice` is blocking and not thread-safe (LiteRT interpreters are not): the
synthesizer (:class:`agentcade.voice.tts.NeuralSynthesizer`) runs it in a worker thread, one
call at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcade.core.errors import VoiceError
from agentcade.voice.phones import clauses, phones, to_ids

__all__ = ["RATE", "SAID_BYTES", "LiteRtMissing", "NeuralVoice", "Said", "builtin_random_uniform",
           "operator_codes"]

RATE = 24000
RANDOM_UNIFORM = 148
"""LiteRT's builtin operator code (schema ``BuiltinOperator.RANDOM_UNIFORM``)."""
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127
_RANDOM_OPTIONS = 114
"""``BuiltinOptions.RandomOptions`` in the schema (``seed``, ``seed2``: int64)."""
LITERT_INSTALL = "pip install ai-edge-litert"
LEAD_S = 0.04
"""Silence kept before a clause's voice. FastSpeech2 gives the ``sil`` that opens a clause a
duration of its own, 42 to 315 ms (七 315, 结束游戏 280, 我猜十五 and 不对哦 263, 不知道
44): the robot's reply began with up to a third of a second of nothing, and a comma's pause
(``Clause.pause``) came out 180 to 500 ms long. Cut to this, every clause begins as the
shortest did."""
SAID_BYTES = 16 * 2**20
"""What :class:`Said` keeps: 16 MiB, about six minutes of the robot's voice (a game's verdicts,
hints and fixed lines many times over)."""
QUIET = 1e-3
"""The level (of full scale, -60 dB) under which the vocoder's output is silence."""


class LiteRtMissing(VoiceError):
    """LiteRT cannot be imported here (no wheel for this platform, e.g. Intel macOS)."""


def _u32(data: bytes | bytearray, at: int) -> int:
    return int(struct.unpack_from("<I", data, at)[0])


def _field(data: bytes | bytearray, table: int, index: int) -> int | None:
    """Where field ``index`` of the table at ``table`` is, or None when it is absent."""
    vtable = table - int(struct.unpack_from("<i", data, table)[0])
    size = int(struct.unpack_from("<H", data, vtable)[0])
    if 4 + 2 * index >= size:
        return None
    offset = int(struct.unpack_from("<H", data, vtable + 4 + 2 * index)[0])
    return table + offset if offset else None


def _string(data: bytes | bytearray, at: int) -> str:
    start = at + _u32(data, at)
    return bytes(data[start + 4:start + 4 + _u32(data, start)]).decode("utf-8", "replace")


def _opcode_entries(data: bytes | bytearray) -> list[tuple[int, int]]:
    """(vector slot, table) of every ``OperatorCode`` of a TFLite model."""
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise VoiceError("not a TensorFlow Lite model")
    model = _u32(data, 0)
    codes = _field(data, model, 1)  # Model.operator_codes
    if codes is None:
        return []
    vector = codes + _u32(data, codes)
    slots = [vector + 4 + 4 * i for i in range(_u32(data, vector))]
    return [(slot, slot + _u32(data, slot)) for slot in slots]


def operator_codes(data: bytes | bytearray) -> list[tuple[int, str]]:
    """Each operator code as (builtin code, custom code): what the model asks the runtime for."""
    found = []
    for _slot, table in _opcode_entries(data):
        deprecated = _field(data, table, 0)
        custom = _field(data, table, 1)
        builtin = _field(data, table, 3)
        code = max(int(struct.unpack_from("<b", data, deprecated)[0]) if deprecated else 0,
                   int(struct.unpack_from("<i", data, builtin)[0]) if builtin else 0)
        found.append((code, _string(data, custom) if custom else ""))
    return found


def _align(data: bytearray, to: int) -> None:
    while len(data) % to:
        data.append(0)


def builtin_random_uniform(model: bytes, *, seed: int = 20) -> bytes:
    """``model`` with every ``FlexRandomUniform`` custom op turned into the builtin
    ``RANDOM_UNIFORM`` (the same inputs, output and meaning), seeded.

    The seed makes the voice deterministic: the dropout left on in the model otherwise
    draws new noise for every sentence from the system's entropy, and the same sentence
    never sounds the same twice (nor does a test's child say the same line twice). With a
    seed the noise is a fixed sequence from the voice's start.
    """
    data = bytearray(model)
    rewritten: set[int] = set()
    for index, (slot, table) in enumerate(_opcode_entries(model)):
        custom = _field(data, table, 1)
        if custom is None or _string(data, custom) != "FlexRandomUniform":
            continue
        _align(data, 4)
        vtable = len(data)
        # vtable: its size, the table's size, then each field's offset in the table:
        # deprecated_builtin_code (int8) at 12, custom_code absent, version at 8,
        # builtin_code at 4.
        data += struct.pack("<HHHHHH", 12, 13, 12, 0, 8, 4)
        new_table = len(data)
        data += struct.pack("<iiib", new_table - vtable, RANDOM_UNIFORM, 1,
                            _PLACEHOLDER_FOR_GREATER_OP_CODES) + b"\0\0\0"
        struct.pack_into("<I", data, slot, new_table - slot)
        rewritten.add(index)
    seeded = 0
    for slot, operator in _operators(model):
        index_at = _field(model, operator, 0)  # absent: opcode 0
        if (_u32(model, index_at) if index_at is not None else 0) in rewritten:
            _seeded_operator(data, model, slot, operator, seed + 2 * seeded)
            seeded += 1
    return bytes(data)


def _operators(data: bytes) -> list[tuple[int, int]]:
    """(vector slot, table) of every ``Operator`` of every subgraph."""
    model = _u32(data, 0)
    subgraphs = _field(data, model, 2)
    found: list[tuple[int, int]] = []
    if subgraphs is None:
        return found
    vector = subgraphs + _u32(data, subgraphs)
    for i in range(_u32(data, vector)):
        slot = vector + 4 + 4 * i
        graph = slot + _u32(data, slot)
        operators = _field(data, graph, 3)  # SubGraph.operators
        if operators is None:
            continue
        ops = operators + _u32(data, operators)
        for j in range(_u32(data, ops)):
            op_slot = ops + 4 + 4 * j
            found.append((op_slot, op_slot + _u32(data, op_slot)))
    return found


def _int_vector(data: bytes, at: int | None) -> list[int]:
    if at is None:
        return []
    start = at + _u32(data, at)
    return list(struct.unpack_from(f"<{_u32(data, start)}i", data, start + 4))


def _seeded_operator(data: bytearray, model: bytes, slot: int, operator: int, seed: int) -> None:
    """A copy of ``operator`` at the end of ``data`` with ``RandomOptions(seed, seed + 1)``,
    aimed at from its slot (its inputs and outputs copied after it: offsets point forward)."""
    index_at = _field(model, operator, 0)
    opcode = _u32(model, index_at) if index_at is not None else 0
    inputs = _int_vector(model, _field(model, operator, 1))
    outputs = _int_vector(model, _field(model, operator, 2))
    _align(data, 8)
    vtable = len(data)
    # Operator fields: opcode_index at 4, inputs at 8, outputs at 12, builtin_options_type
    # at 20, builtin_options at 16; the table is 24 bytes.
    data += struct.pack("<HHHHHHHH", 14, 24, 4, 8, 12, 20, 16, 0)
    table = len(data)
    data += bytes(24)
    inputs_at = len(data)
    data += struct.pack(f"<I{len(inputs)}i", len(inputs), *inputs)
    outputs_at = len(data)
    data += struct.pack(f"<I{len(outputs)}i", len(outputs), *outputs)
    _align(data, 4)
    options_vtable = len(data)
    data += struct.pack("<HHHH", 8, 24, 8, 16)
    _align(data, 8)
    options = len(data)
    data += struct.pack("<iiqq", options - options_vtable, 0, seed, seed + 1)
    struct.pack_into("<iIIIIB", data, table, table - vtable, opcode, inputs_at - (table + 8),
                     outputs_at - (table + 12), options - (table + 16), _RANDOM_OPTIONS)
    struct.pack_into("<I", data, slot, table - slot)


def _interpreter_class() -> Any:
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError as exc:
        raise LiteRtMissing(f"没有 LiteRT（{LITERT_INSTALL}；Intel 芯片的 Mac 没有这个包）: {exc}") from None
    return Interpreter


@contextlib.contextmanager
def _runtime_chatter_hidden() -> Iterator[None]:
    """LiteRT's C++ code prints ``INFO: Created TensorFlow Lite XNNPACK delegate for CPU.``
    on the process's standard error when an interpreter is made, with no setting to stop it;
    a family's console must not show it. Standard error is pointed at the null device for
    the moment the models load (once, at start-up)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield  # no real stderr (a windowed executable, a test's capture): nothing to hide
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


class NeuralVoice:
    """The two models loaded, and the phone mapper; :meth:`synthesize` gives float samples.

    Raises (from the constructor):
        LiteRtMissing: LiteRT is not installed / has no wheel here.
        VoiceError: a model file cannot be read or run.
    """

    def __init__(self, folder: Path, *, threads: int = 2, pitch: float = 1.0) -> None:
        """``pitch`` scales the voice's f0 (the simulated child speaks at 1.3: another voice
        than the robot's for the echo canceller and the recogniser)."""
        import numpy as np

        self._np = np
        self._pitch = pitch
        self.said = Said()
        interpreter = _interpreter_class()
        try:
            acoustic = builtin_random_uniform((folder / "fastspeech2_quan.tflite").read_bytes())
            vocoder = (folder / "mb_melgan.tflite").read_bytes()
            mapper = json.loads((folder / "baker_mapper.json").read_text(encoding="utf-8"))
            with _runtime_chatter_hidden():
                self._acoustic = interpreter(model_content=acoustic, num_threads=threads)
                self._vocoder = interpreter(model_content=vocoder, num_threads=threads)
                self._ids: dict[str, int] = mapper["symbol_to_id"]
                self._acoustic_in = self._acoustic.get_input_details()
                self._mel_out = self._acoustic.get_output_details()[1]["index"]  # after postnet
                self._vocoder_in = self._vocoder.get_input_details()[0]["index"]
                self._vocoder_out = self._vocoder.get_output_details()[0]["index"]
                self.clause("你好")  # the first run sets up the kernels: not on a sentence's path
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise VoiceError(f"离线语音模型不能加载：{exc}") from exc

    def clause(self, text: str) -> Any:
        """One clause's samples (float32, -1..1), or an empty array when it has no syllable."""
        np = self._np
        found = phones(text)
        if not found:
            return np.zeros(0, np.float32)
        ids = np.array([to_ids(found, self._ids)], np.int32)
        acoustic = self._acoustic
        acoustic.resize_tensor_input(self._acoustic_in[0]["index"], ids.shape)
        acoustic.allocate_tensors()
        inputs = (ids, np.array([0], np.int32), np.array([1.0], np.float32),
                  np.array([self._pitch], np.float32), np.array([1.0], np.float32))
        for detail, value in zip(self._acoustic_in, inputs, strict=True):
            acoustic.set_tensor(detail["index"], value)
        acoustic.invoke()
        mel = acoustic.get_tensor(self._mel_out)
        vocoder = self._vocoder
        vocoder.resize_tensor_input(self._vocoder_in, mel.shape)
        vocoder.allocate_tensors()
        vocoder.set_tensor(self._vocoder_in, mel)
        vocoder.invoke()
        samples = vocoder.get_tensor(self._vocoder_out)[0, :, 0]
        voiced = np.flatnonzero(np.abs(samples) > QUIET)
        lead = int(voiced[0]) - int(LEAD_S * RATE) if voiced.size else 0
        return samples[lead:] if lead > 0 else samples

    def synthesize(self, text: str, *, pause_after: bool = False) -> bytes:
        """``text`` spoken, 24 kHz mono s16le; each clause followed by its pause (none after
        the last, unless ``pause_after``: a first clause said on its own keeps the pause
        before the rest). A clause :attr:`said` holds is not synthesised again."""
        out = bytearray()
        parts = clauses(text)
        for i, part in enumerate(parts):
            pcm = self._clause_pcm(part.text)
            if not pcm:
                continue
            out += pcm
            if (i < len(parts) - 1 or pause_after) and part.pause:
                out += bytes(2 * int(part.pause * RATE))
        return bytes(out)

    def prepare(self, text: str) -> None:
        """Synthesise the clauses of ``text`` that :attr:`said` does not hold yet, and keep
        them there: a line code will say is then said without waiting for the voice."""
        for part in clauses(text):
            self._clause_pcm(part.text)

    def _clause_pcm(self, text: str) -> bytes:
        said = self.said
        if (pcm := said.get(text)) is not None:
            return pcm
        np = self._np
        samples = self.clause(text)
        pcm = bytes((np.clip(samples, -1.0, 1.0) * 32767 * 0.9).astype("<i2").tobytes())
        said.put(text, pcm)
        return pcm


class Said:
    """The clauses the voice has synthesised, by their text (24 kHz s16le PCM): a verdict's
    first clause, 猜对了, a hint's opening, a game's fixed lines come round again and again, and a
    clause held here is said at once. The least recently used are dropped beyond ``limit``
    bytes. ``enabled`` False: nothing is kept or found (a benchmark's reference).

    A clause is found only by its exact text: audio synthesised ahead for one line is never
    played for another (十五's verdict is not 十六's)."""

    def __init__(self, limit: int = SAID_BYTES) -> None:
        self.limit = limit
        self.enabled = True
        self._held: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0

    def __contains__(self, text: object) -> bool:
        return text in self._held

    def get(self, text: str) -> bytes | None:
        if not self.enabled or (pcm := self._held.get(text)) is None:
            return None
        self._held.move_to_end(text)
        return pcm

    def put(self, text: str, pcm: bytes) -> None:
        if not self.enabled or text in self._held or len(pcm) > self.limit:
            return
        self._held[text] = pcm
        self._bytes += len(pcm)
        while self._bytes > self.limit:
            _, dropped = self._held.popitem(last=False)
            self._bytes -= len(dropped)
