"""The provider adapters over real HTTP against local servers speaking each wire format:
request shape, tool-use round trips through the agent loop, retries and refusals."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import aiohttp
import pytest
from structlog.testing import capture_logs

from core.object_store import ObjectNotFound, StoredObject
from dev.processes import free_port
from skills.models import FileKind, LoadedSkill, ManifestEntry
from tests.model_fakes import Answer, FakeAnthropic, FakeOpenAI
from tests.tool_support import read_reference, reference_context
from turn.agent_loop import run_agent_loop
from turn.errors import ModelError, ModelRequestRejected, ModelResponseInvalid
from turn.model import InjectedSkill, Model, ModelMessage, ModelRequest, ToolCall
from turn.prompt import build_prefix, prompt_cache_key, render_skill_context
from turn.providers.anthropic import AnthropicConfig, AnthropicModel
from turn.providers.http import RetryPolicy, model_http_session
from turn.providers.openai_compat import OpenAICompatModel, OpenAIConfig
from turn.skill_index import render_skill_index
from turn.tools.base import ToolResult
from turn.tools.registry import turn_tools

ANTHROPIC_KEY = "sk-ant-api03-chave-secreta-de-teste"
OPENAI_KEY = "sk-proj-chave-secreta-de-teste"
ORG = uuid.uuid4()
PRAZOS = "Boletos vencidos há até 30 dias são reemitidos sem custo.\nDepois: multa de 2%."
SKILL = LoadedSkill(
    name="segunda-via",
    description="Segunda via de boleto",
    body="Envio a segunda via pelo link seguro.",
    manifest=(ManifestEntry("references/prazos.md", 80, "0" * 64, FileKind.REFERENCE),),
    version_id=uuid.uuid4(),
)
PREFIX = build_prefix("Você é a Bia, da Loja Teste.", turn_tools(), render_skill_index([SKILL]))
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class Sleeps:
    """An injected sleep that records the waits instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, delay_s: float) -> None:
        self.waits.append(delay_s)


class PrazosStore:
    async def put(self, key: str, data: bytes, content_type: str) -> None:
        raise AssertionError("a turn never writes")

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        if key != f"{ORG}/segunda-via/{SKILL.version_id}/references/prazos.md":
            raise ObjectNotFound(key)
        return StoredObject(PRAZOS.encode(), truncated=False)


async def serve_reference(call: ToolCall) -> ToolResult:
    return await read_reference(
        reference_context(PrazosStore(), ORG, [SKILL], max_bytes=4096),
        call.arguments.get("skill_name"),
        call.arguments.get("path"),
    )


def turn_request(
    text: str = "Preciso da segunda via do boleto vencido", *, matched: bool = True
) -> ModelRequest:
    injected = (InjectedSkill(SKILL.name, SKILL.body, SKILL.reference_paths),) if matched else ()
    return ModelRequest(
        prefix=PREFIX,
        skill_context=render_skill_context(injected),
        messages=(ModelMessage("user", text),),
        tools=turn_tools(),
        injected_skills=injected,
        cache_key=prompt_cache_key(ORG, None),
    )


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with model_http_session(connect_timeout_s=1.0, read_timeout_s=0.5) as session:
        yield session


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic(ANTHROPIC_KEY)
    await fake.start()
    yield fake
    await fake.close()


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI(OPENAI_KEY)
    await fake.start()
    yield fake
    await fake.close()


def claude(
    http: aiohttp.ClientSession, base_url: str, sleeps: Sleeps, *, key: str = ANTHROPIC_KEY
) -> AnthropicModel:
    config = AnthropicConfig(
        model="claude-test",
        api_key=key,
        base_url=base_url,
        max_tokens=200,
        policy=RetryPolicy(max_attempts=3, retry_after_max_s=5),
    )
    return AnthropicModel(http, config, sleep=sleeps, jitter=lambda: 0.0)


def gpt(http: aiohttp.ClientSession, base_url: str, sleeps: Sleeps) -> OpenAICompatModel:
    config = OpenAIConfig(
        model="gpt-test",
        api_key=OPENAI_KEY,
        base_url=base_url + "/v1",
        max_tokens=200,
        policy=RetryPolicy(max_attempts=3),
    )
    return OpenAICompatModel(http, config, sleep=sleeps, jitter=lambda: 0.0)


