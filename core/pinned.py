"""An HTTP session pinned to addresses checked already: its resolver answers those addresses
for their host and nothing else (no second lookup, so no DNS rebinding between the check and
the connection), and it takes no proxy from the environment."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Sequence

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from core.address_guard import resolved
from core.addresses import IPAddress


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
