"""Scheduling a follow-up in a conversation: the checks that need its rows (opt-out, the
number's approved template, the per-conversation cap) and the insert, in one transaction
under the conversation's row lock, so the cap holds against two turns. The agent turn's
`schedule_followup` tool reaches it through turn.tools.followup_book.FollowupBook."""

from __future__ import annotations

from typing import Any

import asyncpg

from channels.template_queries import fetch_conversation_channel, fetch_template, list_templates
from channels.templates import APPROVED, filled_body
from conversation.followup_queries import (
    NewFollowup,
    count_scheduled,
    insert_followup,
    lock_conversation_contact,
)
from conversation.opt_out_queries import fetch_opted_out
from core.tenancy import org_connection
from turn.tools.followup_book import FollowupRefused, FollowupRequest

# Approved template names listed back to a model that named an unknown one.
MAX_NAMES_SHOWN = 10


class ConversationFollowups:
    """The FollowupBook of a turn's conversation, on the worker's pool."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def schedule(self, request: FollowupRequest) -> FollowupRefused | str:
        async with org_connection(self._pool, request.organization_id) as conn, conn.transaction():
            return await _schedule(conn, request)


async def _schedule(conn: asyncpg.Connection, request: FollowupRequest) -> FollowupRefused | str:
    conversation = request.conversation_id
    contact = await lock_conversation_contact(conn, conversation)
    if contact is None:
        return FollowupRefused("followup_no_conversation", "A conversa não existe.")
    if await fetch_opted_out(conn, request.organization_id, contact):
        return FollowupRefused(
            "contact_opted_out",
            "O cliente pediu para não receber mensagens automáticas (PARAR): não agende nada.",
        )
    channel = await fetch_conversation_channel(conn, conversation)
    if channel is None or channel.kind != "cloud_api":
        return FollowupRefused(
            "templates_unsupported",
            "Este número não envia templates do WhatsApp (só a Cloud API os tem): não agende.",
        )
    template = await fetch_template(conn, channel.id, request.template, request.language)
    if template is None or not template.approved:
        approved = await list_templates(conn, channel.id, status=APPROVED, limit=MAX_NAMES_SHOWN)
        names = ", ".join(t.name for t in approved) or "nenhum"
        state = "não existe" if template is None else f"está {template.status}"
        return FollowupRefused(
            "template_not_found" if template is None else "template_not_approved",
            f"O template {request.template!r} {state}. Aprovados: {names}.",
        )
    if len(request.params) != len(template.placeholders):
        return FollowupRefused(
            "template_params_mismatch",
            f"O template {template.name!r} tem {len(template.placeholders)} variáveis; "
            f"vieram {len(request.params)} params. Corpo: {template.body[:300]!r}",
        )
    if await count_scheduled(conn, conversation) >= request.max_followups:
        return FollowupRefused(
            "followup_cap_reached",
            f"Esta conversa já tem {request.max_followups} mensagens agendadas: não agende mais.",
        )
    await insert_followup(
        conn,
        NewFollowup(
            request.organization_id,
            conversation,
            request.at,
            template.name,
            template.language,
            request.params,
            template.placeholders,
            filled_body(template, request.params),
            channel.id,
        ),
    )
    return (
        f"Agendado: o template {template.name!r} vai em {request.at.isoformat()}, a menos que o "
        "cliente escreva antes, peça para parar ou uma pessoa assuma a conversa."
    )
