"""`schedule_followup`: the model schedules a WhatsApp template to send the customer later
(a reminder the day before, a check after a visit), sent by the follow-up cron.

Refused, with what to fix, unless: `at` is an ISO time with its offset, at least
MIN_AHEAD ahead and at most MAX_AHEAD; the conversation's number (Cloud API: WAHA has no
templates) has that template synced, APPROVED, with as many placeholders as `params`; the
customer has not opted out (PARAR); the conversation has fewer than its cap of follow-ups
scheduled. Stored in one transaction under the conversation's row lock (the cap holds
against two turns: the conversation's FollowupBook does it, turn.tools.followup_book). The
cron skips it later if the customer wrote since, opted out, or a
person holds the conversation; a person may cancel it from the console.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from channels.templates import MAX_PARAM_CHARS
from turn.tools.base import Tool, ToolContext, ToolResult
from turn.tools.followup_book import FollowupRefused, FollowupRequest

MIN_AHEAD = timedelta(minutes=1)
MAX_AHEAD = timedelta(days=30)
MAX_PARAMS = 20


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    at: str = Field(
        description="Quando enviar: data e hora ISO 8601 com fuso, ex. 2026-12-10T09:00:00-03:00.",
        max_length=64,
    )
    template: str = Field(description="Nome do template aprovado do WhatsApp.", max_length=512)
    params: list[Annotated[str, Field(max_length=MAX_PARAM_CHARS)]] = Field(
        default_factory=list,
        description="Valores das variáveis do corpo do template, em ordem ({{1}}, {{2}}, ...).",
        max_length=MAX_PARAMS,
    )
    language: str | None = Field(
        default=None, description="Idioma do template (padrão pt_BR).", max_length=16
    )


def _when(text: str, now: datetime) -> datetime | ToolResult:
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        return ToolResult.error(
            "followup_time_invalid",
            f"`at` deve ser data e hora ISO 8601 com fuso (ex. 2026-12-10T09:00:00-03:00); "
            f"veio {text[:64]!r}.",
        )
    if not now + MIN_AHEAD <= at <= now + MAX_AHEAD:
        return ToolResult.error(
            "followup_time_invalid",
            f"`at` deve estar entre 1 minuto e 30 dias a partir de agora ({now.isoformat()}).",
        )
    return at


async def run(context: ToolContext, args: Args) -> ToolResult:
    if context.conversation_id is None or context.followups is None:
        return ToolResult.error("followup_no_conversation", "Não há conversa nesta execução.")
    at = _when(args.at, context.clock())
    if isinstance(at, ToolResult):
        return at
    answer = await context.followups.schedule(
        FollowupRequest(
            organization_id=context.organization_id,
            conversation_id=context.conversation_id,
            at=at,
            template=args.template,
            params=tuple(args.params),
            language=args.language,
            max_followups=context.max_followups,
        )
    )
    if isinstance(answer, FollowupRefused):
        return ToolResult.error(answer.code, answer.message)
    return ToolResult(answer)


TOOL = Tool(
    name="schedule_followup",
    description=(
        "Agenda uma mensagem de template aprovado do WhatsApp para mais tarde (ex. lembrete "
        "na véspera de um horário marcado). Só use quando a skill pedir ou o cliente aceitar."
    ),
    args=Args,
    run=run,
)
