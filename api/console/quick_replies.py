"""The console's Respostas rápidas page: the org's quick replies, a form to add one, and each
one's own form to change or delete it (the API's /v1/quick-replies routes, their roles and
refusals). A refused form comes back with what was typed, its refusal beside its field."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api.console.auth import READ_TWIN, Visit
from api.console.pages import PageData, read
from api.pagination import MAX_LIMIT
from api.quick_reply_routes import MAX_QUICK_REPLIES, MAX_TEXT_CHARS, MAX_TITLE_CHARS


def _typed(visit: Visit) -> dict[str, str]:
    form = visit.form
    if form is None:
        return {"title": "", "text": ""}
    return {f: v if isinstance(v := form.get(f), str) else "" for f in ("title", "text")}


async def page(request: web.Request, visit: Visit) -> PageData:
    base = request.get(READ_TWIN, request)  # after a refused POST, its unread twin
    asked = base.clone(rel_url=base.rel_url.with_query({"limit": str(MAX_LIMIT)}))
    reply = await read(asked, visit, "list_quick_replies_route")
    items: list[dict[str, Any]] = reply["items"]
    editing = request.match_info.get("id")  # a refused change or delete of this one
    typed = _typed(visit)
    return "quick_replies.html", {
        "items": items,
        "full": len(items) >= MAX_QUICK_REPLIES,
        "max_items": MAX_QUICK_REPLIES,
        "max_title": MAX_TITLE_CHARS,
        "max_text": MAX_TEXT_CHARS,
        "editing": editing,
        "typed": typed,
        "next": None,
    }
