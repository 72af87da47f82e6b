"""SQL of a turn while its org is closed: with after-hours `away`, the away message once per
closed period, then the burst kept as context (skillet_commit_away); after a
handoff, the wait notice skipped (the acknowledgement said when someone will be there)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from conversation.mode import Transition
from conversation.mode_queries import change_mode
from conversation.queries import CommittedTurn, committed_turn
from core.tenancy import org_proof

COMMIT_AWAY = """
select outcome, outbox_id, reply_id, deliverable,
       reply_to_external_id, last_inbound_at, route_kind, route_address
from skillet_commit_away($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
"""


@dataclass(frozen=True)
class AwayCommit:
    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    channel: str
    batch_ids: Sequence[uuid.UUID]
    first_received_at: datetime
    body: str  # the away message
    at: datetime
    lease_token: uuid.UUID | None
    period: datetime  # the closed period's name: its next opening


async def commit_away(conn: asyncpg.Connection, commit: AwayCommit) -> CommittedTurn:
    """The away message as the burst's fenced reply (outcomes as skillet_commit_turn's), or,
    sent already this period, the burst kept as context (`kept`), in one statement."""
    org = commit.organization_id
    row = await conn.fetchrow(
        COMMIT_AWAY,
        org,
        org_proof(conn, org),
        commit.conversation_id,
        commit.channel,
        list(commit.batch_ids),
        commit.first_received_at,
        commit.body,
        commit.at,
        commit.lease_token,
        commit.period,
    )
    assert row is not None  # the function always returns its one row
    return committed_turn(row)


async def skip_wait_notice(conn: asyncpg.Connection, conversation_id: uuid.UUID) -> None:
    """A handoff acknowledged after hours said when a person will be there: the "still
    calling someone" notice (jobs.handoff_tick) would contradict it, so none is sent."""
    await change_mode(conn, conversation_id, Transition.WAIT_NOTICE)
