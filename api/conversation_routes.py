"""Routes of a person in the conversation: the list and one conversation with its mode, a
takeover, a release back to the agent, and a person's reply.

A person's reply is written like the agent's (an outbound message and its outbox row, in one
transaction with the takeover it implies) and delivered by a job enqueued at once: the
worker that takes the conversation's lease hands it to the channel once (claimed before the
send), after every reply committed before it. A lost job delays it, never loses it: the
conversation sweep wakes conversations with a reply never handed to its channel.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

import structlog
from aiohttp import web
from pydantic import BaseModel, ConfigDict
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from api.bodies import read_json
from api.conversation_metrics import CONVERSATION_METRICS
from api.conversation_queries import (
    ConversationView,
    ModeLock,
    fetch_conversation_view,
    fetch_last_inbound,
    insert_person_reply,
    list_conversation_views,
    lock_conversation,
    update_released,
    update_taken_over,
)
from api.errors import ApiError, conflict, invalid, not_found
from api.keys import Role
from api.pagination import page_of, parse_limit, read_cursor
from api.routing import Principal, Reply, deps_of, org_db
from channels.dispatch import CUSTOMER_SERVICE_WINDOW, outside_window
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload
from skills.audit_queries import AuditEntry, insert_audit

log = structlog.get_logger(__name__)

MODES = ("agent", "waiting", "human")
MAX_REPLY_CHARS = 4096  # WhatsApp's text message limit


def _stamp(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def conversation_json(view: ConversationView) -> dict[str, Any]:
    last = None
    if view.last_message_at is not None:
        last = {
            "body": view.last_body,
            "author": view.last_author,
            "at": _stamp(view.last_message_at),
        }
    return {
        "id": str(view.id),
        "channel": view.channel,
        "contact_id": view.contact_id,
        "created_at": view.created_at.isoformat(),
        "last_message_at": _stamp(view.last_message_at),
        "mode": view.mode,
        "held_by": view.held_by,
        "mode_since": _stamp(view.mode_since),
        "mode_reason": view.mode_reason,
        "mode_cause": view.mode_cause,
        "last_message": last,
        "unanswered": view.unanswered,
    }


def _keyset(values: list[Any]) -> tuple[datetime, uuid.UUID]:
    return datetime.fromisoformat(values[0]), uuid.UUID(values[1])


def _mode_filter(request: web.Request) -> str | None:
    mode = request.query.get("mode")
    if mode is not None and mode not in MODES:
        raise ApiError(400, "invalid_mode", "`mode` deve ser agent, waiting ou human.")
    return mode


async def list_conversations_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    mode = _mode_filter(request)
    kind = "waiting" if mode == "waiting" else "conversations"
    after = read_cursor(kind, request.query, _keyset)
    async with org_db(request, principal) as conn:
        rows = await list_conversation_views(
            conn, principal.organization_id, mode=mode, after=after, limit=limit + 1
        )

    def keyset(view: ConversationView) -> list[str]:
        at = view.mode_since if mode == "waiting" else view.created_at
        return [_stamp(at) or "", str(view.id)]

    page = page_of(rows, limit, kind, keyset)
    return {"items": [conversation_json(r) for r in page.items], "next": page.next}


def conversation_id_of(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise _missing() from None


def _missing() -> ApiError:
    return not_found("conversation_not_found", "A conversa não existe nesta organização.")


async def show_conversation_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = conversation_id_of(request)
    async with org_db(request, principal) as conn:
        view = await fetch_conversation_view(conn, principal.organization_id, conversation_id)
    if view is None:
        raise _missing()
    return conversation_json(view)


class TakeoverBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    force: bool = False  # an admin takes a conversation another person holds


class ReleaseBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # True: the agent answers the customer messages no person answered; False: context only.
    answer_pending: bool = False


class ReplyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def _refuse_other_holder(locked: ModeLock, principal: Principal, force: bool) -> None:
    held = locked.mode == "human" and locked.held_by not in (None, principal.prefix)
    if held and not (force and principal.role is Role.ADMIN):
        raise conflict(
            "held_by_other",
            f"A conversa está com {locked.held_by}; peça que ela devolva, ou uma chave admin "
            'pode assumir com {"force": true}.',
        )


def _audit(
    principal: Principal, action: str, conversation_id: uuid.UUID, before: str, **detail: Any
) -> AuditEntry:
    return AuditEntry(
        principal.organization_id,
        principal.prefix,
        action,
        detail={
            "conversation_id": str(conversation_id),
            "before_mode": before,
            **detail,
        },
    )


async def takeover_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = conversation_id_of(request)
    body = await read_json(request, TakeoverBody)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        locked = await lock_conversation(conn, org, conversation_id)
        if locked is None:
            raise _missing()
        _refuse_other_holder(locked, principal, body.force)
        await update_taken_over(conn, org, conversation_id, principal.prefix, replied=False)
        entry = _audit(
            principal,
            "conversation.takeover",
            conversation_id,
            locked.mode,
            after_mode="human",
            before_held_by=locked.held_by,
            forced=body.force and locked.held_by not in (None, principal.prefix),
        )
        await insert_audit(conn, entry)
        view = await fetch_conversation_view(conn, org, conversation_id)
    if locked.mode == "agent":
        request.app[CONVERSATION_METRICS].handed_off()
    assert view is not None
    return conversation_json(view)


async def release_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = conversation_id_of(request)
    body = await read_json(request, ReleaseBody)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        locked = await lock_conversation(conn, org, conversation_id)
        if locked is None:
            raise _missing()
        pending = await update_released(
            conn, org, conversation_id, answer_pending=body.answer_pending
        )
        entry = _audit(
            principal,
            "conversation.release",
            conversation_id,
            locked.mode,
            after_mode="agent",
            answer_pending=body.answer_pending,
            pending=pending,
        )
        await insert_audit(conn, entry)
        view = await fetch_conversation_view(conn, org, conversation_id)
    if pending:
        await _wake(request, org, conversation_id, f"release:{conversation_id}:{uuid.uuid4()}")
    assert view is not None
    return conversation_json(view)


def _reply_text(body: ReplyBody) -> str:
    text = body.text.strip()
    if not 1 <= len(text) <= MAX_REPLY_CHARS:
        raise invalid(
            "reply_text_invalid",
            f"O texto da resposta deve ter de 1 a {MAX_REPLY_CHARS} caracteres (sem contar "
            f"espaços nas pontas); este tem {len(text)}.",
        )
    return text


async def reply_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = conversation_id_of(request)
    text = _reply_text(await read_json(request, ReplyBody))
    org = principal.organization_id
    now = deps_of(request).clock()
    async with org_db(request, principal) as conn, conn.transaction():
        locked = await lock_conversation(conn, org, conversation_id)
        if locked is None:
            raise _missing()
        _refuse_other_holder(locked, principal, force=False)
        last = await fetch_last_inbound(conn, org, conversation_id)
        if (
            last is not None
            and last.routed
            and outside_window(last.sent_at, now, CUSTOMER_SERVICE_WINDOW)
        ):
            raise conflict(
                "outside_service_window",
                "O cliente escreveu pela última vez há mais de 24 horas: o WhatsApp só deixa "
                "responder com texto livre dentro dessa janela. Espere ele escrever de novo.",
            )
        reply = await insert_person_reply(
            conn,
            org,
            conversation_id,
            channel=locked.channel,
            body=text,
            key_prefix=principal.prefix,
            route_via_id=None if last is None else last.id,
        )
        await update_taken_over(conn, org, conversation_id, principal.prefix, replied=True)
        entry = _audit(
            principal,
            "conversation.reply",
            conversation_id,
            locked.mode,
            after_mode="human",
            message_id=str(reply.message_id),
            chars=len(text),
        )
        await insert_audit(conn, entry)
    await _wake(request, org, conversation_id, f"person:{reply.message_id}")
    metrics = request.app[CONVERSATION_METRICS]
    if locked.mode == "agent":
        metrics.handed_off()
    if locked.person_replied_at is None and locked.handoff_at is not None:
        metrics.first_replied((reply.created_at - locked.handoff_at).total_seconds())
    return person_message_json(reply.message_id, text, reply.created_at, principal.prefix)


def person_message_json(
    message_id: uuid.UUID, text: str, created_at: datetime, prefix: str
) -> dict[str, Any]:
    author: Literal["person"] = "person"
    return {
        "id": str(message_id),
        "direction": "outbound",
        "kind": "text",
        "body": text,
        "author": author,
        "author_key_prefix": prefix,
        "created_at": created_at.isoformat(),
        "delivery": {"status": "pending", "error": None},
    }


async def _wake(
    request: web.Request, organization_id: uuid.UUID, conversation_id: uuid.UUID, job_id: str
) -> None:
    """A job for the conversation's holder: it delivers what is committed, or answers what
    the agent should. If the enqueue fails the rows are committed: the sweep wakes it."""
    payload = ConversationPayload(organization_id=organization_id, conversation_id=conversation_id)
    try:
        await deps_of(request).queue.enqueue_job(
            HANDLE_INBOUND_MESSAGE, payload.model_dump(mode="json"), _job_id=job_id
        )
    except (RedisConnectionError, RedisTimeoutError) as exc:
        log.warning("conversation.wake_failed", job_id=job_id, error=repr(exc)[:200])
