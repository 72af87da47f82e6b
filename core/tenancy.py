"""Connections bound to one tenant (or explicitly to system work) for row-level security.

The worker's pool runs as the non-owner role `skillet_app` (see migration 0006), so every
org-scoped row is filtered by the org bound here, whatever the query forgets. The pool's
reset clears the binding before a connection is reused.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

BIND_ORGANIZATION = "select set_config('skillet.organization_id', $1, false)"
BIND_SYSTEM = "select set_config('skillet.system', 'on', false)"
# What a pooled connection must forget before its next user (asyncpg's default reset, plus
# our bindings; no RESET ALL, which would also drop the SET ROLE of the pool's init).
RESET_BINDINGS = """
select pg_advisory_unlock_all(),
       set_config('skillet.organization_id', '', false),
       set_config('skillet.system', '', false);
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


@asynccontextmanager
async def system_connection(pool: Any) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection for deliberate cross-org work (curator, telemetry, dead letters)."""
    async with pool.acquire() as conn:
        await conn.execute(BIND_SYSTEM)
        yield conn


async def reset_bindings(conn: asyncpg.Connection) -> None:
    await conn.execute(RESET_BINDINGS)
