"""Routes of the messages the business starts: a Cloud API number's synced templates, and a
conversation's follow-ups (listed; a scheduled one cancelled)."""

from __future__ import annotations

import uuid

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api import conversation_actions as actions
from api.bodies import read_json
from api.conversation_queries import lock_conversation
from api.errors import ApiError, not_found
from api.routing import Principal, Reply, org_db
from channels.models import ChannelKind
from channels.queries import fetch_channel_by_address
from channels.template_queries import list_templates
from turn.followup_queries import cancel_followup, list_followups


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
