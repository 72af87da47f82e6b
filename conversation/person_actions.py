"""What a person does to a conversation, shared by the API and the CLI: take it over, give it
back to the agent, reply. Each is one transaction on a connection bound to the org, audited
with the actor (an API key's prefix, or `cli`) and the mode before and after.

Every change locks the conversation row first, as the turn's reply commit does
(skillet_commit_turn), so the two are serialized: a takeover either comes after a committed
agent reply or stops it (outcome taken_over). A reply is committed like the agent's (an
outbound message and its outbox row); the caller wakes the conversation so a holder hands it
to the channel once. Refusals are conversation.errors (pt-BR, stable codes), which the API
and the CLI each translate.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from channels.dispatch import CUSTOMER_SERVICE_WINDOW, outside_window
from channels.template_queries import fetch_conversation_channel, fetch_template, list_templates
from channels.templates import APPROVED, Template, filled_body
from conversation.errors import ConversationConflict, ConversationNotFound, ConversationRefused
from conversation.mode import ConversationMode
from conversation.opt_out_queries import fetch_opted_out
from conversation.person_queries import (
    ConversationView,
    LastInbound,
    ModeLock,
    PersonReply,
    fetch_conversation_view,
    fetch_last_inbound,
    insert_person_reply,
    lock_conversation,
    update_released,
    update_taken_over,
)
from conversation.satisfaction_queries import insert_question
from core.audit import AuditEntry, insert_audit
from delivery.outbox_queries import OutboxTemplate

MAX_REPLY_CHARS = 4096  # WhatsApp's text message limit
MAX_OFFERED_TEMPLATES = 50  # approved templates listed in an outside_service_window refusal


@dataclass(frozen=True)
class Actor:
    organization_id: uuid.UUID
    name: str  # held_by and the audit actor: an API key's prefix, or 'cli'
    may_force: bool  # an admin may take a conversation another person holds


@dataclass(frozen=True)
class ModeChange:
    before: ModeLock
    view: ConversationView
    pending: int = 0  # customer messages the agent will answer (a release with answer_pending)
    # A release asked the customer how it went (satisfaction): a holder must deliver it.
    asked: bool = False


def missing() -> ConversationNotFound:
    return ConversationNotFound()


def reply_text(text: str) -> str:
    """The reply's text, trimmed; 422 unless 1 to MAX_REPLY_CHARS characters."""
    trimmed = text.strip()
    if not 1 <= len(trimmed) <= MAX_REPLY_CHARS:
        raise ConversationRefused(
            "reply_text_invalid",
            f"O texto da resposta deve ter de 1 a {MAX_REPLY_CHARS} caracteres (sem contar "
            f"espaços nas pontas); este tem {len(trimmed)}.",
        )
    return trimmed


async def _locked(conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID) -> ModeLock:
    locked = await lock_conversation(conn, actor.organization_id, conversation_id)
    if locked is None:
        raise missing()
    return locked


def _holder_words(held_by: str | None) -> str:
    """Who holds it, in a refusal's words (a person by their id would read as a code)."""
    if held_by == "phone":
        return "o celular da empresa"
    if held_by is not None and held_by.startswith("person:"):
        return "outra pessoa da equipe"
    return str(held_by)


def _refuse_other_holder(locked: ModeLock, actor: Actor, force: bool) -> None:
    held = locked.mode == ConversationMode.HUMAN and locked.held_by not in (None, actor.name)
    if held and not (force and actor.may_force):
        raise ConversationConflict(
            "held_by_other",
            f"A conversa está com {_holder_words(locked.held_by)}; peça que ela devolva, ou "
            'uma chave admin pode assumir com {"force": true}.',
        )


def _refuse_release_by_other(locked: ModeLock, actor: Actor) -> None:
    """Only its holder hands a conversation back, or an admin (the CLI counts as one): else an
    editor could release what another person holds and take it, around the admin-only force.
    The owner's phone holds it until an admin releases it or the idle return does."""
    held = locked.mode == ConversationMode.HUMAN and locked.held_by not in (None, actor.name)
    if held and not actor.may_force:
        holder = _holder_words(locked.held_by)
        raise ConversationConflict(
            "held_by_other",
            f"A conversa está com {holder}: só quem a assumiu, ou uma chave admin, pode "
            "devolvê-la ao agente.",
        )


async def _audit(
    conn: asyncpg.Connection,
    actor: Actor,
    action: str,
    conversation_id: uuid.UUID,
    before: ModeLock,
    after_mode: str,
    **detail: Any,
) -> None:
    entry = AuditEntry(
        actor.organization_id,
        actor.name,
        action,
        detail={
            "conversation_id": str(conversation_id),
            "before_mode": before.mode,
            "before_held_by": before.held_by,
            "after_mode": after_mode,
            **detail,
        },
    )
    await insert_audit(conn, entry)


