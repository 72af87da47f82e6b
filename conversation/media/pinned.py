"""A media URL on a host we did not name: resolved once, refused unless every address is
public, then connected to exactly those addresses (no second lookup: no DNS rebinding).

The public test is the events webhook's (core.addresses.refusal): loopback, private,
link-local, multicast, reserved, unspecified and IPv4 embedded in IPv6 are all refused. The
resolver is injected (`Resolve`): unit tests answer what they like.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import aiohttp
import structlog
from aiohttp.abc import AbstractResolver, ResolveResult

from conversation.media.errors import MediaTransient, MediaUnavailable
from core.address_guard import resolved, system_resolve
from core.addresses import IPAddress, refusal

log = structlog.get_logger(__name__)

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
                "address, and is not the WAHA server"
            )
    return addresses


class PinnedResolver(AbstractResolver):
    """aiohttp's resolver answering the addresses checked already, for their host only."""

    def __init__(self, host: str, addresses: Sequence[IPAddress]) -> None:
        self._host = host
        self._addresses = tuple(addresses)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host != self._host:  # never: one session per checked URL, no redirects
            raise OSError(f"{host} was not checked")
        return resolved(host, port, self._addresses)

    async def close(self) -> None:
        return None


@contextlib.asynccontextmanager
async def pinned_session(
    host: str, addresses: Sequence[IPAddress]
) -> AsyncIterator[aiohttp.ClientSession]:
    """A session that connects `host` to `addresses` only; no proxy from the environment
    (it would connect where we did not look)."""
    connector = aiohttp.TCPConnector(resolver=PinnedResolver(host, addresses), use_dns_cache=False)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
        yield session
    await asyncio.sleep(0)  # let the connector's transports close before the loop moves on
