"""Unit tests of turn.local_model: the offline model reads a reference once, then answers;
asked for a person, it calls handoff_to_human."""

from __future__ import annotations

import dataclasses

import pytest

from turn.local_model import HANDOFF_REASON, HANDOFF_REPLY, NO_SKILL_REPLY, LocalModel
from turn.model import InjectedSkill, ModelMessage, ModelRequest, ToolCall
from turn.prompt import build_prefix, render_skill_context
from turn.skill_index import render_skill_index
from turn.tools.registry import turn_tools

USER = ModelMessage(role="user", content="Preciso da segunda via do boleto")
BOLETO = InjectedSkill(
    name="segunda-via-boleto",
    body="## Envio a segunda via pelo link seguro.\nConfirme o CPF antes.\n",
    reference_paths=("references/prazos.md", "references/multas.md"),
)
FRETE = InjectedSkill(
    name="frete", body="Frete grátis acima de R$ 199.\nSegunda linha.", reference_paths=()
)


def request(injected: tuple[InjectedSkill, ...], *messages: ModelMessage) -> ModelRequest:
    return ModelRequest(
        prefix=build_prefix("Persona.", turn_tools(), render_skill_index([])),
        skill_context=render_skill_context(injected),
        messages=(USER, *messages),
        tools=turn_tools(),
        injected_skills=injected,
    )


def tool_answer(content: str, call_id: str = "call_1") -> tuple[ModelMessage, ModelMessage]:
    call = ToolCall(call_id, "read_skill_reference", {"skill_name": BOLETO.name, "path": "x"})
    return (
        ModelMessage(role="assistant", content="", tool_calls=(call,)),
        ModelMessage(role="tool", content=content, tool_call_id=call_id),
    )


async def test_first_skill_with_references_asks_for_its_first_reference() -> None:
    response = await LocalModel().complete(request((BOLETO, FRETE)))
    assert response.text is None
    assert len(response.tool_calls) == 1
    call = response.tool_calls[0]
    assert call.name == "read_skill_reference"
    assert call.arguments == {"skill_name": "segunda-via-boleto", "path": "references/prazos.md"}
    assert call.id


async def test_after_the_tool_result_it_answers_with_body_and_reference_once() -> None:
    reference = "Boletos podem ser reemitidos até 30 dias após o vencimento.\nOutra linha."
    response = await LocalModel().complete(request((BOLETO,), *tool_answer(reference)))
    assert response.tool_calls == ()
    assert response.text == (
        "Envio a segunda via pelo link seguro.\n"
        "Boletos podem ser reemitidos até 30 dias após o vencimento."
    )


async def test_skill_without_references_answers_without_tools() -> None:
    response = await LocalModel().complete(request((FRETE, BOLETO)))
    assert response.tool_calls == ()
    assert response.text == "Frete grátis acima de R$ 199."


async def test_nothing_injected_gives_the_generic_pt_br_reply() -> None:
    response = await LocalModel().complete(request(()))
    assert response.tool_calls == ()
    assert response.text == NO_SKILL_REPLY
    assert "Olá" in NO_SKILL_REPLY and "equipe" in NO_SKILL_REPLY


async def test_an_error_tool_result_is_not_repeated_to_the_customer() -> None:
    error = "[erro storage_unavailable] O armazenamento de arquivos não respondeu."
    response = await LocalModel().complete(request((BOLETO,), *tool_answer(error)))
    assert response.tool_calls == ()
    assert response.text == "Envio a segunda via pelo link seguro."
    assert "erro" not in (response.text or "")


def asking(text: str, *messages: ModelMessage) -> ModelRequest:
    return dataclasses.replace(
        request((FRETE,)), messages=(ModelMessage(role="user", content=text), *messages)
    )


@pytest.mark.parametrize(
    "text",
    [
        "quero falar com um atendente",
        "Uma PESSOA de verdade, por favor",
        "vc é humano?",
        "me passa pro gerente",
        "cadê a atendente??",
    ],
)
async def test_a_request_for_a_person_calls_handoff_to_human_then_says_so(text: str) -> None:
    first = await LocalModel().complete(asking(text))
    assert first.text is None
    [call] = first.tool_calls
    assert call.name == "handoff_to_human" and call.arguments == {"reason": HANDOFF_REASON}
    done = (
        ModelMessage(role="assistant", content="", tool_calls=(call,)),
        ModelMessage(role="tool", content="Pronto", tool_call_id=call.id),
    )
    second = await LocalModel().complete(asking(text, *done))
    assert second.tool_calls == () and second.text == HANDOFF_REPLY


async def test_no_promise_of_a_person_without_the_tool() -> None:
    # Offered no handoff tool, it does not pretend: it answers from the skill.
    no_tool = dataclasses.replace(asking("quero um atendente"), tools=())
    response = await LocalModel().complete(no_tool)
    assert response.text == "Frete grátis acima de R$ 199."
    assert "encaminhar" not in NO_SKILL_REPLY and "vou" not in NO_SKILL_REPLY.lower()


@pytest.mark.parametrize(
    "text", ["quanto custa o rodízio por pessoa?", "vocês atendem pessoa jurídica?", "oi"]
)
async def test_a_person_named_as_a_count_or_a_kind_is_no_request(text: str) -> None:
    response = await LocalModel().complete(asking(text))
    assert response.tool_calls == () and response.text == "Frete grátis acima de R$ 199."
