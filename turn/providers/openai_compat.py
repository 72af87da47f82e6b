"""The OpenAI-compatible Chat Completions adapter (OpenAI, vLLM, Ollama, ... via a base URL).

The system message starts with the byte-stable prefix and the matched skill bodies follow
it, so providers that cache by longest common prefix (OpenAI does it automatically from
1024 tokens) reuse it; `prompt_cache_key` (one per org and agent) routes requests sharing
that prefix to the same cache. Cached tokens come back in usage.prompt_tokens_details.

Answers stream (`stream: true` with `stream_options: {"include_usage": true}`, assembled by
turn.providers.openai_stream); a server that answers one JSON object anyway is read too.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import aiohttp
import structlog

from turn.errors import ModelResponseInvalid
from turn.model import ModelMessage, ModelRequest, ModelResponse, ToolCall, ToolDefinition
from turn.providers.http import (
    Jitter,
    JsonEndpoint,
    RetryPolicy,
    Sleep,
    post_model,
    token_count,
)
from turn.providers.openai_stream import OpenAIStream
from turn.providers.streaming import StreamLimits, read_model_answer

log = structlog.get_logger(__name__)

PROVIDER = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MaxTokensField = Literal["max_completion_tokens", "max_tokens"]


@dataclass(frozen=True)
class OpenAIConfig:
    model: str
    # Local servers (vLLM, Ollama) may need none. Never printed.
    api_key: str | None = field(default=None, repr=False)
    base_url: str = DEFAULT_BASE_URL
    max_tokens: int = 1024
    # OpenAI's current name; Ollama reads only `max_tokens` (and ignores the other).
    max_tokens_field: MaxTokensField = "max_completion_tokens"
    send_prompt_cache_key: bool = True
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    auth_hint: str = "check SKILLET_OPENAI_API_KEY"


def build_request(
    request: ModelRequest,
    *,
    model: str,
    max_tokens: int,
    max_tokens_field: MaxTokensField = "max_completion_tokens",
    send_prompt_cache_key: bool = True,
) -> dict[str, Any]:
    """The /chat/completions body for `request` (pure)."""
    system = request.prefix
    if request.skill_context:
        system = f"{system}\n{request.skill_context}"
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": system}, *_messages(request.messages)],
        max_tokens_field: max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
    if send_prompt_cache_key and request.cache_key:
        body["prompt_cache_key"] = request.cache_key
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id or "",
                    "content": message.content,
                }
            )
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
                    "tool_calls": [_tool_call_json(c) for c in message.tool_calls],
                }
            )
        elif message.images:
            parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
            parts += [
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:{image.media_type};base64,{image.base64()}"},
                }
                for image in message.images
            ]
            out.append({"role": message.role, "content": parts})
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def _tool_call_json(call: ToolCall) -> dict[str, Any]:
    arguments = json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"))
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def parse_response(body: dict[str, Any], *, requested_model: str) -> ModelResponse:
    """A ModelResponse from a /chat/completions answer; ModelResponseInvalid if it is not."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelResponseInvalid(f"{PROVIDER} answer has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ModelResponseInvalid(f"{PROVIDER} choice has no message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ModelResponseInvalid(f"{PROVIDER} message content is not a string")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ModelResponseInvalid(f"{PROVIDER} message tool_calls is not a list")
    prompt, completion, cached = _usage(body.get("usage"))
    model = body.get("model")
    return ModelResponse(
        text=content or None,
        tool_calls=tuple(_tool_call(c) for c in raw_calls),
        input_tokens=prompt,
        output_tokens=completion,
        cache_read_tokens=cached,
        # OpenAI does not bill cache writes apart: 0 when it reported usage, else unknown.
        cache_write_tokens=None if prompt is None else 0,
        provider=PROVIDER,
        model=model if isinstance(model, str) and model else requested_model,
        extra={"finish_reason": choices[0].get("finish_reason")},
        truncated=choices[0].get("finish_reason") == "length",
    )


def _tool_call(raw: object) -> ToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise ModelResponseInvalid(f"{PROVIDER} tool call has no function object")
    function = raw["function"]
    call_id, name = raw.get("id"), function.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise ModelResponseInvalid(f"{PROVIDER} tool call has no string id and function name")
    return ToolCall(id=call_id, name=name, arguments=_arguments(name, function.get("arguments")))


def _arguments(name: str, raw: object) -> dict[str, Any]:
    """The call's arguments. A model that writes broken JSON gets an empty object, so the
    tool answers with a teaching message and the model can try again (not a failed turn)."""
    if isinstance(raw, dict):  # some compatible servers send the object itself
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        log.warning("model.tool_arguments_invalid", provider=PROVIDER, tool=name)
        return {}
    return parsed


def _usage(usage: object) -> tuple[int | None, int | None, int | None]:
    """(prompt, completion, cached) token counts, each None when the server did not report
    it (no usage at all, or no prompt_tokens_details: a server without a prompt cache)."""
    if usage is None:
        return None, None, None
    if not isinstance(usage, dict):
        raise ModelResponseInvalid(f"{PROVIDER} usage is not an object")
    details = usage.get("prompt_tokens_details") or {}
    if not isinstance(details, dict):
        raise ModelResponseInvalid(f"{PROVIDER} usage.prompt_tokens_details is not an object")
    return (
        token_count(PROVIDER, usage.get("prompt_tokens"), "prompt_tokens"),
        token_count(PROVIDER, usage.get("completion_tokens"), "completion_tokens"),
        token_count(PROVIDER, details.get("cached_tokens"), "prompt_tokens_details.cached_tokens"),
    )


class OpenAICompatModel:
    """A Model answering through POST {base_url}/chat/completions, streamed."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        config: OpenAIConfig,
        *,
        sleep: Sleep = asyncio.sleep,
        jitter: Jitter = random.random,
    ) -> None:
        self._http = http
        self._config = config
        self._sleep = sleep
        self._jitter = jitter
        headers = {"authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._limits = StreamLimits.for_output(config.max_tokens)
        self._endpoint = JsonEndpoint(
            provider=PROVIDER,
            url=config.base_url.rstrip("/") + "/chat/completions",
            headers=headers,
            policy=config.policy,
            secrets=(config.api_key,) if config.api_key else (),
            auth_hint=config.auth_hint,
        )

    def __repr__(self) -> str:  # never the key
        return (
            f"OpenAICompatModel(model={self._config.model!r}, base_url={self._config.base_url!r})"
        )

    async def complete(self, request: ModelRequest) -> ModelResponse:
        config = self._config
        body = build_request(
            request,
            model=config.model,
            max_tokens=config.max_tokens,
            max_tokens_field=config.max_tokens_field,
            send_prompt_cache_key=config.send_prompt_cache_key,
        )

        async def read(response: aiohttp.ClientResponse) -> ModelResponse:
            return await read_model_answer(
                response,
                provider=PROVIDER,
                limits=self._limits,
                accumulator=OpenAIStream(),
                parse_json=lambda answer: parse_response(answer, requested_model=config.model),
            )

        return await post_model(
            self._http, self._endpoint, body, read, sleep=self._sleep, jitter=self._jitter
        )