async def test_anthropic_round_trip_reads_the_reference_and_accounts_the_cache(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic
) -> None:
    model = claude(http, fake_anthropic.base_url, Sleeps())
    outcome = await run_agent_loop(model, turn_request(), serve_reference, max_steps=4)

    assert outcome.text == f"Segundo a referência: {PRAZOS.splitlines()[0]}"
    assert [(c.name, c.error_code) for c in outcome.tool_calls] == [("read_skill_reference", None)]
    first, second = fake_anthropic.received
    assert first.headers["x-api-key"] == ANTHROPIC_KEY
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert first.headers["Content-Type"] == "application/json"
    assert first.body["system"][0] == {
        "type": "text",
        "text": PREFIX,
        "cache_control": {"type": "ephemeral"},
    }
    assert "cache_control" not in first.body["system"][1]
    assert '<skill name="segunda-via">' in first.body["system"][1]["text"]
    assert [t["name"] for t in first.body["tools"]] == [t.name for t in turn_tools()]
    # The tool_use id comes back in the tool_result, with the reference's content.
    tool_use = second.body["messages"][1]["content"][0]
    tool_result = second.body["messages"][2]["content"][0]
    assert tool_use["type"] == "tool_use"
    assert tool_result == {
        "type": "tool_result",
        "tool_use_id": tool_use["id"],
        "content": PRAZOS,
    }
    # Same prefix on both calls: written once, then read.
    assert second.body["system"][0] == first.body["system"][0]
    usage = outcome.usage
    assert (usage.provider, usage.model, usage.calls) == ("anthropic", "claude-test", 2)
    assert usage.cache_write_tokens > 0
    assert usage.cache_read_tokens == usage.cache_write_tokens
    assert usage.input_tokens > usage.cache_write_tokens + usage.cache_read_tokens
    assert usage.output_tokens == 24


async def test_openai_round_trip_with_prompt_cache_key_and_cached_tokens(
    http: aiohttp.ClientSession, fake_openai: FakeOpenAI
) -> None:
    model = gpt(http, fake_openai.base_url, Sleeps())
    outcome = await run_agent_loop(model, turn_request(), serve_reference, max_steps=4)

    assert outcome.text == f"Segundo a referência: {PRAZOS.splitlines()[0]}"
    first, second = fake_openai.received
    assert first.headers["Authorization"] == f"Bearer {OPENAI_KEY}"
    assert first.body["prompt_cache_key"] == prompt_cache_key(ORG, None)
    assert first.body["messages"][0]["content"].startswith(PREFIX)
    assert first.body["tools"][0]["type"] == "function"
    call = second.body["messages"][2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {
        "skill_name": "segunda-via",
        "path": "references/prazos.md",
    }
    assert second.body["messages"][3] == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": PRAZOS,
    }
    assert outcome.usage.provider == "openai"
    assert outcome.usage.cache_read_tokens > 0  # the second call shares the first's prefix
    assert outcome.usage.cache_write_tokens == 0


async def test_429_waits_what_retry_after_says_then_succeeds(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic
) -> None:
    sleeps = Sleeps()
    rate_limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}
    fake_anthropic.script = [Answer(429, rate_limited, {"retry-after": "2"})]
    response = await claude(http, fake_anthropic.base_url, sleeps).complete(
        turn_request("Olá", matched=False)
    )
    assert response.text == "Olá! Como posso ajudar?"
    assert sleeps.waits == [2.0]
    assert len(fake_anthropic.received) == 2


@pytest.mark.parametrize("status", [500, 529, 503])
async def test_5xx_is_retried_with_backoff(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, status: int
) -> None:
    sleeps = Sleeps()
    fake_anthropic.script = [Answer(status, OVERLOADED), Answer(status, OVERLOADED)]
    response = await claude(http, fake_anthropic.base_url, sleeps).complete(
        turn_request("Olá", matched=False)
    )
    assert response.text == "Olá! Como posso ajudar?"
    assert sleeps.waits == [0.25, 0.5]  # jitter 0: half of 0.5 s, then of 1 s


async def test_5xx_until_the_attempts_run_out_is_a_retryable_model_error(
    http: aiohttp.ClientSession, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script = [Answer(500, {"error": {"message": "boom"}})] * 3
    with pytest.raises(ModelError) as caught:
        await gpt(http, fake_openai.base_url, Sleeps()).complete(turn_request())
    assert type(caught.value) is ModelError
    assert caught.value.retryable is True
    assert caught.value.code == "model_unavailable"
    assert "3 attempt(s)" in str(caught.value) and "boom" in str(caught.value)
    assert len(fake_openai.received) == 3


async def test_400_is_not_retried_and_carries_the_providers_message(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic
) -> None:
    sleeps = Sleeps()
    error = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: too large"},
    }
    fake_anthropic.script = [Answer(400, error)]
    with pytest.raises(ModelRequestRejected) as caught:
        await claude(http, fake_anthropic.base_url, sleeps).complete(turn_request())
    assert caught.value.retryable is False
    assert caught.value.code == "model_request_rejected"
    assert "HTTP 400" in str(caught.value)
    assert "invalid_request_error: max_tokens: too large" in str(caught.value)
    assert sleeps.waits == []
    assert len(fake_anthropic.received) == 1


