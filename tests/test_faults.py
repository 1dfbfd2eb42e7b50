"""Issue 12: every fault gets a spoken answer in bounded time; no traceback ever reaches
a family or an author. One test per probed fault (the issue's item number in the name's
docstring); the storm test at the end runs them together."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from agentcade.llm import ModelError, OpenAIChatModel
from agentcade.settings import (
    Budgets,
    LLMSettings,
    SettingsError,
    load_settings_spec,
    read_dotenv,
)
from tests.fake_openai import Fail, FakeOpenAI, Hang, serve_fake_openai

MESSAGES = [{"role": "user", "content": "你好"}]
GBK = "LLM_MODEL=通义千问\n".encode("gbk")


@pytest.fixture
async def fake_model(nursery: trio.Nursery) -> AsyncIterator[tuple[FakeOpenAI, OpenAIChatModel]]:
    fake: FakeOpenAI = await nursery.start(serve_fake_openai)
    model = OpenAIChatModel(fake.settings(timeout=1.0), max_retries=1)
    yield fake, model
    await model.aclose()


# ------------------------------------------------------------------ item 2: files


def test_a_dotenv_that_is_not_utf8_is_a_settings_error_naming_the_file(tmp_path: Path) -> None:
    """Item 2: a GBK ``.env`` is one line that names the file and the fix."""
    env = tmp_path / ".env"
    env.write_bytes(GBK)
    with pytest.raises(SettingsError, match=r"\.env:1: 不是 UTF-8"):
        read_dotenv(env)


def test_a_settings_yaml_that_is_not_utf8_is_a_settings_error(tmp_path: Path) -> None:
    """Item 2: the same for a game's ``settings.yaml``."""
    spec = tmp_path / "settings.yaml"
    spec.write_bytes(b"settings:\n  - key: A\n    description: " + "说明".encode("gbk") + b"\n")
    with pytest.raises(SettingsError, match=r"settings\.yaml:3: 不是 UTF-8"):
        load_settings_spec(spec)


# ------------------------------------------------------------------ item 9: the model


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "0", "301"])
def test_llm_timeout_outside_1_to_300_seconds_is_refused(raw: str) -> None:
    """Item 9: ``LLM_TIMEOUT=inf`` would never answer."""
    with pytest.raises(SettingsError, match="LLM_TIMEOUT 应该在 1 到 300 之间"):
        LLMSettings.from_values({"LLM_TIMEOUT": raw})


async def test_a_hanging_model_costs_one_timeout_not_one_per_retry(fake_model) -> None:
    """Item 9: the timeout is the budget of the whole call, retries included."""
    fake, model = fake_model
    fake.default = Hang()
    start = trio.current_time()
    with pytest.raises(ModelError, match="timed out after 1s"):
        await model.complete(MESSAGES, [])
    assert trio.current_time() - start < 1.8


async def test_retry_after_is_capped_and_the_retry_still_answers(fake_model) -> None:
    """Item 9: ``Retry-After: 60`` is not obeyed in full; the retry gets its chance."""
    fake, _ = fake_model
    model_settings = fake.settings(timeout=10.0)
    capped = OpenAIChatModel(model_settings, max_retries=1)
    try:
        fake.push(Fail(429, headers=(("retry-after", "60"),)))
        start = trio.current_time()
        reply = await capped.complete(MESSAGES, [])
        assert reply.text  # the fake's default reply, on the retry
        assert trio.current_time() - start < 4
        assert len(fake.requests) == 2
    finally:
        await capped.aclose()


def test_budgets_have_defaults_and_refuse_values_out_of_range() -> None:
    """The time budgets are settings with validated ranges."""
    assert Budgets.from_values({}) == Budgets()
    assert Budgets.from_values({"AGENTCADE_PATIENCE": "2.5"}).patience == 2.5
    with pytest.raises(SettingsError, match="AGENTCADE_LINE_BUDGET"):
        Budgets.from_values({"AGENTCADE_LINE_BUDGET": "inf"})
