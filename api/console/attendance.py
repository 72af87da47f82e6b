"""The Atendimento pages: the waiting queue and the conversations people hold, one
conversation's thread with its buttons, and the JSON their script polls to stay current.

Each reads through the API's own routes (GET /v1/conversations, /v1/conversations/{id} and
its messages, and /v1/settings/hours for "fora do horário") run by the API's gate, so the
JSON a page polls is what the API answers for the same key. The JSON routes sit behind the
same session check as the pages: without a live session they answer the sign-in redirect,
which the script reads as "sign in again".
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from aiohttp import web

from api.console import attendance_view as view
from api.console import team_view
from api.console.auth import READ_TWIN, Visit
from api.console.org_clock import org_clock
from api.console.pages import API, PageData
from api.console.refusals import refusal_sentence
from api.console.render import SECURITY_HEADERS
from api.errors import status_of
from api.guard import may, run_route
from api.keys import Role
from api.pagination import MAX_LIMIT
from api.routing import Reply, deps_of
from conversation.mode import ConversationMode
from core.errors import SkilletError

# A thread reads oldest first: the page follows the API's pages to the newest message, at
# most THREAD_PAGES of MAX_LIMIT, and shows the last THREAD_MESSAGES.
THREAD_PAGES = 5
THREAD_MESSAGES = MAX_LIMIT
POLL_INTERVAL_S = 3  # the script's; the pages promise an update within 5 s


async def _read(
    request: web.Request, visit: Visit, operation: str, query: dict[str, str] | None = None
) -> Reply:
    if query is None:
        return await run_route(API[operation], request, visit.principal)
    base = request.get(READ_TWIN, request)  # after a refused POST, its unread twin
    asked = base.clone(rel_url=base.rel_url.with_query(query))
    return await run_route(API[operation], asked, visit.principal)


async def queue_data(request: web.Request, visit: Visit) -> dict[str, Any]:
    limit = str(MAX_LIMIT)
    waiting = await _read(
        request, visit, "list_conversations_route", {"mode": "waiting", "limit": limit}
    )
    held = await _read(
        request, visit, "list_conversations_route", {"mode": "human", "limit": limit}
    )
    clock, me = await org_clock(request, visit.principal), visit.principal.prefix
    return {
        "waiting": [view.queue_item(c, clock, me) for c in waiting["items"]],
        "held": [view.queue_item(c, clock, me) for c in held["items"]],
        "more": waiting["next"] is not None or held["next"] is not None,
        "updated_at": clock.time_of_day(),
    }


async def _pages(request: web.Request, visit: Visit, route: str) -> list[dict[str, Any]]:
    """A list route's items, at most THREAD_PAGES pages of it."""
    items: list[dict[str, Any]] = []
    query = {"limit": str(MAX_LIMIT)}
    for _ in range(THREAD_PAGES):
        page = await _read(request, visit, route, query)
        items.extend(page["items"])
        if page["next"] is None:
            break
        query = {"limit": str(MAX_LIMIT), "cursor": page["next"]}
    return items


async def _thread(request: web.Request, visit: Visit) -> tuple[list[dict[str, Any]], bool]:
    items = await _pages(request, visit, "list_messages_route")
    return items[-THREAD_MESSAGES:], len(items) > THREAD_MESSAGES


def _can(visit: Visit) -> dict[str, bool]:
    ops = ("takeover_route", "release_route", "reply_route", "cancel_followup_route")
    return {op: may(visit.principal, API[op]) for op in ops}


async def _started_by_business(
    request: web.Request, visit: Visit, can: dict[str, bool]
) -> dict[str, Any]:
    """The follow-ups the agent scheduled, and the templates a person may send here."""
    followups = await _read(request, visit, "list_followups_route")
    clock = await org_clock(request, visit.principal)
    templates = await _read(request, visit, "list_conversation_templates_route")
    return {
        "followups": [
            view.followup_item(f, clock, can_cancel=can["cancel_followup_route"])
            for f in followups["items"]
        ],
        "templates": [view.template_option(t) for t in templates["items"]],
        "window_open": templates["window_open"],
    }