async def test_a_wrong_key_is_unauthorized_names_the_variable_and_never_shows_the_key(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic
) -> None:
    wrong = "sk-ant-api03-chave-errada"
    fake_anthropic.script = [
        Answer(401, {"type": "error", "error": {"message": f"invalid x-api-key {wrong}"}})
    ]
    with capture_logs() as logs, pytest.raises(ModelRequestRejected) as caught:
        await claude(http, fake_anthropic.base_url, Sleeps(), key=wrong).complete(turn_request())
    assert caught.value.code == "model_unauthorized"
    assert "SKILLET_ANTHROPIC_API_KEY" in str(caught.value)
    assert wrong not in str(caught.value)
    assert wrong not in repr(logs)


async def test_the_servers_should_retry_header_is_obeyed(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic
) -> None:
    sleeps = Sleeps()
    fake_anthropic.script = [
        Answer(409, OVERLOADED, {"x-should-retry": "false"}),
    ]
    with pytest.raises(ModelError) as caught:
        await claude(http, fake_anthropic.base_url, sleeps).complete(turn_request())
    assert caught.value.retryable is True
    assert sleeps.waits == []
    fake_anthropic.script = [Answer(400, OVERLOADED, {"x-should-retry": "true"})]
    response = await claude(http, fake_anthropic.base_url, sleeps).complete(
        turn_request("Oi", matched=False)
    )
    assert response.text == "Olá! Como posso ajudar?"
    assert sleeps.waits == [0.25]


async def test_a_longer_retry_after_than_the_policy_allows_fails_at_once(
    http: aiohttp.ClientSession, fake_anthropic: FakeAnthropic
) -> None:
    sleeps = Sleeps()
    fake_anthropic.script = [Answer(429, OVERLOADED, {"retry-after": "60"})]
    with pytest.raises(ModelError) as caught:
        await claude(http, fake_anthropic.base_url, sleeps).complete(turn_request())
    assert caught.value.retryable is True  # the job runs again later
    assert sleeps.waits == []


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b"<html>Bad gateway</html>", "not JSON"),
        ([1, 2, 3], "not an object"),
        ({"id": "msg_1", "type": "message"}, "no content list"),
        ({"content": [{"type": "tool_use", "id": "t", "name": "x"}]}, "no input object"),
    ],
)
async def test_a_malformed_2xx_answer_is_a_clear_error(
    http: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    body: object,
    detail: str,
) -> None:
    fake_anthropic.script = [Answer(200, body)]
    with pytest.raises(ModelResponseInvalid) as caught:
        await claude(http, fake_anthropic.base_url, Sleeps()).complete(turn_request())
    assert caught.value.retryable is False
    assert detail in str(caught.value)
    assert len(fake_anthropic.received) == 1


async def test_a_slow_answer_times_out_and_is_retried(
    http: aiohttp.ClientSession, fake_openai: FakeOpenAI
) -> None:
    sleeps = Sleeps()
    ok = {"choices": [{"message": {"content": "pronto"}}]}
    fake_openai.script = [Answer(200, ok, delay_s=1.0), Answer(200, ok)]
    response = await gpt(http, fake_openai.base_url, sleeps).complete(turn_request())
    assert response.text == "pronto"
    assert sleeps.waits == [0.25]


async def test_an_unreachable_server_is_retried_then_a_retryable_error(
    http: aiohttp.ClientSession,
) -> None:
    sleeps = Sleeps()
    model: Model = claude(http, f"http://127.0.0.1:{free_port()}", sleeps)
    with capture_logs() as logs, pytest.raises(ModelError) as caught:
        await model.complete(turn_request())
    assert caught.value.retryable is True
    assert "ClientConnectorError" in str(caught.value)
    assert len(sleeps.waits) == 2
    retries = [e for e in logs if e["event"] == "model.retry"]
    assert [e["attempt"] for e in retries] == [1, 2]
    assert ANTHROPIC_KEY not in repr(logs)
