"""Which key must have signed a WAHA event: its channel's own, else the global fallback."""

from __future__ import annotations

from typing import Any

from channels.waha_key_queries import fetch_waha_channel_key


async def waha_key_for(pool: Any, session: str | None, global_key: str | None) -> str | None:
    """The channel's own key when the session's channel has one; else the global key (also
    for a session no channel has: the event is then acknowledged as `unknown_channel`).
    None: no key at all for this session, the endpoint is not configured for it.

    One pooled connection for one statement; database errors propagate (the caller answers
    503). A channel with its own key never accepts the global one: that is the point of it.
    """
    if session is not None:
        async with pool.acquire() as conn:
            channel = await fetch_waha_channel_key(conn, session)
        if channel is not None and channel.hmac_key is not None:
            return channel.hmac_key
    return global_key
