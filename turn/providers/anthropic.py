"""The Anthropic Messages API adapter: request body, answer parsing, prompt-cache accounting.

Answers stream (`stream: true`, turn.providers.anthropic_stream); the assembled message is
read by the same `parse_response` as a non-streaming answer.

The stable prefix is the first system block and carries the only `cache_control`
breakpoint, so tools + prefix are cached (tools render before the system in Anthropic's
cache order) and the matched skill bodies, in a second system block, never break it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import structlog

from turn.errors import ModelResponseInvalid
from turn.model import ModelMessage, ModelRequest, ModelResponse, ToolCall, ToolDefinition
from turn.providers.anthropic_stream import AnthropicStream
from turn.providers.http import (
    Jitter,
    JsonEndpoint,
    RetryPolicy,
    Sleep,
    post_model,
    token_count,
)
from turn.providers.streaming import StreamLimits, read_model_answer

log = structlog.get_logger(__name__)

PROVIDER = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
CACHE_BREAKPOINT = {"type": "ephemeral"}


@dataclass(frozen=True)
class AnthropicConfig:
    model: str
    api_key: str = field(repr=False)  # never printed (logs, tracebacks, debuggers)
    base_url: str = DEFAULT_BASE_URL
    api_version: str = API_VERSION
    max_tokens: int = 1024
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    auth_hint: str = "check SKILLET_ANTHROPIC_API_KEY"


def build_request(request: ModelRequest, *, model: str, max_tokens: int) -> dict[str, Any]:
    """The /v1/messages body for `request` (pure; the prefix block is byte-stable)."""
    system: list[dict[str, Any]] = [
        {"type": "text", "text": request.prefix, "cache_control": dict(CACHE_BREAKPOINT)}
    ]
    if request.skill_context:
        system.append({"type": "text", "text": request.skill_context})
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": _messages(request.messages),
        "stream": True,
    }
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _blocks(message: ModelMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content,
        }
        if message.is_error:
            block["is_error"] = True
        return [block]
    blocks: list[dict[str, Any]] = []
    if message.content.strip():  # an empty text block is refused by the API
        blocks.append({"type": "text", "text": message.content})
    for image in message.images:
        source = {"type": "base64", "media_type": image.media_type, "data": image.base64()}
        blocks.append({"type": "image", "source": source})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)}
        )
    return blocks


def _messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """Our messages as alternating user/assistant turns: tool results are user content,
    consecutive messages of one role merge, and the list starts with the user (history
    cut at its limit may begin with one of our replies: it is dropped)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks or (not turns and role == "assistant"):
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def parse_response(body: dict[str, Any], *, requested_model: str) -> ModelResponse:
    """A ModelResponse from a /v1/messages answer; ModelResponseInvalid if it is not one."""
    content = body.get("content")
    if not isinstance(content, list):
        raise ModelResponseInvalid(f"{PROVIDER} answer has no content list: {_keys(body)}")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict):
            raise ModelResponseInvalid(f"{PROVIDER} content block is not an object")
        if block.get("type") == "text":
            texts.append(_str(block, "text"))
        elif block.get("type") == "tool_use":
            calls.append(_tool_call(block))
        # Other block kinds (thinking, ...) carry nothing the turn uses.
    usage = _usage(body.get("usage"))
    model = body.get("model")
    uncached = usage["input_tokens"]
    write, read = usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"]
    return ModelResponse(
        text="".join(texts) or None,
        tool_calls=tuple(calls),
        # All prompt tokens: the uncached ones plus the cache parts the server reported
        # (a server that reports no cache fields caches nothing we know of).
        input_tokens=None if uncached is None else uncached + (write or 0) + (read or 0),
        output_tokens=usage["output_tokens"],
        cache_write_tokens=write,
        cache_read_tokens=read,
        provider=PROVIDER,
        model=model if isinstance(model, str) and model else requested_model,
        extra={"stop_reason": body.get("stop_reason")},
        truncated=body.get("stop_reason") == "max_tokens",
    )


def _tool_call(block: dict[str, Any]) -> ToolCall:
    arguments = block.get("input")
    if not isinstance(arguments, dict):
        raise ModelResponseInvalid(f"{PROVIDER} tool_use block has no input object")
    name = _str(block, "name")
    if block.get("input_invalid"):  # streamed as broken JSON (anthropic_stream)
        log.warning("model.tool_arguments_invalid", provider=PROVIDER, tool=name)
    return ToolCall(id=_str(block, "id"), name=name, arguments=arguments)


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _usage(usage: object) -> dict[str, int | None]:
    """Each count, None when the server did not report it."""
    if usage is None:
        return dict.fromkeys(_USAGE_FIELDS, None)
    if not isinstance(usage, dict):
        raise ModelResponseInvalid(f"{PROVIDER} usage is not an object")
    # The cache fields may be absent or null.
    return {name: token_count(PROVIDER, usage.get(name), name) for name in _USAGE_FIELDS}


def _str(block: dict[str, Any], key: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise ModelResponseInvalid(f"{PROVIDER} {block.get('type')} block has no string {key!r}")
    return value


def _keys(body: dict[str, Any]) -> str:
    return "keys " + ", ".join(sorted(body)) if body else "empty object"


class AnthropicModel:
    """A Model answering through POST {base_url}/v1/messages, streamed."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        config: AnthropicConfig,
        *,
        sleep: Sleep = asyncio.sleep,
        jitter: Jitter = random.random,
    ) -> None:
        self._http = http
        self._config = config
        self._sleep = sleep
        self._jitter = jitter
        self._limits = StreamLimits.for_output(config.max_tokens)
        self._endpoint = JsonEndpoint(
            provider=PROVIDER,
            url=config.base_url.rstrip("/") + "/v1/messages",
            headers={"x-api-key": config.api_key, "anthropic-version": config.api_version},
            policy=config.policy,
            secrets=(config.api_key,),
            auth_hint=config.auth_hint,
        )

    def __repr__(self) -> str:  # never the key
        return f"AnthropicModel(model={self._config.model!r}, base_url={self._config.base_url!r})"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = build_request(request, model=self._config.model, max_tokens=self._config.max_tokens)
        model = self._config.model

        async def read(response: aiohttp.ClientResponse) -> ModelResponse:
            return await read_model_answer(
                response,
                provider=PROVIDER,
                limits=self._limits,
                accumulator=AnthropicStream(),
                parse_json=lambda answer: parse_response(answer, requested_model=model),
            )

        return await post_model(
            self._http, self._endpoint, body, read, sleep=self._sleep, jitter=self._jitter
        )
