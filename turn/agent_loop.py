"""The bounded tool loop: ask the model, run the tools it calls, until it answers in text."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import structlog

from turn.model import Model, ModelMessage, ModelRequest, ModelResponse, ModelUsage, ToolCall
from turn.reply_trim import trim_to_sentence, trims_reply
from turn.tools.base import ToolResult

log = structlog.get_logger(__name__)

ToolExecutor = Callable[[ToolCall], Awaitable[ToolResult]]

# Tool calls run per model answer; the rest are answered with a refusal (every call needs a
# result) so one answer cannot fan out into unbounded work.
MAX_TOOL_CALLS_PER_ANSWER = 8

OUT_OF_STEPS_REPLY = (
    "Desculpe, não consegui concluir sua solicitação agora. Um atendente vai continuar por aqui."
)


@dataclass(frozen=True)
class ToolCallRecord:
    name: str
    arguments: dict[str, object]
    error_code: str | None


@dataclass(frozen=True)
class LoopOutcome:
    text: str
    steps: int
    tool_calls: tuple[ToolCallRecord, ...]
    usage: ModelUsage
    exhausted: bool
    # The model's answer had no text: `text` is the fallback, which the conversation may
    # replace (a reply whose choices already say it all: delivery.outbound_choices).
    silent: bool = False

    @property
    def input_tokens(self) -> int | None:
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int | None:
        return self.usage.output_tokens


async def run_agent_loop(
    model: Model,
    request: ModelRequest,
    execute_tool: ToolExecutor,
    *,
    max_steps: int,
    max_tool_calls: int = MAX_TOOL_CALLS_PER_ANSWER,
    clock: Callable[[], float] = time.monotonic,
) -> LoopOutcome:
    """At most `max_steps` model calls, each answer's first `max_tool_calls` tools run; a model
    that never answers gets a polite fallback.

    `clock` (seconds, monotonic) times the model calls for the turn's usage record.
    """
    messages = list(request.messages)
    records: list[ToolCallRecord] = []
    usage = ModelUsage()
    for step in range(1, max_steps + 1):
        started_s = clock()
        response = await model.complete(replace(request, messages=tuple(messages)))
        usage = usage.add(response, round((clock() - started_s) * 1000))
        if not response.tool_calls:
            text = _reply_text(response)
            return LoopOutcome(
                text or OUT_OF_STEPS_REPLY, step, tuple(records), usage, False, silent=not text
            )
        messages.append(
            ModelMessage(
                role="assistant", content=response.text or "", tool_calls=response.tool_calls
            )
        )
        for index, call in enumerate(response.tool_calls):
            result = (
                await execute_tool(call) if index < max_tool_calls else _too_many(max_tool_calls)
            )
            records.append(ToolCallRecord(call.name, dict(call.arguments), result.error_code))
            messages.append(
                ModelMessage(
                    role="tool",
                    content=result.content,
                    tool_call_id=call.id,
                    is_error=result.error_code is not None,
                )
            )
    return LoopOutcome(OUT_OF_STEPS_REPLY, max_steps, tuple(records), usage, True)


def _reply_text(response: ModelResponse) -> str:
    """The answer's text; one cut by the output cap ends at its last full sentence."""
    text = (response.text or "").strip()
    if trims_reply(response):
        trimmed = trim_to_sentence(text)
        log.info(
            "turn.reply_trimmed",
            provider=response.provider,
            model=response.model,
            chars=len(text),
            kept_chars=len(trimmed),
        )
        return trimmed
    return text


def _too_many(max_tool_calls: int) -> ToolResult:
    return ToolResult.error(
        "too_many_tool_calls",
        f"Só as primeiras {max_tool_calls} chamadas de ferramenta de cada resposta são "
        "executadas; esta não foi. Peça menos de cada vez.",
    )
