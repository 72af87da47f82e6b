"""Whether a WAHA event is signed by the right key: its channel's own, else the global one."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from channels.waha_key_queries import fetch_waha_signature_valid
from webhook.signatures import waha_signature_ok


class WahaVerdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    NOT_CONFIGURED = "not_configured"  # no key for this session, nor a global one


async def waha_verdict(
    pool: Any,
    session: str | None,
    body: bytes,
    header: str | None,
    algorithm_header: str | None,
    global_key: str | None,
) -> WahaVerdict:
    """A channel with its own key is checked by the database (skillet_waha_signature_valid:
    the webhook's login never reads a key) and never accepts the global one: that is the point
    of it. Sessions without a key of their own (also those no channel has: the event is then
    acknowledged as `unknown_channel`) are checked against the global key here.

    One pooled connection for one statement; database errors propagate (the caller answers
    503).
    """
    signature = (header or "").strip().lower()
    if algorithm_header and algorithm_header.strip().lower() != "sha512":
        signature = ""  # no key verifies an empty signature
    if session is not None:
        async with pool.acquire() as conn:
            own = await fetch_waha_signature_valid(conn, session, body, signature)
        if own is not None:
            return WahaVerdict.VALID if own and signature else WahaVerdict.INVALID
    if global_key is None:
        return WahaVerdict.NOT_CONFIGURED
    if waha_signature_ok(global_key, body, header, algorithm_header):
        return WahaVerdict.VALID
    return WahaVerdict.INVALID
