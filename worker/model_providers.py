"""Building the per-agent model registry from Settings (part of the composition root)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import aiohttp
from pydantic import SecretStr

from turn.errors import ModelNotConfigured
from turn.local_model import LocalModel
from turn.model import Model
from turn.model_choice import NAMED_PROVIDERS as NAMED_PROVIDERS  # the CLI checks against it
from turn.model_choice import PROVIDERS as PROVIDERS
from turn.providers.anthropic import AnthropicConfig, AnthropicModel
from turn.providers.http import RetryPolicy, model_http_session
from turn.providers.openai_compat import OpenAICompatModel, OpenAIConfig
from turn.providers.registry import ModelFactory, ModelRegistry
from worker.settings import Settings

ANTHROPIC_KEY_VARIABLES = "SKILLET_ANTHROPIC_API_KEY (or ANTHROPIC_API_KEY)"
OPENAI_KEY_VARIABLE = "SKILLET_OPENAI_API_KEY"
# Hosts that refuse requests without a key (a local server's base URL needs none).
_KEYED_OPENAI_HOSTS = frozenset({"api.openai.com"})


def build_default_model(settings: Settings) -> Model:
    """The model of agents without a provider (`SKILLET_MODEL`)."""
    if settings.model == "local":
        return LocalModel(latency_s=settings.local_model_latency_ms / 1000)
    raise ValueError(f"unknown model {settings.model!r}: only 'local' is available")


def model_http(settings: Settings) -> aiohttp.ClientSession:
    """The HTTP client every provider adapter shares; the composition root closes it."""
    return model_http_session(
        connect_timeout_s=settings.model_connect_timeout_s,
        read_timeout_s=settings.model_read_timeout_s,
    )


def build_model_registry(
    settings: Settings,
    http: aiohttp.ClientSession,
    *,
    default: Model | None = None,
    wrap: Callable[[Model], Model] | None = None,
) -> ModelRegistry:
    """`local`, `anthropic` and `openai` (any Chat Completions server) by agent; `default`
    (tests, benchmarks) replaces the model of agents without a provider."""
    local = LocalModel(latency_s=settings.local_model_latency_ms / 1000)
    factories: dict[str, ModelFactory] = {
        "local": lambda _name: local,
        "anthropic": lambda name: _anthropic(settings, http, name),
        "openai": lambda name: _openai(settings, http, name),
    }
    return ModelRegistry(default or build_default_model(settings), factories, wrap=wrap)


def _policy(settings: Settings) -> RetryPolicy:
    return RetryPolicy(
        max_attempts=settings.model_max_attempts,
        backoff_base_s=settings.model_backoff_base_s,
        backoff_max_s=settings.model_backoff_max_s,
        retry_after_max_s=settings.model_retry_after_max_s,
    )


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None


def _named(provider: str, name: str | None) -> str:
    if not name:
        raise ModelNotConfigured(
            f"the agent's model_provider is {provider!r} but its model_name is empty: "
            "set agents.model_name to the provider's model id"
        )
    return name


def _anthropic(settings: Settings, http: aiohttp.ClientSession, name: str | None) -> Model:
    api_key = _secret(settings.anthropic_api_key)
    if api_key is None:
        raise ModelNotConfigured(
            f"model provider 'anthropic' has no API key: set {ANTHROPIC_KEY_VARIABLES}"
        )
    config = AnthropicConfig(
        model=_named("anthropic", name),
        api_key=api_key,
        base_url=settings.anthropic_base_url,
        api_version=settings.anthropic_version,
        max_tokens=settings.model_max_output_tokens,
        policy=_policy(settings),
    )
    return AnthropicModel(http, config)


def _openai(settings: Settings, http: aiohttp.ClientSession, name: str | None) -> Model:
    api_key = _secret(settings.openai_api_key)
    if api_key is None and urlsplit(settings.openai_base_url).hostname in _KEYED_OPENAI_HOSTS:
        raise ModelNotConfigured(
            f"model provider 'openai' has no API key for {settings.openai_base_url}: "
            f"set {OPENAI_KEY_VARIABLE} (or SKILLET_OPENAI_BASE_URL to a server that needs none)"
        )
    config = OpenAIConfig(
        model=_named("openai", name),
        api_key=api_key,
        base_url=settings.openai_base_url,
        max_tokens=settings.model_max_output_tokens,
        max_tokens_field="max_tokens"
        if settings.openai_max_tokens_field == "max_tokens"
        else "max_completion_tokens",
        send_prompt_cache_key=settings.openai_prompt_cache_key,
        policy=_policy(settings),
    )
    return OpenAICompatModel(http, config)
