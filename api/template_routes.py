"""Routes of the messages the business starts: a Cloud API number's synced templates, and a
conversation's follow-ups (listed; a scheduled one cancelled)."""

from __future__ import annotations

import uuid

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json
from api.errors import ApiError, not_found
from api.routing import Principal, Reply, deps_of, org_db
from channels.dispatch import CUSTOMER_SERVICE_WINDOW, outside_window
from channels.queries import fetch_channel_by_address
from channels.template_queries import fetch_conversation_channel, list_templates
from channels.templates import APPROVED
from conversation import person_actions as actions
from conversation.followup_queries import cancel_followup, list_followups
from conversation.opt_out_queries import fetch_opted_out
from conversation.person_queries import fetch_last_inbound, lock_conversation
from core.channel_kind import ChannelKind


def _channel_not_found() -> ApiError:
    return not_found("channel_not_found", "Esse número não está conectado a esta organização.")


async def list_channel_templates_route(request: web.Request, principal: Principal) -> Reply:
    try:
        kind = ChannelKind(request.match_info["kind"])
    except ValueError:
        raise _channel_not_found() from None
    address = request.match_info["address"]
    async with org_db(request, principal) as conn:
        channel = await fetch_channel_by_address(conn, kind, address)
        if channel is None or channel.organization_id != principal.organization_id:
            raise _channel_not_found()
        templates = await list_templates(conn, channel.id)
    return {
        "kind": kind.value,
        "address": address,
        "items": [t.as_json() for t in templates],
    }


def _conversation_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise actions.missing() from None


async def list_conversation_templates_route(request: web.Request, principal: Principal) -> Reply:
    """The approved templates a person may send in this conversation (its number's), and
    whether a free-form text may still go (the customer wrote in the last 24 hours)."""
    conversation_id = _conversation_id(request)
    org = principal.organization_id
    async with org_db(request, principal) as conn:
        locked = await lock_conversation(conn, org, conversation_id)
        if locked is None:
            raise actions.missing()
        channel = await fetch_conversation_channel(conn, conversation_id)
        templates = []
        if channel is not None and channel.kind == ChannelKind.CLOUD_API.value:
            templates = await list_templates(conn, channel.id, status=APPROVED)
        last = await fetch_last_inbound(conn, org, conversation_id)
        opted_out = await fetch_opted_out(conn, org, locked.contact_id)
    now = deps_of(request).clock()
    window_open = last is None or not (
        last.routed and outside_window(last.sent_at, now, CUSTOMER_SERVICE_WINDOW)
    )
    return {
        "items": [t.as_json() for t in templates],
        "window_open": window_open,
        "opted_out": opted_out,
        "kind": None if channel is None else channel.kind,
    }


def _followup_missing() -> ApiError:
    return not_found("followup_not_found", "Esse agendamento não existe nesta conversa.")


async def list_followups_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    async with org_db(request, principal) as conn:
        if await lock_conversation(conn, principal.organization_id, conversation_id) is None:
            raise actions.missing()
        followups = await list_followups(conn, conversation_id)
    return {"items": [f.as_json() for f in followups]}


class CancelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")


async def cancel_followup_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    await read_json(request, CancelBody)
    try:
        followup_id = uuid.UUID(request.match_info["followup_id"])
    except ValueError:
        raise _followup_missing() from None
    async with org_db(request, principal) as conn, conn.transaction():
        followup, cancelled = await cancel_followup(
            conn, conversation_id, followup_id, principal.prefix
        )
    if followup is None:
        raise _followup_missing()
    return {**followup.as_json(), "cancelled_now": cancelled}
