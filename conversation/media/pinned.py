"""A media URL on a host we did not name: resolved once, refused unless every address is
public, then connected to exactly those addresses (no second lookup: no DNS rebinding).

The public test is the events webhook's (core.addresses.refusal): loopback, private,
link-local, multicast, reserved, unspecified and IPv4 embedded in IPv6 are all refused. The
resolver is injected (`Resolve`): unit tests answer what they like.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable

import structlog

from conversation.media.errors import MediaTransient, MediaUnavailable
from core.address_guard import system_resolve
from core.addresses import IPAddress, refusal
from core.pinned import PinnedResolver, pinned_session

log = structlog.get_logger(__name__)

__all__ = ["PinnedResolver", "Resolve", "pinned_session", "public_addresses"]

Resolve = Callable[[str, int], Awaitable[list[str]]]


async def public_addresses(
    host: str, port: int, resolve: Resolve = system_resolve
) -> list[IPAddress]:
    """`host`'s addresses, all public; MediaUnavailable (logged with why) if one is not."""
    try:
        answers = await resolve(host, port)
    except OSError as exc:
        raise MediaTransient(f"{host} does not resolve: {exc!r}"[:300]) from exc
    addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in answers]
    if not addresses:
        raise MediaTransient(f"{host} does not resolve")
    for address in addresses:
        if (reason := refusal(address)) is not None:
            log.warning(
                "turn.media_url_refused", host=host[:200], address=str(address), reason=reason
            )
            raise MediaUnavailable(
                f"the media URL's host {host!r} resolves to {address} ({reason}), not a public "
                "address"
            )
    return addresses