async def _notes(request: web.Request, visit: Visit) -> list[dict[str, Any]]:
    """The conversation's internal notes, the last THREAD_MESSAGES of them."""
    return (await _pages(request, visit, "list_notes_route"))[-THREAD_MESSAGES:]


async def conversation_data(request: web.Request, visit: Visit) -> dict[str, Any]:
    conversation = await _read(request, visit, "show_conversation_route")
    messages, cut = await _thread(request, visit)
    notes = await _notes(request, visit)
    hours = await _read(request, visit, "get_hours_settings")
    can = _can(visit)
    clock = await org_clock(request, visit.principal)
    state = view.conversation_state(
        conversation,
        clock,
        visit.principal.prefix,
        admin=visit.principal.role is Role.ADMIN,
        can=can,
        hours=hours,
    )
    return {
        "conversation": state,
        "messages": team_view.with_notes(
            messages, notes, lambda m: view.message_item(m, request.match_info["id"], clock), clock
        ),
        "cut": cut,
        "updated_at": clock.time_of_day(),
    }


async def _transfer_choices(request: web.Request, visit: Visit) -> list[dict[str, str]]:
    """Whom this visitor may pass the conversation to: only its holder, or an admin, while a
    person holds it (the transfer route refuses anyone else)."""
    principal = visit.principal
    if not may(principal, API["transfer_route"]):
        return []
    conversation = await _read(request, visit, "show_conversation_route")
    holds = conversation["held_by"] == principal.prefix or principal.role is Role.ADMIN
    if conversation["mode"] != ConversationMode.HUMAN or not holds:
        return []
    people = await _read(request, visit, "list_people_route")
    return team_view.transfer_choices(people["items"], conversation["held_by"])


async def conversation_page_data(request: web.Request, visit: Visit) -> dict[str, Any]:
    """The page's data: what the script polls, and what only a reload changes."""
    data = await conversation_data(request, visit)
    quick = await _read(request, visit, "list_quick_replies_route", {"limit": str(MAX_LIMIT)})
    return {
        **data,
        **await _started_by_business(request, visit, _can(visit)),
        "quick_replies": [team_view.quick_reply_option(q) for q in quick["items"]],
        "transfer_to": await _transfer_choices(request, visit),
    }


async def queue_page(request: web.Request, visit: Visit) -> PageData:
    return "atendimento.html", {**await queue_data(request, visit), "next": None}


async def conversation_page(request: web.Request, visit: Visit) -> PageData:
    # After a refused reply the page comes back with the text the person typed.
    typed = visit.form.get("text") if visit.form is not None else None
    note = visit.form.get("note") if visit.form is not None else None
    data = await conversation_page_data(request, visit)
    if visit.principal.role in (Role.EDITOR, Role.ADMIN) and request.method == "GET":
        # A person who can answer opened it: the customer sees their new messages read, once
        # each (in the background; never the page's poll, never an API read).
        deps_of(request).presence.mark_read(
            visit.principal.organization_id, uuid.UUID(data["conversation"]["id"])
        )
    return "conversation.html", {
        **data,
        "typed": typed if isinstance(typed, str) else "",
        "typed_note": note if isinstance(note, str) else "",
        "next": None,
    }


def _json(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(body, ensure_ascii=False),
        status=status,
        content_type="application/json",
        charset="utf-8",
        headers=SECURITY_HEADERS,
    )


async def _answer(request: web.Request, visit: Visit, data: Any) -> web.Response:
    try:
        return _json(await data(request, visit))
    except SkilletError as exc:
        error = {"code": exc.code, "message": refusal_sentence(exc)}
        return _json({"error": error}, status_of(exc))


async def queue_json(request: web.Request, visit: Visit) -> web.Response:
    return await _answer(request, visit, queue_data)


async def conversation_json(request: web.Request, visit: Visit) -> web.Response:
    return await _answer(request, visit, conversation_data)
