"""A customer's stored media through the API: `GET /v1/conversations/{id}/messages/
{message_id}/media`, the bytes of one inbound message's voice note, image or file.

Org-scoped like every route (RLS and the org in the statement: another org's message is
404, as is one whose media was never stored or is past retention). Typed by the type sniffed
when it was stored (core.sniff), never the customer's declared one; always an
attachment named by the sanitized file name (inbox.file_names), `nosniff` and a sandbox CSP,
so nothing opened from it runs as a page of ours. The console serves the same bytes behind
its session (api.console.media).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from api.errors import not_found
from api.routing import ApiDeps, Principal, deps_of
from conversation.media.queries import fetch_stored_media
from core.object_store import ObjectNotFound
from core.tenancy import org_connection
from inbox.file_names import safe_file_name

MAX_SERVED_BYTES: Final = 32 * 1024 * 1024  # above SKILLET_MEDIA_MAX_BYTES' default
FILE_HEADERS: Final = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True)
class StoredFile:
    data: bytes
    media_type: str  # as sniffed
    file_name: str  # safe to put in a header or a page


async def read_stored_file(
    deps: ApiDeps, organization_id: uuid.UUID, conversation_id: uuid.UUID, message_id: uuid.UUID
) -> StoredFile | None:
    """The message's stored bytes; None when the org has no such stored media. The pooled
    connection is let go before the object store is read."""
    async with org_connection(deps.pool, organization_id) as conn:
        stored = await fetch_stored_media(conn, organization_id, conversation_id, message_id)
    if stored is None:
        return None
    key, media_type, file_name = stored
    try:
        found = await deps.store.get(key, max_bytes=MAX_SERVED_BYTES)
    except ObjectNotFound:
        return None  # deleted by retention between the row and the read
    # Sanitized at the webhook already; again here, so a header never holds a raw name.
    name = safe_file_name(file_name) or safe_file_name(key.rsplit("/", 1)[-1]) or "arquivo"
    return StoredFile(found.data, media_type or "application/octet-stream", name)


def attachment(name: str) -> str:
    return f'attachment; filename="{name}"'


async def message_media_route(request: web.Request, principal: Principal) -> web.Response:
    _missing = not_found("media_not_found", "Essa mensagem não tem mídia guardada nesta conversa.")
    try:
        conversation_id = uuid.UUID(request.match_info["id"])
        message_id = uuid.UUID(request.match_info["message_id"])
    except ValueError:
        raise _missing from None
    found = await read_stored_file(
        deps_of(request), principal.organization_id, conversation_id, message_id
    )
    if found is None:
        raise _missing
    return web.Response(
        body=found.data,
        content_type=found.media_type,
        headers={**FILE_HEADERS, "Content-Disposition": attachment(found.file_name)},
    )
