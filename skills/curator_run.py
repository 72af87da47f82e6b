"""A curator pass on Postgres: set-wise per chunk of orgs, locked, honest, never deleting.

Per chunk, in one transaction: the orgs' advisory locks, row locks on their usage rows, one
read of every installed skill, the pure decisions, one UPDATE for all transitions, one INSERT
of the run reports, commit. A report is returned only after its commit, so everything it
lists is durable; any failure rolls the chunk back and raises `CuratorRunError` listing only
the reports committed before it. Cost is a fixed number of statements per chunk plus work
linear in its rows. Rows, versions and objects are never deleted: archiving is a state.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import structlog

from skills.curator import CuratorPolicy, CuratorReport, plan_report
from skills.curator_errors import DATABASE_ERRORS, CuratorRunError, OrganizationNotFound
from skills.curator_queries import (
    RunRow,
    fetch_organization_exists,
    insert_curator_runs,
    list_curator_records,
    list_organization_ids,
    lock_curator_orgs,
    lock_usage_rows,
    update_usage_states,
)
from skills.curator_schedule import RunTrigger

log = structlog.get_logger(__name__)

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
    """A compare-and-set matched fewer rows than decided: roll back rather than misreport."""


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
            reports = await _run_chunk(conn, chunk, options)
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


async def _run_chunk(
    conn: asyncpg.Connection, chunk: Sequence[uuid.UUID], options: PassOptions
) -> list[CuratorReport]:
    stale_cutoff, archive_cutoff = options.policy.cutoffs(options.now)
    if options.dry_run:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            records = await list_curator_records(conn, chunk)
        return [plan_report(org, records[org], stale_cutoff, archive_cutoff) for org in chunk]
    async with conn.transaction():
        await lock_curator_orgs(conn, chunk)
        await lock_usage_rows(conn, chunk)
        records = await list_curator_records(conn, chunk)
        reports = [plan_report(org, records[org], stale_cutoff, archive_cutoff) for org in chunk]
        pairs = [(r.organization_id, t) for r in reports for t in r.transitioned]
        if pairs:
            changed = await update_usage_states(conn, pairs, options.now)
            if changed != len(pairs):
                raise _ChangedUnderUs(f"{changed} of {len(pairs)} transitions matched")
        await insert_curator_runs(
            conn,
            [_run_row(r) for r in reports],
            trigger=str(options.trigger),
            ran_at=options.now,
            replayed=options.replayed,
            stale_cutoff=stale_cutoff,
            archive_cutoff=archive_cutoff,
        )
    for report in reports:
        if report.transitioned:
            log.info(
                "curator.transitioned",
                organization_id=str(report.organization_id),
                trigger=str(options.trigger),
                transitions=[f"{t.name}:{t.from_state}->{t.to_state}" for t in report.transitioned],
            )
    return reports


def _run_row(report: CuratorReport) -> RunRow:
    doc = report.to_json()
    return RunRow(
        organization_id=report.organization_id,
        transitioned=json.dumps(doc["transitioned"], ensure_ascii=False),
        skipped=json.dumps(doc["skipped"], ensure_ascii=False),
    )
