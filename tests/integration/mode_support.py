"""Models and a sender for the conversation-mode tests: a model that thinks until told to
answer, one that hands off, and a sender that records what reached the customer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from delivery.contract import Recipient
from delivery.outbox_queries import OutboxRow
from turn.model import ModelRequest, ModelResponse, ToolCall

AGENT_REPLY = "Resposta do agente."
HANDOFF_ACK = "Vou chamar alguém da equipe."


def _answer(text: str | None, calls: tuple[ToolCall, ...] = ()) -> ModelResponse:
    return ModelResponse(text=text, tool_calls=calls, provider="local", model="local")


@dataclass
class SlowModel:
    """Answers AGENT_REPLY, but only once `answer` is set: `thinking` is set while it waits."""

    thinking: asyncio.Event = field(default_factory=asyncio.Event)
    answer: asyncio.Event = field(default_factory=asyncio.Event)
    calls: int = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        self.thinking.set()
        await self.answer.wait()
        return _answer(AGENT_REPLY)


@dataclass
class CountingModel:
    """Answers AGENT_REPLY at once; counts its calls and keeps each request."""

    requests: list[ModelRequest] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return _answer(AGENT_REPLY)


@dataclass
class HandingOffModel:
    """Calls handoff_to_human twice in one answer (the second is a no-op), then writes the
    acknowledgement."""

    calls: int = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if not any(m.role == "tool" for m in request.messages):
            return _answer(
                None,
                (
                    ToolCall("h1", "handoff_to_human", {"reason": "quer negociar desconto"}),
                    ToolCall("h2", "handoff_to_human", {"reason": "outra"}),
                ),
            )
        return _answer(HANDOFF_ACK)


@dataclass
class RecordingSender:
    """What reached the customer, in order."""

    sent: list[str] = field(default_factory=list)

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        self.sent.append(row.body)
        return None
