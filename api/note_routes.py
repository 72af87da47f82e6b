"""Routes of internal notes: a person writes one in a conversation (editor and up), anyone of
the org reads them (viewer). A note is the team's: never sent to the customer, never in the
model's prompt (the turn reads messages, never conversation_notes), audited without its text.
"""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json
from api.errors import ApiError, invalid, not_found
from api.history_queries import fetch_conversation_exists
from api.note_queries import NoteRow, insert_note, list_notes
from api.pagination import page_of, parse_limit, read_cursor, time_id_keyset
from api.people_queries import person_of_actor
from api.routing import Principal, Reply, org_db
from core.audit import AuditEntry, insert_audit

MAX_NOTE_CHARS = 4096


class NoteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def note_json(row: NoteRow) -> dict[str, Any]:
    person = person_of_actor(row.author)
    author_person = None
    if person is not None and row.author_person_name is not None:
        author_person = {"id": str(person), "name": row.author_person_name}
    return {
        "id": str(row.id),
        "conversation_id": str(row.conversation_id),
        "text": row.text,
        "author": row.author,
        "author_person": author_person,
        "created_at": row.created_at.isoformat(),
    }


def note_text(text: str) -> str:
    """The note as kept: trimmed, 1 to MAX_NOTE_CHARS characters, else 422."""
    kept = text.strip()
    if not 1 <= len(kept) <= MAX_NOTE_CHARS:
        raise invalid(
            "note_text_invalid",
            f"A nota precisa ter de 1 a {MAX_NOTE_CHARS:,} caracteres.".replace(",", "."),
        )
    return kept


def _conversation_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise _missing() from None


def _missing() -> ApiError:
    return not_found("conversation_not_found", "A conversa não existe nesta organização.")


async def create_note_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    body = await read_json(request, NoteBody)
    text = note_text(body.text)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        # The foreign key would take another org's conversation (it ignores row security).
        if not await fetch_conversation_exists(conn, org, conversation_id):
            raise _missing()
        row = await insert_note(conn, org, conversation_id, principal.prefix, text)
        detail = {"conversation_id": str(conversation_id), "note_id": str(row.id)}
        await insert_audit(
            conn, AuditEntry(org, principal.prefix, "conversation.note", detail=detail)
        )
    return note_json(row)


async def list_notes_route(request: web.Request, principal: Principal) -> Reply:
    conversation_id = _conversation_id(request)
    limit = parse_limit(request.query)
    after = read_cursor("notes", request.query, time_id_keyset)
    org = principal.organization_id
    async with org_db(request, principal) as conn:
        if not await fetch_conversation_exists(conn, org, conversation_id):
            raise _missing()
        rows = await list_notes(conn, org, conversation_id, after=after, limit=limit + 1)
    page = page_of(rows, limit, "notes", lambda r: [r.created_at.isoformat(), str(r.id)])
    return {"items": [note_json(r) for r in page.items], "next": page.next}
