"""The console's media: a customer's stored voice note, image or file, for a signed-in person
of its org only (the session, never a public URL; RLS shows the org's messages only).

Served with the type sniffed when it was stored (turn.media.sniff), never the customer's
declared one; images and audio inline (the thread's <img> and <audio>, CSP img-src and
media-src 'self'), anything else as an attachment; `nosniff` and a CSP of its own so a file
cannot run as a page.
"""

from __future__ import annotations

import uuid
from typing import Final

from aiohttp import web

from api.console.auth import Visit
from api.routing import DEPS
from core.errors import StorageError
from core.tenancy import org_connection
from skills.storage import ObjectNotFound
from turn.media.queries import fetch_stored_media

INLINE_TYPES: Final = frozenset(
    {
        "image/jpeg",
        "image/png",
        "image/webp",
        "audio/ogg",
        "audio/mp4",
        "audio/aac",
        "audio/mpeg",
        "audio/amr",
    }
)
MAX_SERVED_BYTES: Final = 32 * 1024 * 1024  # above SKILLET_MEDIA_MAX_BYTES' default
_HEADERS: Final = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "same-origin",
}


def media_path(conversation_id: str, message_id: str) -> str:
    return f"/console/conversas/{conversation_id}/midia/{message_id}"


async def media_file(request: web.Request, visit: Visit) -> web.StreamResponse:
    try:
        conversation_id = uuid.UUID(request.match_info["id"])
        message_id = uuid.UUID(request.match_info["message_id"])
    except ValueError:
        raise web.HTTPNotFound() from None
    deps = request.app[DEPS]
    organization_id = visit.principal.organization_id
    async with org_connection(deps.pool, organization_id) as conn:
        stored = await fetch_stored_media(conn, organization_id, conversation_id, message_id)
    if stored is None:
        raise web.HTTPNotFound()
    key, media_type, file_name = stored
    try:
        found = await deps.store.get(key, max_bytes=MAX_SERVED_BYTES)
    except ObjectNotFound:
        raise web.HTTPNotFound() from None
    except StorageError:
        raise web.HTTPServiceUnavailable() from None
    inline = media_type in INLINE_TYPES
    disposition = "inline" if inline else f'attachment; filename="{file_name}"'
    return web.Response(
        body=found.data,
        content_type=media_type if inline else "application/octet-stream",
        headers={**_HEADERS, "Content-Disposition": disposition},
    )
