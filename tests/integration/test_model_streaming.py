"""Streamed answers over real HTTP against the local provider fakes: the read timeout bounds
silence, not the answer; stalls, cuts and error events are retried; floods are refused;
unreported usage stays unknown; a reply cut by the output cap is trimmed."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
from structlog.testing import capture_logs

from tests.model_fakes import Answer, FakeAnthropic, FakeOpenAI, sse_event
from turn.agent_loop import run_agent_loop
from turn.errors import ModelError, ModelRequestRejected, ModelResponseInvalid
from turn.model import Model, ModelMessage, ModelRequest, ToolCall
from turn.providers.anthropic import AnthropicConfig, AnthropicModel
from turn.providers.http import RetryPolicy, model_http_session
from turn.providers.openai_compat import OpenAICompatModel, OpenAIConfig
from turn.providers.streaming import STREAM_BASE_BYTES, STREAM_BASE_EVENTS
from turn.tools.base import ToolResult

READ_TIMEOUT_S = 0.5
KEY = "sk-test-chave"
REQUEST = ModelRequest(
    prefix="Você é a Bia.", skill_context="", messages=(ModelMessage("user", "Oi"),), tools=()
)
Fake = FakeAnthropic | FakeOpenAI


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, delay_s: float) -> None:
        self.waits.append(delay_s)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with model_http_session(connect_timeout_s=1.0, read_timeout_s=READ_TIMEOUT_S) as s:
        yield s


@pytest.fixture(params=["anthropic", "openai"])
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[Fake]:
    server: Fake = FakeAnthropic(KEY) if request.param == "anthropic" else FakeOpenAI(KEY)
    await server.start()
    yield server
    await server.close()


def model_for(
    http: aiohttp.ClientSession, fake: Fake, sleeps: Sleeps, *, max_tokens: int = 200
) -> Model:
    policy = RetryPolicy(max_attempts=3)
    if isinstance(fake, FakeAnthropic):
        config = AnthropicConfig(
            model="claude-test",
            api_key=KEY,
            base_url=fake.base_url,
            max_tokens=max_tokens,
            policy=policy,
        )
        return AnthropicModel(http, config, sleep=sleeps, jitter=lambda: 0.0)
    openai = OpenAIConfig(
        model="gpt-test",
        api_key=KEY,
        base_url=fake.base_url + "/v1",
        max_tokens=max_tokens,
        policy=policy,
    )
    return OpenAICompatModel(http, openai, sleep=sleeps, jitter=lambda: 0.0)


def first_events(fake: Fake) -> list[bytes]:
    """The opening events of a text answer, and no end."""
    if isinstance(fake, FakeAnthropic):
        start = {
            "type": "message_start",
            "message": {"model": "m", "content": [], "usage": {"input_tokens": 3}},
        }
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
        return [sse_event(start, "message_start"), sse_event(block, "content_block_start")]
    chunk = {"choices": [{"index": 0, "delta": {"content": "Olá"}, "finish_reason": None}]}
    return [sse_event(chunk)]


async def no_tools(call: ToolCall) -> ToolResult:
    raise AssertionError("no tool is offered")


async def test_the_request_asks_for_a_stream(http: aiohttp.ClientSession, fake: Fake) -> None:
    await model_for(http, fake, Sleeps()).complete(REQUEST)
    body = fake.received[0].body
    assert body["stream"] is True
    if isinstance(fake, FakeOpenAI):
        assert body["stream_options"] == {"include_usage": True}


async def test_a_slow_but_steady_stream_longer_than_the_read_timeout_completes(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    fake.pause_s = 0.15  # each silence well under the read timeout; 6+ of them in all
    sleeps = Sleeps()
    started = time.monotonic()
    response = await model_for(http, fake, sleeps).complete(REQUEST)
    # A lower bound the pauses guarantee: the answer outlasted the read timeout.
    assert time.monotonic() - started > READ_TIMEOUT_S
    assert response.text == "Olá! Como posso ajudar?"
    assert response.input_tokens is not None and response.input_tokens > 0
    assert response.output_tokens is not None and response.output_tokens > 0
    assert sleeps.waits == []
    assert len(fake.received) == 1


async def test_a_server_closing_its_keep_alive_connection_after_each_stream_costs_no_attempt(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    fake.close_after_stream = True  # as llama.cpp's server does, Keep-Alive header or not
    sleeps = Sleeps()
    model = model_for(http, fake, sleeps)
    for _ in range(3):  # back to back: the next call may take the closed connection
        assert (await model.complete(REQUEST)).text == "Olá! Como posso ajudar?"
    assert sleeps.waits == []


async def test_a_stalled_stream_times_out_and_is_retried(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    sleeps = Sleeps()
    fake.script = [Answer(chunks=first_events(fake), stall_s=30)]
    response = await model_for(http, fake, sleeps).complete(REQUEST)
    assert response.text == "Olá! Como posso ajudar?"
    assert sleeps.waits == [0.25]
    assert len(fake.received) == 2


async def test_a_stream_stalled_on_every_attempt_is_a_retryable_error(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    fake.script = [Answer(chunks=first_events(fake), stall_s=30) for _ in range(3)]
    with pytest.raises(ModelError) as caught:
        await model_for(http, fake, Sleeps()).complete(REQUEST)
    assert type(caught.value) is ModelError
    assert caught.value.code == "model_unavailable"
    assert "3 attempt(s)" in str(caught.value) and "Timeout" in str(caught.value)


async def test_a_stream_cut_before_its_end_is_retried(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    sleeps = Sleeps()
    fake.script = [Answer(chunks=first_events(fake))]
    response = await model_for(http, fake, sleeps).complete(REQUEST)
    assert response.text == "Olá! Como posso ajudar?"
    assert sleeps.waits == [0.25]


@pytest.mark.parametrize(
    ("kind", "retried"), [("overloaded_error", True), ("invalid_request_error", False)]
)
async def test_an_error_event_mid_stream(
    http: aiohttp.ClientSession, fake: Fake, kind: str, retried: bool
) -> None:
    error = {"type": kind, "message": "algo deu errado"}
    event = (
        sse_event({"type": "error", "error": error}, "error")
        if isinstance(fake, FakeAnthropic)
        else sse_event({"error": error})
    )
    fake.script = [Answer(chunks=[*first_events(fake), event])]
    sleeps = Sleeps()
    model = model_for(http, fake, sleeps)
    if retried:
        assert (await model.complete(REQUEST)).text == "Olá! Como posso ajudar?"
        assert sleeps.waits == [0.25]
        return
    with pytest.raises(ModelRequestRejected) as caught:
        await model.complete(REQUEST)
    assert kind in str(caught.value) and "algo deu errado" in str(caught.value)
    assert sleeps.waits == []


async def test_a_stream_over_its_event_cap_is_invalid_and_not_retried(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    ping = sse_event({"type": "ping"}, "ping") if isinstance(fake, FakeAnthropic) else None
    keep = ping or sse_event({"choices": []})
    flood = [b"".join([keep] * 500)] * ((STREAM_BASE_EVENTS + 2) // 500 + 1)
    fake.script = [Answer(chunks=first_events(fake) + flood)]
    sleeps = Sleeps()
    with pytest.raises(ModelResponseInvalid) as caught:
        await model_for(http, fake, sleeps, max_tokens=1).complete(REQUEST)
    assert "events" in str(caught.value)
    assert sleeps.waits == [] and len(fake.received) == 1


async def test_a_stream_over_its_byte_cap_is_invalid(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    comment = b": " + b"x" * 64 * 1024 + b"\n"  # comments are no events, but they are bytes
    flood = [comment] * (STREAM_BASE_BYTES // len(comment) + 2)
    fake.script = [Answer(chunks=first_events(fake) + flood)]
    with pytest.raises(ModelResponseInvalid) as caught:
        await model_for(http, fake, Sleeps(), max_tokens=1).complete(REQUEST)
    assert "bytes" in str(caught.value)


async def test_a_server_without_include_usage_leaves_the_usage_unknown(
    http: aiohttp.ClientSession,
) -> None:
    fake = await FakeOpenAI(KEY).start()
    try:
        assert isinstance(fake, FakeOpenAI)
        fake.send_usage = False
        outcome = await run_agent_loop(
            model_for(http, fake, Sleeps()), REQUEST, no_tools, max_steps=2
        )
    finally:
        await fake.close()
    assert outcome.text == "Olá! Como posso ajudar?"
    usage = outcome.usage
    assert (usage.calls, usage.provider) == (1, "openai")
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (None, None, None)
    assert usage.to_json()["input_tokens"] is None


async def test_a_reply_cut_by_the_output_cap_is_trimmed_to_its_last_sentence(
    http: aiohttp.ClientSession, fake: Fake
) -> None:
    fake.max_tokens_chars = len("Olá! Como po")
    with capture_logs() as logs:
        outcome = await run_agent_loop(
            model_for(http, fake, Sleeps()), REQUEST, no_tools, max_steps=2
        )
    assert outcome.text == "Olá!"
    trimmed = [e for e in logs if e["event"] == "turn.reply_trimmed"]
    assert len(trimmed) == 1
    assert (trimmed[0]["chars"], trimmed[0]["kept_chars"]) == (12, 4)
