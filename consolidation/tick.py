"""Consolidation inside the curator's tick: each org whose decay pass just ran, one at a time.

Never raises into the tick: an org's failure (the database, object storage, a backend, its
time budget) is logged and counted, and the next org goes on. Each org runs on a connection
bound to it (row-level security), and its report is written to the org's newest curator run
(curator_runs.consolidation), so `the curator run's report` says what consolidation did or
why it skipped; an org that did not opt in writes nothing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import structlog

from consolidation.gates import SkipReason
from consolidation.queries import update_curator_run_consolidation
from consolidation.run import ConsolidationConfig, consolidate_org
from core.object_store import ObjectStore
from core.tenancy import org_connection

log = structlog.get_logger(__name__)

# An org's whole cycle: a lexical cycle of 300 skills takes well under a second
# (bench/consolidation.py); an embeddings backend's calls have their own timeout inside it.
ORG_TIMEOUT_S = 60.0


async def consolidate_after_pass(
    pool: Any,
    store: ObjectStore,
    organization_ids: Sequence[uuid.UUID],
    config: ConsolidationConfig,
    *,
    now: datetime,
) -> dict[str, int]:
    """Counts of what happened: ran, skipped, failed, proposals."""
    counts = {"ran": 0, "skipped": 0, "failed": 0, "proposals": 0}
    for organization_id in organization_ids:
        try:
            async with (
                asyncio.timeout(ORG_TIMEOUT_S),
                org_connection(pool, organization_id) as conn,
            ):
                report = await consolidate_org(conn, store, organization_id, config, now=now)
                if report.skipped_reason != SkipReason.OFF:
                    await update_curator_run_consolidation(conn, organization_id, report.to_json())
        except Exception as exc:  # the tick outlives any org's consolidation: log and count
            counts["failed"] += 1
            log.error(
                "consolidation.failed",
                org=str(organization_id),
                error_code=getattr(exc, "code", type(exc).__name__),
                error=repr(exc)[:300],
            )
            continue
        if report.ran and report.skipped_reason is None:
            counts["ran"] += 1
            counts["proposals"] += len(report.proposals)
        elif report.skipped_reason != SkipReason.OFF:
            counts["skipped"] += 1
    return counts
