"""Routes of what happened in the org: conversations and their messages, curator reports,
the audit log, dead letters and their requeue."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from api.audit_masking import masked_detail
from api.dead_letter_queries import (
    list_dead_letters,
    lock_dead_letter,
    update_dead_letter_requeued,
)
from api.delivery_codes import delivery_json
from api.errors import conflict, not_found
from api.history_queries import (
    MessageRow,
    fetch_conversation_exists,
    list_curator_runs,
    list_messages,
)
from api.keys import Role
from api.pagination import id_keyset, page_of, parse_limit, read_cursor, time_id_keyset
from api.people_queries import fetch_names, person_of_actor
from api.routing import Principal, Reply, deps_of, org_db
from core.audit import AuditEntry, AuditRow, insert_audit, list_audit
from inbox.message import InboundMessage
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload, inbound_job_id
from jobs.queue import enqueue_inbound


def _stamp(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _str(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def _path_uuid(request: web.Request, key: str, code: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info[key])
    except ValueError:
        raise not_found(code, f"{what} não existe nesta organização.") from None


def _message_json(row: MessageRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "direction": row.direction,
        "kind": row.kind,
        "body": row.body,
        "external_id": row.external_id,
        "sent_at": _stamp(row.sent_at),
        "received_at": _stamp(row.received_at),
        "created_at": row.created_at.isoformat(),
        "reply_to_id": _str(row.reply_to_id),
        "answered_by": _str(row.answered_by),
        "delivery": delivery_json(row.delivery_status, row.delivery_error),
        "reply_to": None
        if row.quote_external_id is None
        else {
            "message_id": _str(row.quote_id),
            "external_id": row.quote_external_id,
            "text": row.quote_text,
        },
        "reactions": _reactions(row.reactions),
        **_author_json(row),
    }


def _reactions(raw: str | None) -> list[dict[str, Any]]:
    """[{emoji, from, at}], `at` as ISO 8601 like every other time of the API."""
    if not raw:
        return []
    return [
        {"emoji": r["emoji"], "from": r["from"], "at": datetime.fromisoformat(r["at"]).isoformat()}
        for r in json.loads(raw)
    ]


def _author_json(row: MessageRow) -> dict[str, Any]:
    """Who wrote it: the customer, or for an outbound message exactly one of agent, person
    (with its key's prefix) or phone; an agent reply lists the skills its turn used."""
    if row.direction == "inbound":
        if row.media_type is None:
            return {"author": "customer"}
        return {"author": "customer", "media": {"type": row.media_type, "stored": row.media_stored}}
    author = row.author or "agent"
    if author == "person":
        person = None
        if row.author_person_id is not None:
            person = {"id": str(row.author_person_id), "name": row.author_person_name}
        return {
            "author": author,
            "author_key_prefix": row.author_key_prefix,
            "author_person": person,
        }
    if author == "agent":
        agent: dict[str, Any] = {
            "author": author,
            "skills": json.loads(row.skills) if row.skills else [],
        }
        if row.files:  # the files sent after its text, each with its own delivery status
            agent["files"] = json.loads(row.files)
        if row.choices:  # the choices sent last (send_choices), with their delivery status
            agent["choices"] = json.loads(row.choices)
        return agent
    return {"author": author}


async def list_messages_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _path_uuid(request, "id", "conversation_not_found", "A conversa")
    limit = parse_limit(request.query)
    after = read_cursor("messages", request.query, time_id_keyset)
    org = principal.organization_id
    async with org_db(request, principal) as conn:
        if not await fetch_conversation_exists(conn, org, conversation_id):
            raise not_found("conversation_not_found", "A conversa não existe nesta organização.")
        rows = await list_messages(conn, org, conversation_id, after=after, limit=limit + 1)
    page = page_of(rows, limit, "messages", lambda r: [r.created_at.isoformat(), str(r.id)])
    return {"items": [_message_json(r) for r in page.items], "next": page.next}


async def list_curator_runs_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    before = read_cursor("curator_runs", request.query, id_keyset)
    async with org_db(request, principal) as conn:
        rows = await list_curator_runs(
            conn, principal.organization_id, before_id=before, limit=limit + 1
        )
    page = page_of(rows, limit, "curator_runs", lambda r: [r.id])
    items = [
        {
            "id": r.id,
            "trigger": r.trigger,
            "ran_at": r.ran_at.isoformat(),
            "replayed": r.replayed,
            "transitioned": r.transitioned,
            "skipped": r.skipped,
            "consolidation": r.consolidation,  # null: it did not run for this org
        }
        for r in page.items
    ]
    return {"items": items, "next": page.next}


def _audit_json(row: AuditRow, *, admin: bool) -> dict[str, Any]:
    """An audit row; for anyone but an admin, the URLs in its detail cut to their origin
    (api.audit_masking)."""
    return {
        "id": row.id,
        "actor": row.entry.actor,
        "action": row.entry.action,
        "outcome": row.entry.outcome,
        "skill": row.entry.skill_name,
        "before_version_id": _str(row.entry.before_version_id),
        "after_version_id": _str(row.entry.after_version_id),
        "detail": row.entry.detail if admin else masked_detail(row.entry.detail),
        "created_at": row.created_at.isoformat(),
    }


async def list_audit_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    before = read_cursor("audit", request.query, id_keyset)
    async with org_db(request, principal) as conn:
        rows = await list_audit(conn, principal.organization_id, limit=limit + 1, before_id=before)
        page = page_of(rows, limit, "audit", lambda r: [r.id])
        people = {p for r in page.items if (p := person_of_actor(r.entry.actor)) is not None}
        names = await fetch_names(conn, principal.organization_id, sorted(people))
    admin = principal.role is Role.ADMIN

    def named(row: AuditRow) -> dict[str, Any]:
        person = person_of_actor(row.entry.actor)
        actor_person = None
        if person is not None and person in names:
            actor_person = {"id": str(person), "name": names[person]}
        return {**_audit_json(row, admin=admin), "actor_person": actor_person}

    return {"items": [named(r) for r in page.items], "next": page.next}


async def list_dead_letters_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    before = read_cursor("dead_letters", request.query, id_keyset)
    async with org_db(request, principal) as conn:
        rows = await list_dead_letters(
            conn, principal.organization_id, before_id=before, limit=limit + 1
        )
    page = page_of(rows, limit, "dead_letters", lambda r: [r.id])
    return {"items": [r.to_json() for r in page.items], "next": page.next}


def _dead_letter_id(request: web.Request) -> int:
    text = request.match_info["id"]
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        raise not_found("dead_letter_not_found", "Essa falha não existe nesta organização.")
    return int(text)


async def requeue_dead_letter(request: web.Request, principal: Principal) -> Reply:
    """Run the failed job again under a job id of its own (arq keeps the first one's result
    under the message's id for a while, and would refuse it as a duplicate)."""
    dead_letter_id = _dead_letter_id(request)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        found = await lock_dead_letter(conn, org, dead_letter_id)
        if found is None:
            raise not_found("dead_letter_not_found", "Essa falha não existe nesta organização.")
        letter, raw = found
        if letter.requeued_at is not None:
            raise conflict(
                "dead_letter_already_requeued",
                f"Essa falha já foi reenfileirada em {letter.requeued_at:%Y-%m-%d %H:%M} UTC; "
                "se falhar de novo, aparece como uma falha nova.",
            )
        job_id = await _requeue(request, raw, org, letter.id, letter.job_id)
        stamp = await update_dead_letter_requeued(conn, org, letter.id)
        await insert_audit(
            conn,
            AuditEntry(
                org,
                principal.prefix,
                "dead_letter.requeue",
                detail={"dead_letter_id": letter.id, "job_id": job_id},
            ),
        )
    return {"id": letter.id, "job_id": job_id, "requeued_at": stamp.isoformat()}


async def _requeue(
    request: web.Request, raw: Any, org: uuid.UUID, letter_id: int, first_job_id: str
) -> str:
    """Enqueue the failed job again: a conversation's wakeup as it was (ids only), or a
    message of the previous release's shape stored first."""
    deps = deps_of(request)
    wakeup = _wakeup(raw, org)
    if wakeup is not None:
        job_id = f"{first_job_id}:requeue:{letter_id}"
        await deps.queue.enqueue_job(
            HANDLE_INBOUND_MESSAGE, wakeup.model_dump(mode="json"), _job_id=job_id
        )
        return job_id
    payload = _payload(raw, org)
    job_id = f"{inbound_job_id(org, payload.message_id)}:requeue:{letter_id}"
    await enqueue_inbound(deps.pool, deps.queue, payload, job_id=job_id)
    return job_id


def _wakeup(raw: Any, organization_id: uuid.UUID) -> ConversationPayload | None:
    if not (isinstance(raw, dict) and "conversation_id" in raw):
        return None
    try:
        wakeup = ConversationPayload.model_validate(raw)
    except ValidationError:
        wakeup = None
    if wakeup is None or wakeup.organization_id != organization_id:
        raise conflict(
            "dead_letter_not_requeueable",
            "O trabalho dessa falha não é uma mensagem válida desta organização; "
            "reenfileirar não mudaria o resultado.",
        )
    return wakeup


def _payload(raw: Any, organization_id: uuid.UUID) -> InboundMessage:
    try:
        payload = InboundMessage.model_validate(raw)
    except ValidationError:
        payload = None
    if payload is None or payload.organization_id != organization_id:
        raise conflict(
            "dead_letter_not_requeueable",
            "O trabalho dessa falha não é uma mensagem válida desta organização; "
            "reenfileirar não mudaria o resultado.",
        )
    return payload
