"""Read-only SQL for `skillet status`: dead letters and the curator's last run per org.

Cross-org reads: the caller passes the owner's connection (a member of skillet_system,
which the system_access policies let read every org). Payloads are never selected: they hold
the customer's message and phone number.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

FETCH_DEAD_LETTER_COUNTS = """
select count(*) as total,
       count(*) filter (where created_at > now() - interval '24 hours') as last_24h
from dead_letters
"""

LIST_DEAD_LETTER_CODES = """
select error_code, count(*) as count from dead_letters
group by error_code order by count(*) desc, error_code
limit $1
"""

LIST_RECENT_DEAD_LETTERS = """
select id, job_id, function, error_code, tries, created_at
from dead_letters order by id desc limit $1
"""


@dataclass(frozen=True)
class DeadLetterCounts:
    total: int
    last_24h: int
    by_code: dict[str, int]


@dataclass(frozen=True)
class DeadLetterRow:
    id: int
    job_id: str
    function: str
    error_code: str
    tries: int
    created_at: datetime


async def fetch_dead_letter_counts(conn: asyncpg.Connection, *, codes: int) -> DeadLetterCounts:
    row = await conn.fetchrow(FETCH_DEAD_LETTER_COUNTS)
    assert row is not None
    code_rows = await conn.fetch(LIST_DEAD_LETTER_CODES, codes)
    return DeadLetterCounts(
        total=int(row["total"]),
        last_24h=int(row["last_24h"]),
        by_code={r["error_code"]: int(r["count"]) for r in code_rows},
    )


async def list_recent_dead_letters(conn: asyncpg.Connection, *, limit: int) -> list[DeadLetterRow]:
    rows = await conn.fetch(LIST_RECENT_DEAD_LETTERS, limit)
    return [DeadLetterRow(**dict(r)) for r in rows]


FETCH_CURATOR_COVERAGE = """
select (select count(*) from organizations) as organizations,
       (select count(*) from organizations o
         where not exists (select 1 from curator_runs r
                           where r.organization_id = o.id and not r.replayed)) as never_run
"""

# Scheduled and manual runs (not `--now` replays), newest org first; the index
# curator_runs_org_idx (organization_id, ran_at) where not replayed serves it.
LIST_LAST_CURATOR_RUNS = """
select distinct on (organization_id)
       organization_id, ran_at, trigger, json_array_length(transitioned) as transitioned
from curator_runs where not replayed
order by organization_id, ran_at desc, id desc
"""

LIST_LAST_CURATOR_RUNS_NEWEST = f"""
select * from ({LIST_LAST_CURATOR_RUNS}) last_runs
order by ran_at desc, organization_id
limit $1
"""


@dataclass(frozen=True)
class CuratorCoverage:
    organizations: int
    never_run: int


@dataclass(frozen=True)
class LastCuratorRun:
    organization_id: uuid.UUID
    ran_at: datetime
    trigger: str
    transitioned: int


async def fetch_curator_coverage(conn: asyncpg.Connection) -> CuratorCoverage:
    row = await conn.fetchrow(FETCH_CURATOR_COVERAGE)
    assert row is not None
    return CuratorCoverage(organizations=int(row["organizations"]), never_run=int(row["never_run"]))


async def list_last_curator_runs(conn: asyncpg.Connection, *, limit: int) -> list[LastCuratorRun]:
    rows = await conn.fetch(LIST_LAST_CURATOR_RUNS_NEWEST, limit)
    return [LastCuratorRun(**dict(r)) for r in rows]


FETCH_OUTBOX_PENDING = """
select count(*) as pending,
       count(*) filter (where delivery_claimed_at is not null) as sending,
       min(created_at) as oldest
from outbox where status = 'pending'
"""

# last_error is `code: reason`.
LIST_OUTBOX_FAILURES = """
select split_part(last_error, ':', 1) as code, count(*) as count from outbox
where status = 'failed' and created_at > now() - interval '24 hours'
group by 1 order by count(*) desc, 1
limit $1
"""


# Sent, then reported failed by the provider (a receipt's error starts with Meta's code).
LIST_UNDELIVERED = """
select split_part(coalesce(error, 'unknown'), ' ', 1) as code, count(*) as count
from outbox_receipts
where status = 'failed' and updated_at > now() - interval '24 hours'
group by 1 order by count(*) desc, 1
limit $1
"""


@dataclass(frozen=True)
class OutboxCounts:
    pending: int  # replies committed, not yet sent
    sending: int  # of those, claimed by a sender (the sweep fails abandoned ones)
    oldest_pending: datetime | None
    failed_24h: dict[str, int]  # failure code -> replies in the last 24 hours
    undelivered_24h: dict[str, int]  # provider error code -> messages sent, then failed


async def fetch_outbox_counts(conn: asyncpg.Connection, *, codes: int) -> OutboxCounts:
    row = await conn.fetchrow(FETCH_OUTBOX_PENDING)
    assert row is not None
    failures = await conn.fetch(LIST_OUTBOX_FAILURES, codes)
    undelivered = await conn.fetch(LIST_UNDELIVERED, codes)
    return OutboxCounts(
        pending=int(row["pending"]),
        sending=int(row["sending"]),
        oldest_pending=row["oldest"],
        failed_24h={r["code"]: int(r["count"]) for r in failures},
        undelivered_24h={r["code"]: int(r["count"]) for r in undelivered},
    )


LIST_TOKENS_TODAY = """
select provider, model, sum(turns) as turns, sum(input_tokens) as input_tokens,
       sum(output_tokens) as output_tokens, sum(cache_read_tokens) as cache_read_tokens,
       sum(unreported_turns) as unreported_turns
from token_usage_daily
where day = (now() at time zone 'UTC')::date
group by provider, model
order by sum(input_tokens) + sum(output_tokens) desc, provider, model
"""


@dataclass(frozen=True)
class TokensToday:
    """Every org's turns of today (UTC) for one provider and model, written by reply commits."""

    provider: str
    model: str
    turns: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    unreported_turns: int  # turns whose provider sent no count (not in the sums)

    def to_json(self) -> dict[str, object]:
        return dict(vars(self))


async def list_tokens_today(conn: asyncpg.Connection) -> list[TokensToday]:
    rows = await conn.fetch(LIST_TOKENS_TODAY)
    return [
        TokensToday(
            r["provider"],
            r["model"],
            int(r["turns"]),
            int(r["input_tokens"]),
            int(r["output_tokens"]),
            int(r["cache_read_tokens"]),
            int(r["unreported_turns"]),
        )
        for r in rows
    ]


LIST_CHANNELS_NEEDING_TOKEN = """
select organization_id, kind, address from channels where status = 'needs_token'
order by organization_id, kind, address
limit 100
"""


async def list_channels_needing_token(conn: asyncpg.Connection) -> list[dict[str, str]]:
    """Numbers whose own token Meta refused (their replies wait for a new one), at most 100."""
    rows = await conn.fetch(LIST_CHANNELS_NEEDING_TOKEN)
    return [
        {"organization_id": str(r["organization_id"]), "kind": r["kind"], "address": r["address"]}
        for r in rows
    ]
