"""The Conversas page: the org's conversations with a search box and filters, each row with
its customer (name and number), its last message and how many customer messages wait.

The form's fields are the API's own query (`q`, `mode`, `held_by`, `unanswered`), read through
GET /v1/conversations and its gate; empty fields are dropped (an empty search is no search).
A refused search or filter is shown beside its field, in pt-BR, with what was typed kept, and
lists nothing until it is fixed.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from api.console.attendance_view import author_label, readable
from api.console.auth import Visit
from api.console.pages import API, PageData, read
from api.errors import ApiError, public_message
from api.guard import may, run_route
from inbox.profile_names import contact_label, formatted_number

FIELDS = ("q", "mode", "held_by", "unanswered", "limit", "cursor")
PREVIEW_CHARS = 90  # of the last message, on one line
MODES = (
    ("", "Todos"),
    ("agent", "Com o agente"),
    ("waiting", "Esperando"),
    ("human", "Com uma pessoa"),
)
# The API's refusal codes, by the field they belong to (the message beside it).
FIELD_OF_CODE = {
    "invalid_search": "q",
    "invalid_mode": "mode",
    "invalid_held_by": "held_by",
    "invalid_unanswered": "unanswered",
}
FIELD_MESSAGES = {
    "invalid_search": "Digite de 2 a 100 caracteres: parte de um nome, de um número ou de uma "
    "mensagem.",
    "invalid_mode": "Escolha um dos modos da lista.",
    "invalid_held_by": "Escolha quem atende na lista.",
    "invalid_unanswered": "Marque ou desmarque “só com mensagens sem resposta”.",
}


def preview(text: str | None) -> str:
    """The last message on one line, cut to PREVIEW_CHARS with an ellipsis."""
    line = " ".join(readable(text or "").split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def row(item: dict[str, Any]) -> dict[str, Any]:
    last = item.get("last_message")
    return {
        **item,
        "contact": contact_label(item["contact_id"], item.get("contact_name")),
        "number": formatted_number(item["contact_id"]),
        "preview": preview(last["body"]) if last else "",
        "preview_author": author_label(last["author"] or "agent") if last else "",
    }


async def _holders(request: web.Request, visit: Visit) -> list[tuple[str, str]]:
    """Who may be chosen in "Quem atende": me, the phone, and the team's people."""
    options = [("", "Qualquer um"), ("me", "Comigo"), ("phone", "Celular da empresa")]
    if may(visit.principal, API["list_people_route"]):
        people = await read(request, visit, "list_people_route")
        options += [
            (p["id"], p["name"])
            for p in people["items"]
            if p.get("active") and p["id"] != str(visit.principal.person_id)
        ]
    return options


async def conversations(request: web.Request, visit: Visit) -> PageData:
    typed = {k: request.query.get(k, "") for k in ("q", "mode", "held_by", "unanswered")}
    asked = {k: v for k in FIELDS if (v := request.query.get(k, "").strip())}
    context: dict[str, Any] = {
        "typed": typed,
        "modes": MODES,
        "holders": await _holders(request, visit),
        "field_errors": {},
        "filtered": any(asked.get(k) for k in ("q", "mode", "held_by", "unanswered")),
    }
    clone = request.clone(rel_url=request.rel_url.with_query(asked))
    try:
        reply = await run_route(API["list_conversations_route"], clone, visit.principal)
    except ApiError as exc:
        field = FIELD_OF_CODE.get(exc.code)
        if field is None:
            raise
        message = FIELD_MESSAGES.get(exc.code) or public_message(exc)
        context["field_errors"] = {field: message}
        return "conversations.html", {**context, "items": [], "next": None}
    items = [row(c) for c in reply["items"]]
    return "conversations.html", {**context, "items": items, "next": reply["next"]}
