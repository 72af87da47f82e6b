"""At most one turn per conversation across all workers: a Redis lease with a fencing token.

`SET key token NX PX ttl` acquires; a background task renews it (compare-and-pexpire) while
the turn runs; release is compare-and-delete, so a holder whose lease expired can never
delete its successor's. A crashed holder's lease simply expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import structlog

log = structlog.get_logger(__name__)

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""

# Release (compare-and-delete) and, in the same round trip, how much still waits in the
# conversation's mailbox (KEYS[2]; 0 when not given).
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('del', KEYS[1])
end
if KEYS[2] then
    return redis.call('zcard', KEYS[2])
end
return 0
"""


@dataclass
class Lease:
    key: str
    token: str
    ttl_ms: int
    lost: bool = field(default=False)
    # Set on release when the holder named a mailbox: messages still waiting at that moment.
    waiting_after_release: int = field(default=0)


class ConversationLeases:
    """Acquire, keep alive and release per-conversation leases on one Redis client."""

    def __init__(self, redis: Any, *, ttl_ms: int = 30_000) -> None:
        self._redis = redis
        self._ttl_ms = ttl_ms

    async def acquire(self, key: str) -> Lease | None:
        token = secrets.token_hex(16)
        if await self._redis.set(key, token, nx=True, px=self._ttl_ms):
            return Lease(key, token, self._ttl_ms)
        return None

    async def remaining_ms(self, key: str) -> int:
        """Time left on someone's lease (0 when free)."""
        return max(0, int(await self._redis.pttl(key)))

    async def release(self, lease: Lease, waiting_key: str | None = None) -> None:
        keys = [lease.key] if waiting_key is None else [lease.key, waiting_key]
        lease.waiting_after_release = int(
            await self._redis.eval(_RELEASE, len(keys), *keys, lease.token)
        )

    async def _renew(self, lease: Lease) -> bool:
        return bool(await self._redis.eval(_RENEW, 1, lease.key, lease.token, lease.ttl_ms))

    @contextlib.asynccontextmanager
    async def kept_alive(
        self, lease: Lease, waiting_key: str | None = None
    ) -> AsyncIterator[Lease]:
        """Renew every third of the TTL until the block exits, then release (and count what
        waits under `waiting_key`, into `lease.waiting_after_release`)."""
        task = asyncio.create_task(self._keep_alive(lease))
        try:
            yield lease
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            try:
                await self.release(lease, waiting_key)
            except Exception:  # an unreleased lease just expires; assume work may wait
                lease.waiting_after_release = 1

    async def _keep_alive(self, lease: Lease) -> None:
        while True:
            await asyncio.sleep(lease.ttl_ms / 3000)
            try:
                renewed = await self._renew(lease)
            except Exception as exc:  # Redis blinked: keep trying until the TTL runs out
                log.warning("lease.renew_failed", key=lease.key, error=repr(exc)[:200])
                continue
            if not renewed:
                # Expired and maybe taken: the commit-time fence in Postgres still protects
                # order and uniqueness; stop renewing someone else's lease.
                lease.lost = True
                log.warning("lease.lost", key=lease.key)
                return