async def _view(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID
) -> ConversationView:
    view = await fetch_conversation_view(conn, actor.organization_id, conversation_id)
    assert view is not None  # locked in this transaction
    return view


async def take_over(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID, *, force: bool
) -> ModeChange:
    async with conn.transaction():
        locked = await _locked(conn, actor, conversation_id)
        _refuse_other_holder(locked, actor, force)
        org = actor.organization_id
        await update_taken_over(conn, org, conversation_id, actor.name, replied=False)
        forced = force and locked.held_by not in (None, actor.name)
        await _audit(
            conn,
            actor,
            "conversation.takeover",
            conversation_id,
            locked,
            ConversationMode.HUMAN,
            forced=forced,
        )
        return ModeChange(locked, await _view(conn, actor, conversation_id))


async def transfer(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID, *, to: str
) -> ModeChange:
    """Its holder (or an admin) passes the conversation to another person, `to` (their
    held_by), checked by the caller as one who may hold it. The receiver holds it at once."""
    async with conn.transaction():
        locked = await _locked(conn, actor, conversation_id)
        holds = locked.mode == ConversationMode.HUMAN and locked.held_by == actor.name
        if not (holds or actor.may_force):
            raise ConversationConflict(
                "held_by_other",
                "Só quem está com a conversa, ou uma pessoa administradora, pode passá-la a "
                "outra pessoa.",
            )
        await update_taken_over(conn, actor.organization_id, conversation_id, to, replied=False)
        await _audit(
            conn,
            actor,
            "conversation.transfer",
            conversation_id,
            locked,
            ConversationMode.HUMAN,
            to=to,
        )
        return ModeChange(locked, await _view(conn, actor, conversation_id))


async def release(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID, *, answer_pending: bool
) -> ModeChange:
    async with conn.transaction():
        locked = await _locked(conn, actor, conversation_id)
        _refuse_release_by_other(locked, actor)
        pending = await update_released(
            conn, actor.organization_id, conversation_id, answer_pending=answer_pending
        )
        asked = await _ask_satisfaction(conn, actor, conversation_id, locked)
        await _audit(
            conn,
            actor,
            "conversation.release",
            conversation_id,
            locked,
            ConversationMode.AGENT,
            answer_pending=answer_pending,
            pending=pending,
            satisfaction_asked=asked,
        )
        view = await _view(conn, actor, conversation_id)
        return ModeChange(locked, view, pending, asked=asked)


async def _ask_satisfaction(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID, locked: ModeLock
) -> bool:
    """The satisfaction question, when a person who answered it hands it back (not the idle
    return, not a transfer: those are other paths) and every rule of insert_question allows."""
    if locked.mode != ConversationMode.HUMAN or locked.person_replied_at is None:
        return False
    asked = await insert_question(
        conn,
        actor.organization_id,
        conversation_id,
        channel=locked.channel,
        contact_id=locked.contact_id,
        held_by=locked.held_by or actor.name,
    )
    return asked is not None


async def _lock_for_reply(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID
) -> tuple[ModeLock, LastInbound | None]:
    """A person's reply of either kind starts so: the row locked, another holder refused,
    and the customer's latest message (what the reply answers and is routed by)."""
    locked = await _locked(conn, actor, conversation_id)
    _refuse_other_holder(locked, actor, force=False)
    last = await fetch_last_inbound(conn, actor.organization_id, conversation_id)
    return locked, last


async def _commit_reply(
    conn: asyncpg.Connection,
    actor: Actor,
    conversation_id: uuid.UUID,
    reply_to: tuple[ModeLock, LastInbound | None],
    body: str,
    *,
    outbox_template: OutboxTemplate | None = None,
    **detail: Any,
) -> PersonReply:
    """...and ends so: the message and its outbox row, the takeover, the audit entry."""
    org = actor.organization_id
    locked, last = reply_to
    sent = await insert_person_reply(
        conn,
        org,
        conversation_id,
        channel=locked.channel,
        body=body,
        key_prefix=actor.name,
        route_via_id=None if last is None else last.id,
        template=outbox_template,
    )
    await update_taken_over(conn, org, conversation_id, actor.name, replied=True)
    await _audit(
        conn,
        actor,
        "conversation.reply",
        conversation_id,
        locked,
        ConversationMode.HUMAN,
        message_id=str(sent.message_id),
        **detail,
    )
    return sent


async def reply(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID, text: str, now: datetime
) -> tuple[ModeLock, PersonReply]:
    """A person's reply (already trimmed by reply_text), taking the conversation over."""
    async with conn.transaction():
        reply_to = await _lock_for_reply(conn, actor, conversation_id)
        last = reply_to[1]
        if (
            last is not None
            and last.routed
            and outside_window(last.sent_at, now, CUSTOMER_SERVICE_WINDOW)
        ):
            offered = await _approved_templates(conn, conversation_id)
            raise ConversationConflict(
                "outside_service_window",
                "O cliente escreveu pela última vez há mais de 24 horas: o WhatsApp só deixa "
                "responder com texto livre dentro dessa janela. Envie um dos templates "
                "aprovados (`templates`), ou espere ele escrever de novo.",
                {"templates": [t.as_json() for t in offered]},
            )
        sent = await _commit_reply(conn, actor, conversation_id, reply_to, text, chars=len(text))
    return reply_to[0], sent


