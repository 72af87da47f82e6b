"""`send_choices`: options the customer taps, sent after the reply's text and its files.

1-3 choices go as reply buttons, 4-10 as a list (WAHA: a numbered text the customer answers
with the number). Nothing is sent here: the set is recorded in the turn's ledger (one a turn),
committed with the reply as its last outbox part and sent after the others, in order. A tap
comes back as `[escolheu: «título» (id: ...)]`, answered like any message.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from delivery.outbound_choices import (
    DEFAULT_LIST_BUTTON,
    MAX_CHOICES,
    MAX_DESCRIPTION_CHARS,
    MAX_ID_CHARS,
    MAX_LIST_BUTTON_CHARS,
    MAX_ROW_TITLE_CHARS,
    MAX_TEXT_CHARS,
    Choice,
    OutboundChoices,
    refusal,
)
from turn.tools.base import Tool, ToolContext, ToolResult

# Bounds on what the model may hand in at all: a refusal names the real limits, these keep a
# hostile 1,000-row call from being read past the door (the registry refuses them first).
_MAX_LISTED = MAX_CHOICES * 2
_MAX_FIELD_CHARS = MAX_TEXT_CHARS * 2


class ChoiceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(
        description="Id da opção (volta junto quando o cliente escolhe).",
        max_length=MAX_ID_CHARS * 2,
    )
    title: str = Field(
        description=f"Título: até 20 caracteres em botões, até {MAX_ROW_TITLE_CHARS} na lista.",
        max_length=_MAX_FIELD_CHARS,
    )
    description: str | None = Field(
        default=None,
        description=f"Só em listas (4 a 10 opções): até {MAX_DESCRIPTION_CHARS} caracteres.",
        max_length=_MAX_FIELD_CHARS,
    )


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        description=f"A pergunta que acompanha as opções (até {MAX_TEXT_CHARS} caracteres).",
        max_length=_MAX_FIELD_CHARS,
    )
    choices: list[ChoiceArgs] = Field(
        description="De 1 a 10 opções: até 3 viram botões, de 4 a 10 uma lista.",
        max_length=_MAX_LISTED,
    )
    button: str | None = Field(
        default=None,
        description=f"Rótulo do botão da lista (até {MAX_LIST_BUTTON_CHARS} caracteres; "
        f"padrão {DEFAULT_LIST_BUTTON!r}).",
        max_length=_MAX_FIELD_CHARS,
    )


async def run(context: ToolContext, args: Args) -> ToolResult:
    if context.ledger.choices is not None:
        return ToolResult.error(
            "choices_already_sent",
            "Esta resposta já leva um conjunto de opções; só cabe um por resposta.",
        )
    choices = tuple(
        Choice(c.id.strip(), c.title.strip(), (c.description or "").strip() or None)
        for c in args.choices
    )
    button = (args.button or "").strip() or DEFAULT_LIST_BUTTON
    text = args.text.strip()
    refused = refusal(text, choices, button)
    if refused is not None:
        return ToolResult.error(refused.code, refused.message)
    outbound = OutboundChoices(text, choices, button)
    context.ledger.choices = outbound
    shape = "uma lista" if outbound.as_list else "botões"
    return ToolResult(
        f"{len(choices)} opções vão como {shape}, depois da sua resposta de texto. Não repita "
        "as opções no texto; quando o cliente escolher, chega [escolheu: «título» (id: ...)]."
    )


TOOL = Tool(
    name="send_choices",
    description=(
        "Envia ao cliente opções para tocar (ex.: horários livres): até 3 viram botões, de 4 a "
        "10 uma lista; vão depois da sua resposta de texto. A escolha volta como "
        "[escolheu: «título» (id: ...)]. Uma vez por resposta."
    ),
    args=Args,
    run=run,
)
