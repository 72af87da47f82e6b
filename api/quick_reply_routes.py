"""Routes of quick replies (respostas rápidas): the org's saved answers a person picks with
"/" in the reply box. Viewers read them; editors and admins write them, audited. At most
MAX_QUICK_REPLIES per org (409 `quick_replies_full`), titles unique in the org regardless of
case (409 `quick_reply_title_taken`)."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json
from api.errors import ApiError, conflict, invalid, not_found
from api.pagination import page_of, parse_limit, read_cursor
from api.quick_reply_queries import (
    QuickReplyRow,
    delete_quick_reply,
    insert_quick_reply,
    list_quick_replies,
    lock_count_quick_replies,
    update_quick_reply,
)
from api.routing import Principal, Reply, org_db
from core.audit import AuditEntry, insert_audit

MAX_QUICK_REPLIES = 200
MAX_TITLE_CHARS = 40
MAX_TEXT_CHARS = 4096


class QuickReplyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    text: str


class QuickReplyChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str | None = None
    text: str | None = None


def quick_reply_json(row: QuickReplyRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "title": row.title,
        "text": row.text,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
    }


def quick_reply_title(title: str) -> str:
    kept = " ".join(title.split())  # one line: it is shown in a list
    if not 1 <= len(kept) <= MAX_TITLE_CHARS:
        raise invalid(
            "quick_reply_title_invalid",
            f"O título precisa ter de 1 a {MAX_TITLE_CHARS} caracteres.",
        )
    return kept


def quick_reply_text(text: str) -> str:
    kept = text.strip()
    if not 1 <= len(kept) <= MAX_TEXT_CHARS:
        raise invalid("quick_reply_text_invalid", "O texto precisa ter de 1 a 4.096 caracteres.")
    return kept


def _taken() -> ApiError:
    return conflict("quick_reply_title_taken", "Já existe uma resposta rápida com esse título.")


def _missing() -> ApiError:
    return not_found("quick_reply_not_found", "Essa resposta rápida não existe nesta organização.")


def _quick_reply_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise _missing() from None


def _keyset(values: list[Any]) -> tuple[str, uuid.UUID]:
    title, ident = values
    if not isinstance(title, str) or not isinstance(ident, str) or len(title) > MAX_TITLE_CHARS:
        raise TypeError("quick reply cursor")
    return title, uuid.UUID(ident)


async def _audit(
    conn: asyncpg.Connection, principal: Principal, action: str, row: QuickReplyRow
) -> None:
    detail = {"quick_reply_id": str(row.id), "title": row.title}
    await insert_audit(
        conn, AuditEntry(principal.organization_id, principal.prefix, action, detail=detail)
    )


async def list_quick_replies_route(request: web.Request, principal: Principal) -> Reply:
    limit = parse_limit(request.query)
    after = read_cursor("quick_replies", request.query, _keyset)
    async with org_db(request, principal) as conn:
        rows = await list_quick_replies(
            conn, principal.organization_id, after=after, limit=limit + 1
        )
    page = page_of(rows, limit, "quick_replies", lambda r: [r.title.lower(), str(r.id)])
    return {"items": [quick_reply_json(r) for r in page.items], "next": page.next}


async def create_quick_reply_route(request: web.Request, principal: Principal) -> Reply:
    body = await read_json(request, QuickReplyBody)
    title, text = quick_reply_title(body.title), quick_reply_text(body.text)
    org = principal.organization_id
    async with org_db(request, principal) as conn, conn.transaction():
        if await lock_count_quick_replies(conn, org) >= MAX_QUICK_REPLIES:
            raise conflict(
                "quick_replies_full",
                f"A organização já tem {MAX_QUICK_REPLIES} respostas rápidas, o máximo; "
                "apague uma antes de criar outra.",
            )
        row = await insert_quick_reply(conn, org, title, text, principal.prefix)
        if row is None:
            raise _taken()
        await _audit(conn, principal, "quick_reply.create", row)
    return quick_reply_json(row)


async def update_quick_reply_route(request: web.Request, principal: Principal) -> Reply:
    quick_reply_id = _quick_reply_id(request)
    body = await read_json(request, QuickReplyChange)
    if body.title is None and body.text is None:
        raise invalid("quick_reply_change_empty", "Envie o título, o texto ou os dois.")
    title = None if body.title is None else quick_reply_title(body.title)
    text = None if body.text is None else quick_reply_text(body.text)
    async with org_db(request, principal) as conn, conn.transaction():
        try:
            row = await update_quick_reply(
                conn, principal.organization_id, quick_reply_id, title=title, text=text
            )
        except asyncpg.UniqueViolationError:
            raise _taken() from None
        if row is None:
            raise _missing()
        await _audit(conn, principal, "quick_reply.update", row)
    return quick_reply_json(row)


async def delete_quick_reply_route(request: web.Request, principal: Principal) -> Reply:
    quick_reply_id = _quick_reply_id(request)
    async with org_db(request, principal) as conn, conn.transaction():
        row = await delete_quick_reply(conn, principal.organization_id, quick_reply_id)
        if row is None:
            raise _missing()
        await _audit(conn, principal, "quick_reply.delete", row)
    return {"id": str(row.id), "deleted": True}
