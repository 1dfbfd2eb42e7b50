"""Benchmark: time from a line said to the first spoken sentence, through the real pipeline.

Not a test. Run:  .venv/bin/python tests/bench/bench_turn.py [--latency 0.5] [--tps 40]
[--rounds 5]   (see tests/bench/README.md)

The real ``play`` pipeline (``open_pipeline``: game registry with the built-in games,
output queue, main agent) drives a timing robot that notes when each sentence is spoken.
Every model — the main agent's, each game's and 海龟汤's referee — is the fake OpenAI server
(``agentcade/testing/fake_openai.py``) with a fixed latency per call (``--latency``, default 500 ms)
and, when streamed, a generation speed (``--tps`` tokens per second, one token per
character). It answers the referee with a verdict and everything else with two spoken
sentences (no tool calls: what needs a tool is judged in code now).

For each kind of line (chit-chat outside a game, start, guess/answer/question, hint,
chit-chat in a game, end) it prints the model calls made before the first spoken sentence
(the critical path), the time to that sentence (p50 and max over ``--rounds`` rounds) and
the time to the first model request (what the pipeline spends before asking a model),
against the targets of issue 13 (at 500 ms per call: a guess in 猜数字, an answer in
你画我猜, a question in 海龟汤 <= 650 ms p50; chit-chat outside a game <= 600 ms; starting a
game <= 1,200 ms).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentcade.device.robots import ConsoleRobot  # noqa: E402
from agentcade.llm import OpenAIChatModel  # noqa: E402
from agentcade.testing.fake_openai import FakeOpenAI, Reply, serve_fake_openai  # noqa: E402
from agentcade.wiring.pipeline import open_pipeline  # noqa: E402

CHUNK = 4  # characters per streamed delta in the fake server
SPEECH = "好呀，这个我知道。我们接着玩吧。"
VERDICT = '{"verdict": "no", "solved": false}'

# (game, line kind, what is said); "start" and "end" lines are routed by the main agent.
SCRIPTS: dict[str, list[tuple[str, str]]] = {
    "guess_number": [
        ("start", "玩猜数字"), ("guess", "我猜十"), ("hint", "给个提示"),
        ("chat", "你喜欢什么颜色"), ("end", "不玩了"),
    ],
    "draw_guess": [
        ("start", "玩你画我猜"), ("answer", "是猫吗"), ("hint", "给个提示"),
        ("chat", "你喜欢什么颜色"), ("end", "不玩了"),
    ],
    "turtle_soup": [
        ("start", "玩海龟汤"), ("question", "他是男的吗"), ("hint", "给个提示"),
        ("chat", "你喜欢什么颜色"), ("end", "不玩了"),
    ],
    "riddle": [
        ("start", "玩猜谜语"), ("wrong", "是不是西瓜"), ("hint", "不知道"),
        ("chat", "你喜欢什么颜色"), ("end", "不玩了"),
    ],
}  # fmt: skip
TARGETS_MS = {
    ("guess_number", "guess"): 650.0,
    ("draw_guess", "answer"): 650.0,
    ("turtle_soup", "question"): 650.0,
    **{(game, "start"): 1200.0 for game in SCRIPTS},
    ("-", "chat"): 600.0,
}


class TimingRobot(ConsoleRobot):
    """A console robot that notes when each sentence is spoken (trio clock)."""

    def __init__(self) -> None:
        super().__init__(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
        self.spoken: list[tuple[float, str]] = []
        self.said = trio.Event()

    async def speak(self, text: str) -> None:
        self.spoken.append((trio.current_time(), text))
        self.said.set()
        await trio.lowlevel.checkpoint()


def answer(latency: float, tps: float, request: dict[str, Any]) -> Reply:
    system = str(request["messages"][0].get("content") or "")
    if "海龟汤”情境猜谜游戏的裁判" in system:
        return Reply(VERDICT, delay=latency)
    chunk_delay = CHUNK / tps if request.get("stream") and tps > 0 else 0.0
    return Reply(SPEECH, delay=latency, chunk_delay=chunk_delay)


async def measure(
    fake: FakeOpenAI, robot: TimingRobot, agent: Any, text: str
) -> tuple[float, int, float]:
    """(ms to the first spoken sentence, model calls before it, ms to the first model
    request or nan) for one line."""
    await agent.wait_idle()
    before_calls, before_spoken = len(fake.requests), len(robot.spoken)
    robot.said = trio.Event()
    t0 = trio.current_time()
    await agent.on_user(text)
    if len(robot.spoken) == before_spoken:
        await robot.said.wait()
    first = robot.spoken[before_spoken][0]
    times = [t for t in fake.request_times[before_calls:] if t <= first]  # type: ignore[attr-defined]
    await agent.wait_idle()
    return (first - t0) * 1000, len(times), ((times[0] - t0) * 1000 if times else float("nan"))


async def run(args: argparse.Namespace) -> None:
    home = tempfile.mkdtemp(prefix="agentcade-bench-")
    os.environ["AGENTCADE_HOME"] = home
    random.seed(7)
    figures: dict[tuple[str, str], list[tuple[float, int, float]]] = {}
    async with trio.open_nursery() as nursery:
        fake: FakeOpenAI = await nursery.start(
            partial(serve_fake_openai, default=partial(answer, args.latency, args.tps))
        )
        _note_request_times(fake)
        os.environ.update(
            {"LLM_BASE_URL": fake.url, "LLM_API_KEY": "sk-bench", "LLM_MODEL": "fake-model"}
        )
        robot = TimingRobot()
        settings = fake.settings(timeout=30.0)
        async with open_pipeline(
            robot,
            builtin_dir=ROOT / "games",
            remote=[],
            model=lambda _registry: OpenAIChatModel(settings, max_retries=0),
        ) as (agent, _registry):
            for _ in range(args.rounds):
                figures.setdefault(("-", "chat"), []).append(
                    await measure(fake, robot, agent, "你好呀，今天天气真好")
                )
                for game, script in SCRIPTS.items():
                    for kind, text in script:
                        figures.setdefault((game, kind), []).append(
                            await measure(fake, robot, agent, text)
                        )
        nursery.cancel_scope.cancel()
    report(figures, args)


def _note_request_times(fake: FakeOpenAI) -> None:
    """Record when each model request arrived (trio clock), beside ``fake.requests``."""
    fake.request_times = []  # type: ignore[attr-defined]
    original = fake._next_item

    def next_item(request: dict[str, Any]) -> Any:
        fake.request_times.append(trio.current_time())  # type: ignore[attr-defined]
        return original(request)

    fake._next_item = next_item  # type: ignore[method-assign]


def report(
    figures: dict[tuple[str, str], list[tuple[float, int, float]]], args: argparse.Namespace
) -> None:
    print(
        f"time to the first spoken sentence, real play pipeline, fake model "
        f"{args.latency * 1000:.0f} ms/call, {args.tps:g} tokens/s streamed, {args.rounds} rounds"
    )
    print(
        f"{'game':<13} {'line':<9} {'calls':>5} {'p50 ms':>8} {'max ms':>8} "
        f"{'1st call':>8}  target"
    )
    failed = 0
    for (game, kind), rows in figures.items():
        times = [t for t, _, _ in rows]
        calls = statistics.median([c for _, c, _ in rows])
        starts = [s for _, _, s in rows if s == s]  # not nan
        first_call = f"{statistics.median(starts):8.0f}" if starts else f"{'-':>8}"
        p50 = statistics.median(times)
        target = TARGETS_MS.get((game, kind))
        verdict = ""
        if target is not None and args.latency == 0.5:
            ok = p50 <= target
            failed += not ok
            verdict = f"<= {target:.0f} {'ok' if ok else 'MISSED'}"
        label = "(no game)" if game == "-" else game
        print(
            f"{label:<13} {kind:<9} {calls:>5g} {p50:>8.0f} {max(times):>8.0f} {first_call}  {verdict}"
        )
    if args.latency == 0.5:
        print("all targets met" if not failed else f"{failed} target(s) missed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call")
    parser.add_argument("--tps", type=float, default=50.0, help="streamed tokens per second")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per line")
    trio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
