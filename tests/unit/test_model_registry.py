"""Unit tests of the per-agent model registry, its settings and the retry timing (pure)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import aiohttp
import pytest
import structlog
from pydantic import SecretStr

from core.retry_after import parse_retry_after
from turn.errors import ModelNotConfigured
from turn.local_model import LocalModel
from turn.model import MAX_MODEL_NAME_CHARS, Model, ModelRequest, ModelResponse, ModelUsage
from turn.providers.anthropic import AnthropicModel
from turn.providers.http import RetryPolicy
from turn.providers.openai_compat import OpenAICompatModel
from turn.providers.registry import ModelRegistry
from worker.logging import configure_logging
from worker.model_providers import build_model_registry
from worker.settings import Settings

KEY = "sk-ant-api03-segredo-que-nunca-aparece"


class Named:
    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=self.name)


def test_agents_without_a_provider_get_the_default() -> None:
    default = Named("default")
    registry = ModelRegistry(default, {"x": lambda name: Named(f"x:{name}")})
    assert registry.resolve(None, None) is default
    assert registry.resolve("", "ignored") is default


def test_each_provider_and_name_is_built_once_and_wrapped() -> None:
    built: list[str | None] = []
    wrapped: list[Model] = []

    def factory(name: str | None) -> Model:
        built.append(name)
        return Named(f"x:{name}")

    def wrap(model: Model) -> Model:
        wrapped.append(model)
        return model

    registry = ModelRegistry(Named("default"), {"x": factory}, wrap=wrap)
    first = registry.resolve("x", "a")
    assert registry.resolve("x", "a") is first
    assert registry.resolve("x", "b") is not first
    assert built == ["a", "b"]
    assert len(wrapped) == 3  # the default, then each built model


def test_an_unknown_provider_is_a_configuration_error_naming_the_known_ones() -> None:
    registry = ModelRegistry(Named("default"), {"anthropic": Named, "openai": Named})
    with pytest.raises(ModelNotConfigured) as caught:
        registry.resolve("gemini", "x")
    assert caught.value.retryable is False
    assert caught.value.code == "model_not_configured"
    assert "'gemini'" in str(caught.value)
    assert "anthropic, openai" in str(caught.value)


async def test_settings_build_each_provider_from_its_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("SKILLET_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    settings = Settings()
    assert settings.anthropic_api_key == SecretStr(KEY)
    assert KEY not in repr(settings)
    async with aiohttp.ClientSession() as http:
        registry = build_model_registry(settings, http)
        assert isinstance(registry.default, LocalModel)
        assert isinstance(registry.resolve("local", None), LocalModel)
        anthropic = registry.resolve("anthropic", "claude-test")
        assert isinstance(anthropic, AnthropicModel)
        assert KEY not in repr(anthropic)
        # A local Chat Completions server needs no key.
        assert isinstance(registry.resolve("openai", "llama3.1"), OpenAICompatModel)


def test_the_prefixed_variable_wins_over_the_conventional_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "conventional")
    monkeypatch.setenv("SKILLET_ANTHROPIC_API_KEY", "prefixed")
    monkeypatch.setenv("SKILLET_OPENAI_API_KEY", "sk-openai")
    settings = Settings()
    assert settings.anthropic_api_key == SecretStr("prefixed")
    assert settings.openai_api_key == SecretStr("sk-openai")


@pytest.mark.parametrize(
    ("provider", "variable"),
    [("anthropic", "SKILLET_ANTHROPIC_API_KEY"), ("openai", "SKILLET_OPENAI_API_KEY")],
)
async def test_a_provider_without_credentials_names_the_missing_variable(
    provider: str, variable: str
) -> None:
    async with aiohttp.ClientSession() as http:
        registry = build_model_registry(Settings(), http)
        with pytest.raises(ModelNotConfigured) as caught:
            registry.resolve(provider, "some-model")
    assert variable in str(caught.value)
    assert caught.value.retryable is False


async def test_a_provider_without_a_model_name_says_so() -> None:
    async with aiohttp.ClientSession() as http:
        registry = build_model_registry(Settings(anthropic_api_key=KEY), http)
        with pytest.raises(ModelNotConfigured) as caught:
            registry.resolve("anthropic", None)
    assert "model_name" in str(caught.value)
    assert KEY not in str(caught.value)


@pytest.mark.parametrize(
    ("attempt", "retry_after_s", "jitter", "expected"),
    [
        (1, None, 0.0, 0.25),  # half of 0.5 s at the low end of the jitter
        (1, None, 0.999, 0.49975),
        (3, None, 0.0, 1.0),  # half of 2 s
        (6, None, 0.0, 4.0),  # capped at 8 s, halved
        (1, 3.0, 0.7, 3.0),  # the server's wait, exactly
        (1, 0.0, 0.7, 0.0),
        (1, 21.0, 0.0, None),  # longer than the policy accepts: give up
        (10, None, 0.0, None),  # attempts used up
        (10, 1.0, 0.0, None),
    ],
)
def test_retry_delays(
    attempt: int, retry_after_s: float | None, jitter: float, expected: float | None
) -> None:
    policy = RetryPolicy(max_attempts=10, retry_after_max_s=20)
    delay_s = policy.delay_s(attempt, retry_after_s, jitter)
    assert delay_s == (None if expected is None else pytest.approx(expected))


NOW = datetime(2026, 3, 2, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "7"}, 0.25),
        ({"retry-after": "Mon, 02 Mar 2026 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Mon, 02 Mar 2026 11:00:00 GMT"}, 0.0),
        ({"retry-after": "amanhã"}, None),
        ({"retry-after-ms": "x", "retry-after": "2"}, 2.0),
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "-5"}, 0.0),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, NOW) == expected


def test_usage_sums_calls_and_keeps_who_answered() -> None:
    usage = ModelUsage().add(
        ModelResponse(
            text=None,
            input_tokens=1000,
            output_tokens=10,
            cache_write_tokens=900,
            provider="anthropic",
            model="claude-x",
        ),
        latency_ms=120,
    )
    usage = usage.add(
        ModelResponse(text="oi", input_tokens=1100, output_tokens=30, cache_read_tokens=900),
        latency_ms=80,
    )
    assert usage == ModelUsage(
        provider="anthropic",
        model="claude-x",
        calls=2,
        input_tokens=2100,
        output_tokens=40,
        cache_write_tokens=900,
        cache_read_tokens=900,
        latency_ms=200,
    )
    assert usage.to_json()["cache_read_tokens"] == 900


def test_the_turns_usage_survives_the_log_redactor(capsys: pytest.CaptureFixture[str]) -> None:
    """Token counts sit under `usage` because top-level keys containing "token" are dropped."""
    configure_logging(log_format="json")
    usage = ModelUsage(provider="anthropic", model="claude-x", calls=1, cache_read_tokens=900)
    structlog.get_logger("t").info("turn.finished", usage=usage.to_json(), prefix_sha256="ab")
    event = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert event["usage"]["cache_read_tokens"] == 900
    assert event["usage"]["provider"] == "anthropic"
    assert event["prefix_sha256"] == "ab"


def test_a_server_reported_model_name_is_bounded() -> None:
    usage = ModelUsage().add(ModelResponse(text="oi", model="m" * 100_000), latency_ms=1)
    assert usage.model == "m" * MAX_MODEL_NAME_CHARS
