"""The console's media: a customer's stored voice note, image or file, for a signed-in person
of its org only (the session, never a public URL; RLS shows the org's messages only).

Served with the type sniffed when it was stored (core.sniff), never the customer's
declared one; images and audio inline (the thread's <img> and <audio>, CSP img-src and
media-src 'self'), anything else as an attachment; `nosniff` and a CSP of its own so a file
cannot run as a page.
"""

from __future__ import annotations

import uuid
from typing import Final

from aiohttp import web

from api.console.auth import Visit
from api.media_routes import FILE_HEADERS, attachment, read_stored_file
from api.routing import DEPS
from core.errors import StorageError

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


def media_path(conversation_id: str, message_id: str) -> str:
    return f"/console/conversas/{conversation_id}/midia/{message_id}"


async def media_file(request: web.Request, visit: Visit) -> web.StreamResponse:
    try:
        conversation_id = uuid.UUID(request.match_info["id"])
        message_id = uuid.UUID(request.match_info["message_id"])
    except ValueError:
        raise web.HTTPNotFound() from None
    organization_id = visit.principal.organization_id
    try:
        found = await read_stored_file(
            request.app[DEPS], organization_id, conversation_id, message_id
        )
    except StorageError:
        raise web.HTTPServiceUnavailable() from None
    if found is None:
        raise web.HTTPNotFound()
    inline = found.media_type in INLINE_TYPES
    return web.Response(
        body=found.data,
        content_type=found.media_type if inline else "application/octet-stream",
        headers={
            **FILE_HEADERS,
            "Content-Disposition": "inline" if inline else attachment(found.file_name),
        },
    )
