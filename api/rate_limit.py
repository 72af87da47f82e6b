"""Rate limits of the admin API and the console: failed authentications per client address,
and requests per valid key. Counters in Redis, shared by every API process.

Failed authentications. A request that presents a credential that does not authenticate (an
`Authorization` header without a live key, a console sign-in whose key is wrong or revoked)
adds one to its client address's count (api.client_address: the TCP peer, or past trusted
proxies). A request with no credential at all (no `Authorization` header) is a plain 401 and
counts nothing: it guesses nothing. An expired console session cookie counts nothing either;
session secrets are 256 random bits, and a stale cookie is what an honest browser sends.
Once an address has `SKILLET_API_AUTH_FAILURES_PER_MINUTE` failures in the current minute,
every request of it that needs authentication answers 429 `too_many_failed_auth`, with
`Retry-After` (seconds to the end of the minute), until the minute ends.

A valid key at a blocked address is refused too. Decided: the address's lock is checked
before any credential is read, so while blocked nothing is looked up. The other choice (look
the key up, serve it if valid, 429 otherwise) would answer each guess 200 or 429 at full
speed: the limit would slow nothing, it would only change the word for "wrong". The cost:
an honest client behind the same address as the guesser (one NAT) waits out the minute;
an honest client at any other address is never affected. A blocked address's requests do
not add to its count, so it is free again when the minute ends. Requests that need no
credential (/healthz, /openapi.json, /metrics, static files) are never limited.

Requests per valid key. With `SKILLET_API_KEY_REQUESTS_PER_MINUTE` above 0, each key (by its
prefix; the console's pages count against the key the session signed in with) may make that
many requests a minute, then 429 `too_many_requests` with `Retry-After`.

Counting. Fixed windows of one minute: the key `{prefix}:auth:{address}:{minute}` (or
`:key:{prefix}:{minute}`), INCR + EXPIRE in one MULTI (one round trip); a check is one GET.
So a request costs at most two Redis round trips. A burst across a minute's edge may see up
to twice the limit in a minute, and failures checked concurrently (all read the count before
any adds to it) may pass it by as many as are in flight: the bound is per minute, not per
instant. Counters are ephemeral like the queue: losing Redis loses nothing but counts.

Redis down, slow or erroring: every call has `SKILLET_API_RATE_LIMIT_TIMEOUT_S` (socket and
overall); past it, or on any Redis error, the request passes unlimited and
`skillet_api_rate_limit_bypassed_total` counts it. A hung Redis never hangs the API; it
turns the limits off while it lasts, logged once when it starts and once when it ends.

Metrics (on the API's /metrics): `skillet_api_rate_limited_total{reason}` (429s, reason
`too_many_failed_auth` | `too_many_requests`), `skillet_api_auth_failures_total` (failures
counted), `skillet_api_rate_limit_bypassed_total`.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

import structlog
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter
from redis.asyncio import Redis
from redis.exceptions import RedisError

from api.client_address import IPNetwork, client_address
from api.errors import ApiError
from core.clock import Clock

log = structlog.get_logger(__name__)

WINDOW_S = 60  # the limits are "per minute"
# A window's key outlives its minute by one more, so a process whose clock runs a little
# behind still reads the same count; then Redis drops it.
KEY_TTL_S = 2 * WINDOW_S
FAILED_AUTH = "too_many_failed_auth"
KEY_REQUESTS = "too_many_requests"
REASONS = (FAILED_AUTH, KEY_REQUESTS)


@dataclass(frozen=True)
class RateLimits:
    """The settings (worker.settings `api_*`); 0 turns a limit off."""

    auth_failures_per_minute: int = 20
    key_requests_per_minute: int = 0
    trusted_proxies: tuple[IPNetwork, ...] = ()
    redis_timeout_s: float = 0.25
    key_prefix: str = "skillet:ratelimit"  # of every Redis key the limiter writes


DEFAULT_RATE_LIMITS = RateLimits()


class RateLimited(ApiError):
    """429: its `retry_after_s` goes out as the `Retry-After` header."""

    def __init__(self, code: str, message: str, retry_after_s: int) -> None:
        super().__init__(429, code, message)
        self.retry_after_s = retry_after_s


def window_of(now_s: float) -> int:
    """The index of the minute `now_s` (Unix seconds) falls in."""
    return math.floor(now_s / WINDOW_S)


def retry_after_s(now_s: float) -> int:
    """Whole seconds until the current window ends, at least 1 (what `Retry-After` says)."""
    return max(1, math.ceil((window_of(now_s) + 1) * WINDOW_S - now_s))


def too_many_failed_auth(wait_s: int) -> RateLimited:
    return RateLimited(
        FAILED_AUTH,
        "Muitas tentativas de autenticação falharam a partir deste endereço. Espere "
        f"{wait_s} s (cabeçalho Retry-After) e tente de novo com uma chave válida, criada "
        "por `skillet api-keys create`.",
        wait_s,
    )


def too_many_requests(limit: int, wait_s: int) -> RateLimited:
    return RateLimited(
        KEY_REQUESTS,
        f"Esta chave passou de {limit} pedidos por minuto "
        f"(SKILLET_API_KEY_REQUESTS_PER_MINUTE). Espere {wait_s} s (cabeçalho Retry-After) "
        "e tente de novo, ou use outra chave para outra integração.",
        wait_s,
    )


class Counters(Protocol):
    """Window counters shared by every API process (RedisCounters; tests may pass another)."""

    async def read(self, key: str) -> int: ...

    async def bump(self, key: str, ttl_s: int) -> int: ...


class RedisCounters:
    """Counters in Redis: a read is one GET, a bump one MULTI of INCR + EXPIRE."""

    def __init__(self, redis: Redis, timeout_s: float) -> None:
        self._redis = redis
        self._timeout_s = timeout_s

    async def read(self, key: str) -> int:
        async with asyncio.timeout(self._timeout_s):
            raw = await self._redis.get(key)
        return int(raw or 0)

    async def bump(self, key: str, ttl_s: int) -> int:
        async with asyncio.timeout(self._timeout_s), self._redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, ttl_s)
            count, _ = await pipe.execute()
        return int(count)


def open_counter_redis(redis_url: str, timeout_s: float) -> Redis:
    """A Redis client for the counters: short timeouts, no retries (a slow Redis must not
    slow the API). The caller closes it (`aclose`)."""
    client: Redis = Redis.from_url(
        redis_url,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        retry_on_timeout=False,
    )
    return client


class RateLimiter:
    """The limits of one application; `counters=None` (tests of other things) limits nothing."""

    def __init__(
        self,
        counters: Counters | None,
        limits: RateLimits,
        clock: Clock,
        registry: CollectorRegistry,
    ) -> None:
        self._counters = counters
        self._limits = limits
        self._clock = clock
        self._available = True
        self._limited = Counter(
            "skillet_api_rate_limited",
            "Requests answered 429 by the rate limiter, by reason (the error code)",
            ["reason"],
            registry=registry,
        )
        for reason in REASONS:
            self._limited.labels(reason=reason)
        self._failures = Counter(
            "skillet_api_auth_failures",
            "Failed authentications counted (wrong or revoked key, failed console sign-in)",
            registry=registry,
        )
        self._bypassed = Counter(
            "skillet_api_rate_limit_bypassed",
            "Requests let through unlimited because Redis was unavailable, slow or erroring",
            registry=registry,
        )

    def address_of(self, request: web.Request) -> str:
        forwarded = request.headers.getall("X-Forwarded-For", [])
        return client_address(request.remote, forwarded, self._limits.trusted_proxies)

    async def refuse_address(self, address: str) -> RateLimited | None:
        """The 429 of an address past its failures this minute; None while it may try."""
        limit = self._limits.auth_failures_per_minute
        if self._counters is None or limit == 0:
            return None
        now_s = self._clock().timestamp()
        count = await self._guarded(self._counters.read(self._auth_key(address, now_s)))
        if count is None or count < limit:
            return None
        self._limited.labels(reason=FAILED_AUTH).inc()
        return too_many_failed_auth(retry_after_s(now_s))

    async def record_failure(self, address: str) -> None:
        """One failed authentication of `address`."""
        if self._counters is None or self._limits.auth_failures_per_minute == 0:
            return
        self._failures.inc()
        key = self._auth_key(address, self._clock().timestamp())
        await self._guarded(self._counters.bump(key, KEY_TTL_S))

    async def refuse_key(self, prefix: str) -> RateLimited | None:
        """Counts one request of the key `prefix`; its 429 past the per-key limit."""
        limit = self._limits.key_requests_per_minute
        if self._counters is None or limit == 0:
            return None
        now_s = self._clock().timestamp()
        key = f"{self._limits.key_prefix}:key:{prefix}:{window_of(now_s)}"
        count = await self._guarded(self._counters.bump(key, KEY_TTL_S))
        if count is None or count <= limit:
            return None
        self._limited.labels(reason=KEY_REQUESTS).inc()
        return too_many_requests(limit, retry_after_s(now_s))

    def _auth_key(self, address: str, now_s: float) -> str:
        return f"{self._limits.key_prefix}:auth:{address}:{window_of(now_s)}"

    async def _guarded(self, call: Awaitable[int]) -> int | None:
        """The call's count; None (let the request through, counted) when Redis fails."""
        try:
            count = await call
        except (RedisError, OSError, TimeoutError) as exc:
            self._bypassed.inc()
            if self._available:
                self._available = False
                log.warning("api.rate_limit_unavailable", error=repr(exc)[:200])
            return None
        if not self._available:
            self._available = True
            log.info("api.rate_limit_restored")
        return count


LIMITER = web.AppKey("rate_limiter", RateLimiter)
