"""Routes of a team working the inbox together: internal notes in a conversation and the
org's quick replies (respostas rápidas). Kept apart from api.route_table, which joins them."""

from __future__ import annotations

from api import note_routes as notes
from api import quick_reply_routes as quick
from api.keys import Role
from api.routing import Route

V, E = Role.VIEWER, Role.EDITOR
PAGED = ("limit", "cursor")

TEAM_ROUTES: tuple[Route, ...] = (
    Route(
        "POST",
        "/v1/conversations/{id}/notes",
        notes.create_note_route,
        E,
        'nota interna na conversa ({"text"}): só a equipe vê; nunca vai ao cliente nem ao modelo',
        action="conversation.note",
        status=201,
        body="json",
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/conversations/{id}/notes",
        notes.list_notes_route,
        V,
        "notas internas da conversa, mais antigas primeiro",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "GET",
        "/v1/quick-replies",
        quick.list_quick_replies_route,
        V,
        "respostas rápidas da organização, por título",
        query=PAGED,
        tags=("history",),
    ),
    Route(
        "POST",
        "/v1/quick-replies",
        quick.create_quick_reply_route,
        E,
        'cria uma resposta rápida ({"title", "text"}); no máximo 200 por organização',
        action="quick_reply.create",
        status=201,
        body="json",
        tags=("history",),
    ),
    Route(
        "PATCH",
        "/v1/quick-replies/{id}",
        quick.update_quick_reply_route,
        E,
        "muda o título ou o texto de uma resposta rápida",
        action="quick_reply.update",
        body="json",
        tags=("history",),
    ),
    Route(
        "DELETE",
        "/v1/quick-replies/{id}",
        quick.delete_quick_reply_route,
        E,
        "apaga uma resposta rápida",
        action="quick_reply.delete",
        tags=("history",),
    ),
)
