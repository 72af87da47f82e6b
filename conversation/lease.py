"""At most one holder per conversation across all workers: a lease on the conversation row.

One UPDATE takes it (a fresh token, `lease_until` = now + TTL) when it is free or expired
(`take` reads the first burst in the same statement); a background task renews it every
third of the TTL; the holder releases it only when no message waits (one statement, so a
message committed meanwhile is either seen by the holder or finds the lease free). The
reply commit checks the token, so a holder whose lease ran out cannot commit over its
successor. A crashed holder's lease simply expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import structlog

from conversation.queries import BurstRead, take_conversation
from core.tenancy import org_connection, self_bound_connection

log = structlog.get_logger(__name__)

RENEW = """
update conversations set lease_until = now() + make_interval(secs => $3)
where id = $1 and lease_token = $2
"""
# Given up on the way out (the holder is done or failing): free it for the next job.
ABANDON = """
update conversations set lease_token = null, lease_until = null
where id = $1 and lease_token = $2
"""


@dataclass
class Lease:
    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    token: uuid.UUID
    channel: str
    contact_id: str
    undelivered: bool = False  # a committed reply waits to be handed to its channel
    lost: bool = field(default=False)
    # The customer's WhatsApp profile name as the take read it (None: none known).
    contact_name: str | None = None


class ConversationLeases:
    """Take, keep alive and give up conversation leases, each on a pooled connection of its
    own. Letting go when nothing waits is the holder's continue step
    (conversation.queries.continue_conversation, skillet_release_lease)."""

    def __init__(self, pool: Any, *, ttl_s: float = 30.0) -> None:
        self._pool = pool
        self._ttl_s = ttl_s

    async def take(
        self,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        *,
        limit: int,
        history_limit: int,
    ) -> tuple[Lease, BurstRead | None] | None:
        """The lease and the first burst in one statement (None: held by someone else); no
        burst when a committed reply waits to be delivered first."""
        token = uuid.uuid4()
        async with self_bound_connection(self._pool) as conn:
            taken = await take_conversation(
                conn,
                organization_id,
                conversation_id,
                token,
                ttl_s=self._ttl_s,
                limit=limit,
                history_limit=history_limit,
            )
        if taken is None:
            return None
        lease = Lease(
            organization_id,
            conversation_id,
            token,
            taken.channel,
            taken.contact_id,
            undelivered=taken.undelivered,
            contact_name=taken.contact_name,
        )
        return lease, None if taken.undelivered else taken.burst

    async def abandon(self, lease: Lease) -> None:
        async with org_connection(self._pool, lease.organization_id) as conn:
            await conn.execute(ABANDON, lease.conversation_id, lease.token)

    async def _renew(self, lease: Lease) -> bool:
        async with org_connection(self._pool, lease.organization_id) as conn:
            status: str = await conn.execute(RENEW, lease.conversation_id, lease.token, self._ttl_s)
        return status.endswith(" 1")

    @contextlib.asynccontextmanager
    async def kept_alive(self, lease: Lease) -> AsyncIterator[Lease]:
        """Renew every third of the TTL until the block exits; a block that fails gives the
        lease up (so the next job or sweep need not wait for it to expire)."""
        task = asyncio.create_task(self._keep_alive(lease))
        try:
            yield lease
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.abandon(lease))
            raise
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _keep_alive(self, lease: Lease) -> None:
        while True:
            await asyncio.sleep(self._ttl_s / 3)
            try:
                renewed = await self._renew(lease)
            except Exception as exc:  # Postgres blinked: keep trying until the TTL runs out
                log.warning("lease.renew_failed", error=repr(exc)[:200])
                continue
            if not renewed:
                # Expired and taken: the commit's token check refuses this holder's reply.
                lease.lost = True
                log.warning("lease.lost", conversation_id=str(lease.conversation_id))
                return
