"""`schedule_followup`: the model schedules a WhatsApp template to send the customer later
(a reminder the day before, a check after a visit), sent by the follow-up cron.

Refused, with what to fix, unless: `at` is an ISO time with its offset, at least
MIN_AHEAD ahead and at most MAX_AHEAD; the conversation's number (Cloud API: WAHA has no
templates) has that template synced, APPROVED, with as many placeholders as `params`; the
customer has not opted out (PARAR); the conversation has fewer than its cap of follow-ups
scheduled. Stored in one transaction under the conversation's row lock (the cap holds
against two turns). The cron skips it later if the customer wrote since, opted out, or a
person holds the conversation; a person may cancel it from the console.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

import asyncpg
from pydantic import BaseModel, ConfigDict, Field

from channels.template_queries import fetch_conversation_channel, fetch_template, list_templates
from channels.templates import APPROVED, MAX_PARAM_CHARS, filled_body
from core.tenancy import org_connection
from turn.followup_queries import (
    NewFollowup,
    count_scheduled,
    insert_followup,
    lock_conversation_contact,
)
from turn.opt_out_queries import fetch_opted_out
from turn.tools.base import Tool, ToolContext, ToolResult

MIN_AHEAD = timedelta(minutes=1)
MAX_AHEAD = timedelta(days=30)
MAX_PARAMS = 20
# Approved template names listed back to a model that named an unknown one.
MAX_NAMES_SHOWN = 10


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
    if context.conversation_id is None:
        return ToolResult.error("followup_no_conversation", "Não há conversa nesta execução.")
    at = _when(args.at, context.clock())
    if isinstance(at, ToolResult):
        return at
    async with org_connection(context.pool, context.organization_id) as conn, conn.transaction():
        return await _schedule(conn, context, args, at)


async def _schedule(
    conn: asyncpg.Connection, context: ToolContext, args: Args, at: datetime
) -> ToolResult:
    assert context.conversation_id is not None
    conversation = context.conversation_id
    contact = await lock_conversation_contact(conn, conversation)
    if contact is None:
        return ToolResult.error("followup_no_conversation", "A conversa não existe.")
    if await fetch_opted_out(conn, context.organization_id, contact):
        return ToolResult.error(
            "contact_opted_out",
            "O cliente pediu para não receber mensagens automáticas (PARAR): não agende nada.",
        )
    channel = await fetch_conversation_channel(conn, conversation)
    if channel is None or channel.kind != "cloud_api":
        return ToolResult.error(
            "templates_unsupported",
            "Este número não envia templates do WhatsApp (só a Cloud API os tem): não agende.",
        )
    template = await fetch_template(conn, channel.id, args.template, args.language)
    if template is None or not template.approved:
        approved = await list_templates(conn, channel.id, status=APPROVED, limit=MAX_NAMES_SHOWN)
        names = ", ".join(t.name for t in approved) or "nenhum"
        state = "não existe" if template is None else f"está {template.status}"
        return ToolResult.error(
            "template_not_found" if template is None else "template_not_approved",
            f"O template {args.template!r} {state}. Aprovados: {names}.",
        )
    if len(args.params) != len(template.placeholders):
        return ToolResult.error(
            "template_params_mismatch",
            f"O template {template.name!r} tem {len(template.placeholders)} variáveis; "
            f"vieram {len(args.params)} params. Corpo: {template.body[:300]!r}",
        )
    if await count_scheduled(conn, conversation) >= context.max_followups:
        return ToolResult.error(
            "followup_cap_reached",
            f"Esta conversa já tem {context.max_followups} mensagens agendadas: não agende mais.",
        )
    await insert_followup(
        conn,
        NewFollowup(
            context.organization_id,
            conversation,
            at,
            template.name,
            template.language,
            args.params,
            template.placeholders,
            filled_body(template, args.params),
            channel.id,
        ),
    )
    return ToolResult(
        f"Agendado: o template {template.name!r} vai em {at.isoformat()}, a menos que o "
        "cliente escreva antes, peça para parar ou uma pessoa assuma a conversa."
    )


TOOL = Tool(
    name="schedule_followup",
    description=(
        "Agenda uma mensagem de template aprovado do WhatsApp para mais tarde (ex. lembrete "
        "na véspera de um horário marcado). Só use quando a skill pedir ou o cliente aceitar."
    ),
    args=Args,
    run=run,
)
