"""Routes of a person in the conversation: the list and one conversation with its mode, a
takeover, a release back to the agent, and a person's reply (conversation.person_actions).

A person's reply is committed like the agent's (an outbound message and its outbox row, in
one transaction with the takeover it implies) and delivered by a job enqueued at once: the
worker that takes the conversation's lease hands it to the channel once (claimed before the
send), after every reply committed before it. A lost job delays it, never loses it: the
conversation sweep wakes conversations with a reply never handed to its channel.
"""

from __future__ import annotations

import uuid
from typing import Annotated

import asyncpg
import structlog
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, model_validator
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from api import reply_keys
from api.bodies import read_json
from api.conversation_filters import conversation_filter
from api.conversation_metrics import CONVERSATION_METRICS
from api.errors import ApiError
from api.keys import Role
from api.pagination import page_of, parse_limit, read_cursor, time_id_keyset
from api.people_queries import lock_possible_holder, person_actor
from api.routing import Principal, Reply, deps_of, org_db
from channels.templates import MAX_PARAM_CHARS, MAX_PLACEHOLDERS
from conversation import person_actions as actions
from conversation.mode import ConversationMode
from conversation.person_queries import (
    ConversationView,
    ModeLock,
    PersonReply,
    fetch_conversation_view,
    list_conversation_views,
)
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload

log = structlog.get_logger(__name__)


async def list_conversations_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    where = conversation_filter(request.query, principal)
    mode = where.mode
    kind = "waiting" if mode == ConversationMode.WAITING else "conversations"
    after = read_cursor(kind, request.query, time_id_keyset)
    async with org_db(request, principal) as conn:
        rows = await list_conversation_views(
            conn, principal.organization_id, mode=mode, after=after, limit=limit + 1, where=where
        )

    def keyset(view: ConversationView) -> list[str]:
        at = view.mode_since if mode == ConversationMode.WAITING else view.created_at
        return [at.isoformat() if at is not None else "", str(view.id)]

    page = page_of(rows, limit, kind, keyset)
    return {"items": [r.as_json() for r in page.items], "next": page.next}


def _conversation_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise actions.missing() from None


def _actor(principal: Principal) -> actions.Actor:
    return actions.Actor(principal.organization_id, principal.prefix, principal.role is Role.ADMIN)


async def show_conversation_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    async with org_db(request, principal) as conn:
        view = await fetch_conversation_view(conn, principal.organization_id, conversation_id)
    if view is None:
        raise actions.missing()
    return view.as_json()


class TakeoverBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    force: bool = False  # an admin takes a conversation another person holds


class ReleaseBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # True: the agent answers the customer messages no person answered; False: context only.
    answer_pending: bool = False


class TemplateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=512)
    language: str | None = Field(default=None, min_length=2, max_length=16)
    params: list[Annotated[str, Field(max_length=MAX_PARAM_CHARS)]] = Field(
        default_factory=list, max_length=MAX_PLACEHOLDERS
    )


class ReplyBody(BaseModel):
    """`{"text": ...}` or `{"template": {"name", "language", "params"}}`, one of them."""

    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    template: TemplateBody | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ReplyBody:
        if (self.text is None) == (self.template is None):
            raise ValueError('send either "text" or "template"')
        return self


async def takeover_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    body = await read_json(request, TakeoverBody)
    async with org_db(request, principal) as conn:
        change = await actions.take_over(conn, _actor(principal), conversation_id, force=body.force)
    if change.before.mode == ConversationMode.AGENT:
        request.app[CONVERSATION_METRICS].handed_off()
    return change.view.as_json()


class TransferBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    person_id: uuid.UUID


def _cannot_hold() -> ApiError:
    return ApiError(
        422,
        "person_cannot_hold",
        "Essa pessoa não pode receber a conversa: precisa ser uma pessoa ativa desta "
        "organização com papel edição ou administração.",
    )


async def transfer_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    body = await read_json(request, TransferBody)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        if not await lock_possible_holder(conn, org, body.person_id):
            raise _cannot_hold()
        change = await actions.transfer(
            conn, _actor(principal), conversation_id, to=person_actor(body.person_id)
        )
    return change.view.as_json()


async def release_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    body = await read_json(request, ReleaseBody)
    async with org_db(request, principal) as conn:
        change = await actions.release(
            conn, _actor(principal), conversation_id, answer_pending=body.answer_pending
        )
    if change.pending or change.asked:
        await _wake(
            request, principal, conversation_id, actions.wake_job_id("release", conversation_id)
        )
    return change.view.as_json()


async def reply_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    key = reply_keys.idempotency_key(request.headers.get(reply_keys.HEADER))
    body = await read_json(request, ReplyBody)
    async with org_db(request, principal) as conn:
        if key is None:
            before, sent, answer = await _reply(request, principal, conn, conversation_id, body)
        else:
            wanted = reply_keys.ReplyKeyClaim(
                principal.organization_id,
                principal.prefix,
                key,
                reply_keys.request_sha256(conversation_id, body.model_dump_json()),
                conversation_id,
            )
            async with conn.transaction():  # the key and the reply commit together
                first = await reply_keys.claim(conn, wanted)
                if first is not None:
                    return first  # answered already: nothing is sent again
                before, sent, answer = await _reply(request, principal, conn, conversation_id, body)
                await reply_keys.record(conn, wanted, answer, sent.message_id)
    await _wake(request, principal, conversation_id, actions.wake_job_id("person", sent.message_id))
    metrics = request.app[CONVERSATION_METRICS]
    if before.mode == ConversationMode.AGENT:
        metrics.handed_off()
    waited_s = actions.waited_for_first_reply_s(before, sent)
    if waited_s is not None:
        metrics.first_replied(waited_s)
    return answer


async def _reply(
    request: web.Request,
    principal: Principal,
    conn: asyncpg.Connection,
    conversation_id: uuid.UUID,
    body: ReplyBody,
) -> tuple[ModeLock, PersonReply, Reply]:
    """The reply committed (a savepoint inside a caller's transaction), and its answer."""
    kind = "text"
    if body.template is not None:
        call = actions.TemplateCall(
            body.template.name, body.template.language, tuple(body.template.params)
        )
        before, sent, text = await actions.reply_template(
            conn, _actor(principal), conversation_id, call
        )
        kind = "template"
    else:
        text = actions.reply_text(body.text or "")
        now = deps_of(request).clock()
        before, sent = await actions.reply(conn, _actor(principal), conversation_id, text, now)
    answer = actions.person_message_json(
        sent.message_id, text, sent.created_at, principal.prefix, kind=kind
    )
    return before, sent, answer


async def _wake(
    request: web.Request, principal: Principal, conversation_id: uuid.UUID, job_id: str
) -> None:
    """A job for the conversation's holder: it delivers what is committed, or answers what
    the agent should. If the enqueue fails the rows are committed: the sweep wakes it."""
    payload = ConversationPayload(
        organization_id=principal.organization_id, conversation_id=conversation_id
    )
    try:
        await deps_of(request).queue.enqueue_job(
            HANDLE_INBOUND_MESSAGE, payload.model_dump(mode="json"), _job_id=job_id
        )
    except (RedisConnectionError, RedisTimeoutError) as exc:
        log.warning("conversation.wake_failed", job_id=job_id, error=repr(exc)[:200])
