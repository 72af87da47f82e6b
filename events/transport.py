"""The events webhook's HTTP transport: one POST per event through the address guard.

No proxy from the environment (it would connect where the guard did not look), no
redirects (a 3xx could point inside), a total timeout per request, and the connector's DNS
cache off so every request resolves and checks again (core.address_guard). A literal address in
the URL never reaches a resolver, so parse_events_url checks it before the request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Protocol

import aiohttp

from core.address_guard import AddressGuard, AddressRefused, GuardedResolver
from core.addresses import EventsUrlRefused, parse_events_url

USER_AGENT = "skillet-events/1"
# An answer's body is never needed: read at most this much so the connection is reusable.
MAX_ANSWER_BYTES = 4096


@dataclass(frozen=True)
class PostResult:
    """What one attempt got: an HTTP status, or the error code that stopped it."""

    status: int | None = None
    error: str | None = None  # http_<status>, timeout, connection_failed, events_url_refused
    detail: str = ""
    refused: bool = False  # the guard refused the URL: no retry mends it

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class EventPoster(Protocol):
    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> PostResult: ...


class GuardedPoster:
    """EventPoster over one aiohttp session whose resolver is the guard."""

    def __init__(self, session: aiohttp.ClientSession, guard: AddressGuard, timeout_s: float):
        self._session = session
        self._guard = guard
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> PostResult:
        try:
            parse_events_url(url, allow_private=self._guard.allow_private)
            async with self._session.post(
                url,
                data=body,
                headers={"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers},
                allow_redirects=False,
                timeout=self._timeout,
            ) as answer:
                await answer.content.read(MAX_ANSWER_BYTES)
                status = answer.status
        except EventsUrlRefused as exc:
            return _refused(exc)
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, AddressRefused):
                return _refused(exc.os_error.refused)
            return PostResult(error="connection_failed", detail=str(exc)[:300])
        except TimeoutError:
            return PostResult(error="timeout", detail=f"no answer in {self._timeout.total:g} s")
        except (aiohttp.ClientError, OSError) as exc:
            return PostResult(error="connection_failed", detail=repr(exc)[:300])
        if 200 <= status < 300:
            return PostResult(status=status)
        return PostResult(status=status, error=f"http_{status}", detail=f"answered {status}")


def _refused(exc: EventsUrlRefused) -> PostResult:
    return PostResult(error=exc.code, detail=exc.message, refused=True)


@contextlib.asynccontextmanager
async def guarded_poster(guard: AddressGuard, timeout_s: float) -> AsyncIterator[GuardedPoster]:
    """A poster and its session, closed on exit."""
    connector = aiohttp.TCPConnector(resolver=GuardedResolver(guard), use_dns_cache=False)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
        yield GuardedPoster(session, guard, timeout_s)
    await asyncio.sleep(0)  # let the connector's transports close before the loop moves on
