"""The provider-neutral model interface: a request in, text and/or tool calls out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant", "tool"]
# A model name as a server reports it is kept this long at most (token usage rows per day).
MAX_MODEL_NAME_CHARS = 200


@dataclass(frozen=True)
class ToolDefinition:
    name: str
    description: str
    parameters: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ImagePart:
    """A customer's image for a model that takes images (JPEG, PNG or WebP, sniffed)."""

    media_type: str
    data: bytes = field(repr=False)

    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")


@dataclass(frozen=True)
class ModelMessage:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False  # a tool result that is a teaching message, not a result
    images: tuple[ImagePart, ...] = ()  # a user message's images, after its text


@dataclass(frozen=True)
class InjectedSkill:
    """A matched skill as the model sees it after the prefix: body plus reference paths."""

    name: str
    body: str
    reference_paths: tuple[str, ...]
    # Its files under assets/, which send_skill_file can send (listed only when it has some).
    file_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelRequest:
    """`prefix` is byte-stable across turns (cacheable); everything else varies per turn."""

    prefix: str
    skill_context: str
    messages: tuple[ModelMessage, ...]
    tools: tuple[ToolDefinition, ...]
    injected_skills: tuple[InjectedSkill, ...] = ()
    # Whose prefix this is (one org's agent), hashed, never a secret: providers that route
    # by key (OpenAI's prompt_cache_key) send requests sharing a prefix to the same cache.
    cache_key: str | None = None
    # None: the provider's default (a turn); 0.0 where an answer must be reproducible
    # (consolidation's rewrite of an umbrella's body).
    temperature: float | None = None


@dataclass(frozen=True)
class ModelResponse:
    """One model call's answer and what it cost.

    `input_tokens` counts every prompt token, cached or not; `cache_write_tokens` and
    `cache_read_tokens` are the parts of it written to / read from the provider's prompt
    cache. A count the server did not report is None (unknown), never a made-up 0.
    `provider` and `model` name who answered (the model id the provider reports).
    `truncated`: the answer stopped at the output cap (OpenAI `finish_reason: length`,
    Anthropic `stop_reason: max_tokens`), so its text may end mid-sentence.
    """

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    extra: dict[str, Any] = field(default_factory=dict)
    cache_write_tokens: int | None = 0
    cache_read_tokens: int | None = 0
    provider: str = ""
    model: str = ""
    truncated: bool = False


def _plus(total: int | None, more: int | None) -> int | None:
    """A sum of counts that is unknown as soon as one part is."""
    return None if total is None or more is None else total + more


@dataclass(frozen=True)
class ModelUsage:
    """What the model calls of one turn cost, summed (see ModelResponse for the token kinds).

    A token count is None (unknown) once any call of the turn did not report it: a partial
    sum would read as a cheaper turn than the one that ran.
    """

    provider: str = ""
    model: str = ""
    calls: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cache_write_tokens: int | None = 0
    cache_read_tokens: int | None = 0
    latency_ms: int = 0  # time spent waiting for the model, all calls together

    def add(self, response: ModelResponse, latency_ms: int) -> ModelUsage:
        return ModelUsage(
            provider=response.provider or self.provider,
            # The server names the model: stored per day, so its length is ours to bound.
            model=(response.model or self.model)[:MAX_MODEL_NAME_CHARS],
            calls=self.calls + 1,
            input_tokens=_plus(self.input_tokens, response.input_tokens),
            output_tokens=_plus(self.output_tokens, response.output_tokens),
            cache_write_tokens=_plus(self.cache_write_tokens, response.cache_write_tokens),
            cache_read_tokens=_plus(self.cache_read_tokens, response.cache_read_tokens),
            latency_ms=self.latency_ms + latency_ms,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "latency_ms": self.latency_ms,
        }


class Model(Protocol):
    async def complete(self, request: ModelRequest) -> ModelResponse: ...
