"""Asking WAHA which phone number hides behind a linked id (`NNN@lid`).

A customer who writes under an opaque `@lid` with no alternate id in the event would start a
conversation apart from the one under their phone number. WAHA keeps the lid -> phone map it
has learned: `GET /api/{session}/lids/{lid}` answers `{"lid": ..., "pn": "5511...@c.us"}`, with
`pn` null when it does not know. The webhook asks once per linked id never seen before; any
failure just leaves the linked id as the contact (the message is never held up for long).
"""

from __future__ import annotations

from typing import Protocol
from urllib.parse import quote

import aiohttp
import structlog

from inbox.contacts import normalize_whatsapp_id

log = structlog.get_logger(__name__)


class LidResolver(Protocol):
    async def phone_of(self, session: str, lid: str) -> str | None:
        """The phone number (digits) behind `lid` on `session`, or None when unknown."""
        ...


class WahaLidLookup:
    def __init__(self, http: aiohttp.ClientSession, base_url: str, api_key: str | None) -> None:
        self._http = http
        self._base_url = base_url.rstrip("/")
        self._headers = {"X-Api-Key": api_key} if api_key else {}

    async def phone_of(self, session: str, lid: str) -> str | None:
        url = f"{self._base_url}/api/{quote(session, safe='')}/lids/{quote(lid, safe='')}"
        try:
            async with self._http.get(url, headers=self._headers) as response:
                if response.status != 200:
                    log.warning("webhook.lid_lookup_refused", status=response.status)
                    return None
                body = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("webhook.lid_lookup_failed", error=repr(exc)[:200])
            return None
        phone = normalize_whatsapp_id(body.get("pn")) if isinstance(body, dict) else None
        # Only a phone form counts: a lid answered for a lid would say nothing new.
        return phone if phone is not None and "@" not in phone else None
