"""The default `local` model: deterministic, offline, and it exercises the tool path.

It never promises a person it does not call: with no skill to answer from it says so and
offers one; when the customer's last message asks for one (a word of `PERSON_WORDS`), it calls
`handoff_to_human` (when the turn offers it) and, after the tool's answer, says a person will
continue. The conversation's own detector (conversation.handoff.request) hands most such
messages off before any model runs; this is the model's share for the ones that reach it.
"""

from __future__ import annotations

import asyncio

from keywords.words import words_of
from turn.model import ModelMessage, ModelRequest, ModelResponse, ToolCall

NO_SKILL_REPLY = (
    "Olá! Obrigado pela mensagem. Ainda não tenho uma orientação específica sobre isso. "
    "Se preferir falar com uma pessoa da equipe, é só pedir."
)
HANDOFF_TOOL = "handoff_to_human"
HANDOFF_REASON = "O cliente pediu para falar com uma pessoa."
HANDOFF_REPLY = "Certo! Passei sua conversa para a equipe: uma pessoa continua daqui."
# Words (as keywords.words reads them: no accents, lower case) that ask for a person.
PERSON_WORDS = frozenset(
    {"atendente", "atendentes", "pessoa", "humano", "humana", "gerente", "responsavel"}
)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("#-* ").strip()
        if stripped:
            return stripped
    return ""


def _answer(text: str | None, calls: tuple[ToolCall, ...] = ()) -> ModelResponse:
    return ModelResponse(text=text, tool_calls=calls, provider="local", model="local")


def _last_customer_text(messages: tuple[ModelMessage, ...]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


# "pessoa" as a count or a legal kind is no request: "R$ 30 por pessoa", "pessoa jurídica".
COUNTING_BEFORE = frozenset({"por", "cada"})
KIND_AFTER = frozenset({"juridica", "fisica"})


def asks_for_person(text: str) -> bool:
    """Whether `text` names a person of the business (the local model's plain reading)."""
    words = words_of(text)
    for i, word in enumerate(words):
        if word not in PERSON_WORDS:
            continue
        counted = word == "pessoa" and (
            (i > 0 and words[i - 1] in COUNTING_BEFORE)
            or (i + 1 < len(words) and words[i + 1] in KIND_AFTER)
        )
        if not counted:
            return True
    return False


def _handoff(request: ModelRequest) -> ModelResponse | None:
    """The handoff call, or after it the acknowledgement; None when no person was asked for."""
    if not any(t.name == HANDOFF_TOOL for t in request.tools):
        return None
    if not asks_for_person(_last_customer_text(request.messages)):
        return None
    called = any(
        call.name == HANDOFF_TOOL
        for m in request.messages
        if m.role == "assistant"
        for call in m.tool_calls
    )
    if called:
        return _answer(HANDOFF_REPLY)
    call = ToolCall(id="call_handoff", name=HANDOFF_TOOL, arguments={"reason": HANDOFF_REASON})
    return _answer(None, (call,))


class LocalModel:
    """Answers from the first injected skill; reads its first reference once when it has one;
    hands off to a person when the customer asks for one.

    `latency_s` imitates a provider's response time (demos, load and crash tests).
    """

    def __init__(self, latency_s: float = 0.0) -> None:
        self._latency_s = latency_s

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._latency_s:
            await asyncio.sleep(self._latency_s)
        handoff = _handoff(request)
        if handoff is not None:
            return handoff
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