async def _approved_templates(
    conn: asyncpg.Connection, conversation_id: uuid.UUID
) -> list[Template]:
    channel = await fetch_conversation_channel(conn, conversation_id)
    if channel is None or channel.kind != "cloud_api":
        return []
    return await list_templates(conn, channel.id, status=APPROVED, limit=MAX_OFFERED_TEMPLATES)


@dataclass(frozen=True)
class TemplateCall:
    name: str
    language: str | None  # None: pt_BR if the number has it, else its other language
    params: tuple[str, ...]


def _count(n: int) -> str:
    return "nenhuma variável" if n == 0 else f"{n} variável" if n == 1 else f"{n} variáveis"


def _sent(n: int) -> str:
    return (
        "nenhuma foi enviada" if n == 0 else f"{n} foi enviada" if n == 1 else f"{n} foram enviadas"
    )


async def _template_to_send(
    conn: asyncpg.Connection,
    locked: ModeLock,
    org: uuid.UUID,
    conversation_id: uuid.UUID,
    call: TemplateCall,
) -> Template:
    """The number's synced template `call` names, refused unless it may be sent now."""
    channel = await fetch_conversation_channel(conn, conversation_id)
    if channel is not None and channel.kind != "cloud_api":
        raise ConversationRefused(
            "templates_unsupported",
            "Este número é WAHA, que não tem templates do WhatsApp (só a Cloud API da Meta "
            "os tem); responda com texto enquanto a janela de 24 horas estiver aberta.",
        )
    template = None
    if channel is not None:
        template = await fetch_template(conn, channel.id, call.name, call.language)
    if template is None:
        raise ConversationRefused(
            "template_not_found",
            f"O número desta conversa não tem o template {call.name!r}"
            + (f" em {call.language}" if call.language else "")
            + ": confira o nome ou rode `skillet channels templates sync`.",
        )
    if not template.approved:
        raise ConversationRefused(
            "template_not_approved",
            f"O template {template.name!r} [{template.language}] está {template.status} na "
            "Meta: só templates APPROVED podem ser enviados.",
        )
    if len(call.params) != len(template.placeholders):
        raise ConversationRefused(
            "template_params_mismatch",
            f"O template {template.name!r} pede {_count(len(template.placeholders))} e "
            f"{_sent(len(call.params))}: uma por linha, na ordem do template.",
        )
    if await fetch_opted_out(conn, org, locked.contact_id):
        raise ConversationConflict(
            "contact_opted_out",
            "O cliente pediu para não receber mais mensagens automáticas (PARAR): nenhum "
            "template é enviado a ele. Ele pode voltar mandando VOLTAR.",
        )
    return template


async def reply_template(
    conn: asyncpg.Connection, actor: Actor, conversation_id: uuid.UUID, call: TemplateCall
) -> tuple[ModeLock, PersonReply, str]:
    """A person's template message (any time: templates are what WhatsApp takes outside the
    24-hour window), taking the conversation over like any reply; its filled body."""
    org = actor.organization_id
    async with conn.transaction():
        reply_to = await _lock_for_reply(conn, actor, conversation_id)
        template = await _template_to_send(conn, reply_to[0], org, conversation_id, call)
        body = filled_body(template, call.params)
        sent = await _commit_reply(
            conn,
            actor,
            conversation_id,
            reply_to,
            body,
            outbox_template=OutboxTemplate(
                template.name, template.language, call.params, template.placeholders
            ),
            template=template.name,
            language=template.language,
        )
    return reply_to[0], sent, body


def waited_for_first_reply_s(before: ModeLock, sent: PersonReply) -> float | None:
    """Seconds from the handoff to this reply when it is a person's first since then."""
    if before.person_replied_at is not None or before.handoff_at is None:
        return None
    return (sent.created_at - before.handoff_at).total_seconds()


def person_message_json(
    message_id: uuid.UUID, text: str, created_at: datetime, prefix: str, *, kind: str = "text"
) -> dict[str, Any]:
    return {
        "id": str(message_id),
        "direction": "outbound",
        "kind": kind,
        "body": text,
        "author": "person",
        "author_key_prefix": prefix,
        "created_at": created_at.isoformat(),
        "delivery": {"status": "pending", "error": None},
    }


def wake_job_id(kind: str, key: uuid.UUID) -> str:
    """The job id of a conversation's wakeup after a person's action (unique per action)."""
    return f"{kind}:{key}" if kind == "person" else f"{kind}:{key}:{uuid.uuid4()}"
