"""`handoff_to_human`: the model passes the conversation to a person of the business.

The tool writes nothing itself: it records the reason in the turn's ledger, and the turn's
reply commit puts the conversation in mode 'waiting' with that reply (fenced like it, so a
turn whose reply is refused hands nothing off). The reply the model writes next is the
customer's acknowledgement and is still sent; a second call in the same turn changes nothing.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from turn.tools.base import Tool, ToolContext, ToolResult

# Kept on the conversation (mode_reason) and shown to the person who takes it.
MAX_REASON_CHARS = 500

DONE = (
    "Pronto: a conversa vai para a equipe assim que você responder. Escreva agora ao cliente "
    "uma mensagem curta dizendo que uma pessoa vai continuar o atendimento."
)
ALREADY = "A conversa já vai para a equipe nesta resposta; nada mudou."


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(
        description="Por que uma pessoa precisa assumir (uma frase, para a equipe).",
        max_length=MAX_REASON_CHARS,
    )


async def run(context: ToolContext, args: Args) -> ToolResult:
    if context.ledger.handoff_reason is not None:
        return ToolResult(ALREADY)
    context.ledger.handoff_reason = args.reason.strip() or "sem motivo informado"
    return ToolResult(DONE)


TOOL = Tool(
    name="handoff_to_human",
    description=(
        "Passa a conversa para uma pessoa da equipe (o agente para de responder até ela "
        "devolver). Use quando a skill mandar chamar um atendente ou o cliente precisar de "
        "alguém."
    ),
    args=Args,
    run=run,
)
