"""The default `local` model: deterministic, offline, and it exercises the tool path."""

from __future__ import annotations

import asyncio

from turn.model import ModelRequest, ModelResponse, ToolCall

NO_SKILL_REPLY = (
    "Olá! Obrigado pela mensagem. Ainda não tenho uma orientação específica sobre isso, "
    "então vou encaminhar para a nossa equipe, que responde em breve."
)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("#-* ").strip()
        if stripped:
            return stripped
    return ""


def _answer(text: str | None, calls: tuple[ToolCall, ...] = ()) -> ModelResponse:
    return ModelResponse(text=text, tool_calls=calls, provider="local", model="local")


class LocalModel:
    """Answers from the first injected skill; reads its first reference once when it has one.

    `latency_s` imitates a provider's response time (demos, load and crash tests).
    """

    def __init__(self, latency_s: float = 0.0) -> None:
        self._latency_s = latency_s

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._latency_s:
            await asyncio.sleep(self._latency_s)
        if not request.injected_skills:
            return _answer(NO_SKILL_REPLY)
        skill = request.injected_skills[0]
        tool_results = [m for m in request.messages if m.role == "tool"]
        if skill.reference_paths and not tool_results:
            call = ToolCall(
                id="call_1",
                name="read_skill_reference",
                arguments={"skill_name": skill.name, "path": skill.reference_paths[0]},
            )
            return _answer(None, (call,))
        reply = _first_line(skill.body)
        if tool_results and not tool_results[-1].content.startswith("[erro"):
            reply = f"{reply}\n{_first_line(tool_results[-1].content)}"
        return _answer(reply)
