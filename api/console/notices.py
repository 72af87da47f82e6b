"""What every console page's script (static/avisos.js) polls to tell the signed-in person
about a conversation that needs them: a count for the tab's title, and one item per thing
that can be new (a conversation waiting, a customer's message in one they hold, one passed
to them), each with the time that changes when it is new again. The script compares it with
what it saw, plays the sound and shows the browser notification.

Never a message's text: a notice names the contact only (profile name and number).
"""

from __future__ import annotations

import json

from aiohttp import web

from api.console.auth import Visit
from api.console.render import SECURITY_HEADERS
from api.notice_queries import NoticeRow, list_notices
from api.routing import org_db
from inbox.profile_names import contact_label


def notice_json(row: NoticeRow) -> dict[str, str]:
    return {
        "id": str(row.conversation_id),
        "kind": row.kind,
        "at": row.at.isoformat(),
        "who": contact_label(row.contact_id, row.contact_name),
    }


def notices_body(rows: list[NoticeRow]) -> dict[str, object]:
    """`count`: the conversations that need the person now (each counted once); `items`:
    what may be told when new (a message found on taking a conversation only counts)."""
    return {
        "count": len({r.conversation_id for r in rows}),
        "items": [notice_json(r) for r in rows if r.told],
    }


async def notices_json(request: web.Request, visit: Visit) -> web.Response:
    principal = visit.principal
    async with org_db(request, principal) as conn:
        rows = await list_notices(conn, principal.organization_id, principal.prefix)
    return web.Response(
        text=json.dumps(notices_body(rows), ensure_ascii=False),
        content_type="application/json",
        charset="utf-8",
        headers={**SECURITY_HEADERS, "Cache-Control": "no-store"},
    )
