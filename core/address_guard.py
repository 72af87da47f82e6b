"""The address guard of the events webhook: resolve a host, refuse it unless every address
it resolves to is public (core.addresses), and connect only to those addresses.

A name is resolved once per request, checked, and the checked addresses are what the HTTP
client connects to (GuardedResolver is aiohttp's resolver, DNS cache off): a name that
resolved to a public address when it was set and to a private one now (DNS rebinding) is
refused now. The resolver is injected (`Resolve`): tests answer what they like.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence

from aiohttp.abc import AbstractResolver, ResolveResult

from core.addresses import (
    EventsTarget,
    EventsUrlRefused,
    IPAddress,
    parse_events_url,
    refusal,
    refused_address,
)

Resolve = Callable[[str, int], Awaitable[list[str]]]


async def system_resolve(host: str, port: int) -> list[str]:
    """Every address the system's resolver gives `host` (TCP)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class AddressGuard:
    """Checks URLs and resolves hosts for the events webhook, under one policy."""

    def __init__(self, resolve: Resolve = system_resolve, *, allow_private: bool = False) -> None:
        self._resolve = resolve
        self.allow_private = allow_private

    async def addresses(self, host: str, port: int) -> list[IPAddress]:
        """`host`'s addresses, each checked; EventsUrlRefused if one is not public."""
        try:
            answers = await self._resolve(host, port)
        except OSError as exc:
            raise EventsUrlRefused(
                f"o host {host} não resolve ({exc.strerror or exc}); confira a URL de eventos"
            ) from exc
        addresses = [ipaddress.ip_address(a.split("%", 1)[0]) for a in answers]
        if not addresses:
            raise EventsUrlRefused(f"o host {host} não resolve; confira a URL de eventos")
        if not self.allow_private:
            for address in addresses:
                if (reason := refusal(address)) is not None:
                    raise refused_address(host, address, reason)
        return addresses

    async def check_url(self, url: str) -> EventsTarget:
        """The URL's shape and, for a name, what it resolves to now (set time)."""
        target = parse_events_url(url, allow_private=self.allow_private)
        if target.literal is None and not self.allow_private:
            await self.addresses(target.host, target.port)
        return target


class AddressRefused(OSError):
    """How a refusal crosses aiohttp's connector (which wraps resolver OSErrors)."""

    def __init__(self, refused: EventsUrlRefused) -> None:
        super().__init__(refused.message)
        self.refused = refused


class GuardedResolver(AbstractResolver):
    """aiohttp's resolver: the guard's checked addresses, nothing else."""

    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            addresses = await self._guard.addresses(host, port)
        except EventsUrlRefused as exc:
            raise AddressRefused(exc) from exc
        return resolved(host, port, addresses)

    async def close(self) -> None:
        return None


def resolved(host: str, port: int, addresses: Sequence[IPAddress]) -> list[ResolveResult]:
    """Checked addresses as aiohttp's resolver answers them (numeric: no second lookup)."""
    return [
        ResolveResult(
            hostname=host,
            host=str(address),
            port=port,
            family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
            proto=0,
            flags=socket.AI_NUMERICHOST,
        )
        for address in addresses
    ]
