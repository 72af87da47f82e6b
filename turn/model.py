"""The provider-neutral model interface: a request in, text and/or tool calls out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant", "tool"]


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
class ModelMessage:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class InjectedSkill:
    """A matched skill as the model sees it after the prefix: body plus reference paths."""

    name: str
    body: str
    reference_paths: tuple[str, ...]


@dataclass(frozen=True)
class ModelRequest:
    """`prefix` is byte-stable across turns (cacheable); everything else varies per turn."""

    prefix: str
    skill_context: str
    messages: tuple[ModelMessage, ...]
    tools: tuple[ToolDefinition, ...]
    injected_skills: tuple[InjectedSkill, ...] = ()


@dataclass(frozen=True)
class ModelResponse:
    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class Model(Protocol):
    async def complete(self, request: ModelRequest) -> ModelResponse: ...
