"""SQL of a rehearsal: the org's recent customer messages, a pending proposal's change, and
the per-org lock that lets one rehearsal run at a time (across processes)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from rehearsal.bursts import CustomerMessage
from skills.catalog_queries import VERSION_COLUMNS, pointed_version_of
from skills.models import LoadedSkill


def rehearsal_lock_key(organization_id: uuid.UUID) -> int:
    """The advisory-lock key (signed int64) of one org's rehearsals."""
    digest = hashlib.blake2b(f"skillet.rehearsal:{organization_id}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


TRY_LOCK_REHEARSAL = "select pg_try_advisory_lock($1)"
UNLOCK_REHEARSAL = "select pg_advisory_unlock($1)"


async def try_lock_rehearsal(conn: asyncpg.Connection, organization_id: uuid.UUID) -> bool:
    """Take the org's session-level rehearsal lock without waiting; the caller unlocks it
    (a pooled connection's reset unlocks it too: core.tenancy.RESET_BINDINGS)."""
    return bool(await conn.fetchval(TRY_LOCK_REHEARSAL, rehearsal_lock_key(organization_id)))


async def unlock_rehearsal(conn: asyncpg.Connection, organization_id: uuid.UUID) -> None:
    await conn.execute(UNLOCK_REHEARSAL, rehearsal_lock_key(organization_id))


# The newest through messages_org_inbound_created_idx, then in conversation and arrival order
# (how rehearsal.bursts groups them); each body cut to the characters the matcher can read of
# it (8 KiB of UTF-8 is at most 8,192 characters).
LIST_CUSTOMER_MESSAGES = """
select id, conversation_id, answered_by, body, at from (
    select id, conversation_id, answered_by, left(body, $4) as body,
           coalesce(received_at, created_at) as at
    from messages
    where organization_id = $1 and direction = 'inbound' and created_at >= $2 and body <> ''
    order by created_at desc, id desc
    limit $3
) m
order by conversation_id, at, id
"""


async def list_customer_messages(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    since: datetime,
    limit: int,
    max_chars: int,
) -> list[CustomerMessage]:
    """The org's customer messages received since `since`, the newest `limit` of them, in
    conversation and arrival order."""
    rows = await conn.fetch(LIST_CUSTOMER_MESSAGES, organization_id, since, limit, max_chars)
    return [CustomerMessage(r[0], r[1], r[2], r[3], r[4]) for r in rows]


@dataclass(frozen=True)
class ProposalChange:
    umbrella: LoadedSkill  # the version approval points the umbrella's name to
    absorbed: tuple[str, ...]  # archived by the approval


FETCH_PENDING_PROPOSAL = f"""
select {VERSION_COLUMNS},
       array(select m.name from skill_proposal_members m
             where m.proposal_id = s.id and m.role = 'absorbed' order by m.name) as absorbed
from skill_proposals s join skill_versions v on v.id = s.version_id
where s.organization_id = $1 and s.id = $2 and s.status = 'pending'
"""


async def fetch_pending_proposal(
    conn: asyncpg.Connection, organization_id: uuid.UUID, proposal_id: uuid.UUID
) -> ProposalChange | None:
    """What approving the pending proposal would install and archive (None: no such one)."""
    row = await conn.fetchrow(FETCH_PENDING_PROPOSAL, organization_id, proposal_id)
    if row is None:
        return None
    version = pointed_version_of(row)
    umbrella = LoadedSkill(
        version_id=version.version_id,
        name=version.name,
        description=version.description,
        body=version.body,
        matcher=version.matcher,
        manifest=version.manifest,
        created_by=version.created_by,
    )
    return ProposalChange(umbrella, tuple(row["absorbed"]))
