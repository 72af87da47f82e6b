"""Connections bound to one tenant for row-level security.

Each process's pool runs as its group role (`skillet_worker`, `skillet_webhook`,
`skillet_api`: core.db_roles, migration 0020), none of which may see another org's rows, so
every org-scoped row is filtered by the org bound here, whatever the query forgets. The
pool's reset clears the binding before a connection is reused. Work that spans orgs (sweeps,
the curator, dead letters, telemetry) calls the narrow functions of migration 0020 instead.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

BIND_ORGANIZATION = "select set_config('skillet.organization_id', $1, false)"
# What a pooled connection must forget before its next user (asyncpg's default reset, plus
# our bindings; no RESET ALL, which would also drop the SET ROLE of the pool's init).
RESET_BINDINGS = """
select pg_advisory_unlock_all(),
       set_config('skillet.organization_id', '', false);
close all;
"""


@asynccontextmanager
async def org_connection(
    pool: Any, organization_id: uuid.UUID
) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection that sees only `organization_id`'s rows (and the platform catalog)."""
    async with pool.acquire() as conn:
        await conn.execute(BIND_ORGANIZATION, str(organization_id))
        yield conn


async def reset_bindings(conn: asyncpg.Connection) -> None:
    await conn.execute(RESET_BINDINGS)
