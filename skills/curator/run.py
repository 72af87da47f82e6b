"""A curator pass on Postgres: set-wise per chunk of orgs, locked, honest, never deleting.

Per chunk of orgs, in one transaction: the orgs' advisory locks, then ONE statement that
evaluates every installed skill (Postgres runs curator_next_state, the SQL twin of
skills.curator.rules.next_state, which stays the reference and is held equal to it by tests),
writes all transitions with a compare-and-set, bumps the orgs' catalog revisions once each,
and inserts the run reports; commit. A report is returned only after its commit, so
everything it lists is durable; any failure rolls the chunk back and raises
`CuratorRunError` listing only the reports committed before it. The cost is a fixed number of
statements per chunk plus work linear in its rows, and no Python per skill beyond reading the
report. Rows, versions and objects are never deleted: archiving is a state.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import structlog

from core.db_errors import DATABASE_ERRORS
from skills.curator.errors import CuratorRunError, OrganizationNotFound
from skills.curator.queries import (
    PassRows,
    fetch_organization_exists,
    list_organization_ids,
    lock_curator_orgs,
    preview_curator_pass,
    run_curator_pass,
)
from skills.curator.rules import CuratorPolicy, CuratorReport, report_from_json
from skills.curator.schedule import RunTrigger

log = structlog.get_logger(__name__)

CHANGED_RETRIES = 3  # attempts of a chunk whose rows keep changing under it
DEFAULT_CHUNK_ORGS = 1000  # orgs per transaction: bounds its size and the rows in memory


@dataclass(frozen=True)
class PassOptions:
    """How a pass runs: `now` is the curator's clock reading (cutoffs derive from it)."""

    now: datetime
    policy: CuratorPolicy = dataclasses.field(default_factory=CuratorPolicy)
    trigger: RunTrigger = RunTrigger.MANUAL
    replayed: bool = False  # `now` came from `--now`, not the clock
    dry_run: bool = False  # decide and report, write nothing (not even the run row)
    chunk_orgs: int = DEFAULT_CHUNK_ORGS


class _ChangedUnderUs(Exception):
    """A compare-and-set matched fewer rows than decided: roll back rather than misreport.

    Between the read and the write of a pass a turn may bump a skill's activity (or an
    operator pin or restore it); the decision for that skill may no longer hold, so the
    chunk is redone from a fresh read.
    """


_PASS_FAILURES: tuple[type[BaseException], ...] = (_ChangedUnderUs, *DATABASE_ERRORS)


async def run_curator(
    conn: asyncpg.Connection, organization_id: uuid.UUID, options: PassOptions
) -> CuratorReport:
    """One org's pass; raises OrganizationNotFound or CuratorRunError."""
    try:
        exists = await fetch_organization_exists(conn, organization_id)
    except DATABASE_ERRORS as exc:
        raise CuratorRunError(f"curator pass failed: {exc!r}"[:300]) from exc
    if not exists:
        raise OrganizationNotFound(f"organization {organization_id} does not exist")
    [report] = await run_curator_for(conn, [organization_id], options)
    return report


async def run_curator_all(conn: asyncpg.Connection, options: PassOptions) -> list[CuratorReport]:
    """A pass over every organization, in chunks."""
    try:
        organization_ids = await list_organization_ids(conn)
    except DATABASE_ERRORS as exc:
        raise CuratorRunError(f"curator pass failed: {exc!r}"[:300]) from exc
    return await run_curator_for(conn, organization_ids, options)


async def run_curator_for(
    conn: asyncpg.Connection, organization_ids: Sequence[uuid.UUID], options: PassOptions
) -> list[CuratorReport]:
    """Passes over the given orgs (sorted, chunked); reports in org id order."""
    ordered = sorted(set(organization_ids))
    saved: list[CuratorReport] = []
    for start in range(0, len(ordered), options.chunk_orgs):
        chunk = ordered[start : start + options.chunk_orgs]
        try:
            reports = await _run_chunk_with_retries(conn, chunk, options)
        except _PASS_FAILURES as exc:
            log.error(
                "curator.run_failed", orgs=len(chunk), saved=len(saved), error=repr(exc)[:300]
            )
            raise CuratorRunError(
                f"curator pass failed, nothing of it saved for {len(chunk)} org(s) "
                f"({len(saved)} saved before): {exc!r}"[:400],
                saved=saved,
            ) from exc
        saved.extend(reports)
    return saved


async def _run_chunk_with_retries(
    conn: asyncpg.Connection, chunk: Sequence[uuid.UUID], options: PassOptions
) -> list[CuratorReport]:
    """A turn or an operator touching a skill mid-pass makes the chunk roll back: redo it."""
    for attempt in range(1, CHANGED_RETRIES + 1):
        try:
            return await _run_chunk(conn, chunk, options)
        except _ChangedUnderUs as exc:
            if attempt == CHANGED_RETRIES:
                raise
            log.info("curator.chunk_retried", attempt=attempt, reason=str(exc))
    raise AssertionError("unreachable")


async def _run_chunk(
    conn: asyncpg.Connection, chunk: Sequence[uuid.UUID], options: PassOptions
) -> list[CuratorReport]:
    stale_cutoff, archive_cutoff = options.policy.cutoffs(options.now)
    if options.dry_run:
        # Not a read-only transaction: the pass function holds its writes, skipped here.
        async with conn.transaction(isolation="repeatable_read"):
            rows = await preview_curator_pass(
                conn, chunk, stale_cutoff=stale_cutoff, archive_cutoff=archive_cutoff
            )
        return _reports(rows)
    async with conn.transaction():
        await lock_curator_orgs(conn, chunk)
        rows = await run_curator_pass(
            conn,
            chunk,
            stale_cutoff=stale_cutoff,
            archive_cutoff=archive_cutoff,
            now=options.now,
            trigger=str(options.trigger),
            replayed=options.replayed,
        )
        if rows.moved != rows.planned:
            raise _ChangedUnderUs(f"{rows.moved} of {rows.planned} transitions still matched")
    reports = _reports(rows)
    log.info(
        "curator.transitioned",
        trigger=str(options.trigger),
        orgs=len(chunk),
        orgs_changed=sum(1 for r in reports if r.transitioned),
        transitions=rows.moved,
    )
    return reports


def _reports(rows: PassRows) -> list[CuratorReport]:
    return [report_from_json(org, moved, skipped) for org, moved, skipped in rows.reports]
