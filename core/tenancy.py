"""Connections bound to one tenant for row-level security.

Each process's pool runs as its group role (`skillet_worker`, `skillet_webhook`,
`skillet_api`: core.db_roles), none of which may see another org's rows, so
every org-scoped row is filtered by the org bound here, whatever the query forgets. A
binding is the org and its proof (core.tenant_key, skillet_current_org): a statement that sets the
org by hand, without the proof only the process can compute, sees no org row. The
pool's reset clears the binding before a connection is reused. Work that spans orgs (sweeps,
the curator, dead letters, telemetry) calls narrow SECURITY DEFINER functions instead
(skillet_curator_pass, skillet_record_dead_letter, skillet_record_activations, ...).

The turn's hot path binds differently: its statements are functions that bind their org
transaction-locally (skillet_bind_org), so a `self_bound_connection` costs no bind before them
and no reset after them: nothing they set outlives the statement. They run as the role
skillet_bound and bind first, so inside them the policies trust the bound org without
recomputing its proof for every table of every statement (skillet_current_org).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from core.tenant_key import TenantKey

BIND_ORGANIZATION = """
select set_config('skillet.organization_id', $1, false),
       set_config('skillet.organization_proof', $2, false)
"""
# What a pooled connection must forget before its next user (asyncpg's default reset, plus
# our bindings; no RESET ALL, which would also drop the SET ROLE of the pool's init).
RESET_BINDINGS = """
select pg_advisory_unlock_all(),
       set_config('skillet.organization_id', '', false),
       set_config('skillet.organization_proof', '', false);
close all;
"""


@asynccontextmanager
async def org_connection(
    pool: Any, organization_id: uuid.UUID
) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection that sees only `organization_id`'s rows (and the platform catalog)."""
    async with pool.acquire() as conn:
        await conn.execute(
            BIND_ORGANIZATION, str(organization_id), org_proof(conn, organization_id)
        )
        yield conn


def org_proof(conn: asyncpg.Connection, organization_id: uuid.UUID) -> str:
    """The proof a statement on `conn` binds `organization_id` with (skillet_current_org
    checks it). A connection of a pool without a group role (the owner's: it sees every org
    through its own policy) has no key and binds with an empty proof."""
    key: TenantKey | None = getattr(conn, "tenant_key", None)
    return "" if key is None else key.proof(organization_id)


@asynccontextmanager
async def self_bound_connection(pool: Any) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection bound to no one, for statements that bind their org themselves,
    transaction-locally, with the proof they are given (`skillet_bind_org`; anything else sees
    no org row).
    When the block ends without an error the pool skips its reset: such statements leave
    nothing in the session. An error (or a connection of another pool) resets as usual."""
    async with pool.acquire() as conn:
        yield conn
        skip = getattr(conn, "skip_next_reset", None)  # a TenantConnection (core.db)
        if skip is not None:
            skip()


class TenantConnection(asyncpg.Connection):  # type: ignore[misc]  # asyncpg is untyped
    """A pooled connection that knows when its last use left nothing to reset."""

    __slots__ = ("_reset_skippable", "tenant_key")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reset_skippable = False
        self.tenant_key: TenantKey | None = None  # set by the pool's init (core.db)

    def skip_next_reset(self) -> None:
        """Only self_bound_connection says so, after statements that bound nothing beyond
        their own transaction."""
        self._reset_skippable = True

    def take_reset_skip(self) -> bool:
        skippable, self._reset_skippable = self._reset_skippable, False
        return skippable


async def reset_bindings(conn: asyncpg.Connection) -> None:
    """The pool's reset: forget the org binding and advisory locks, unless the
    connection's last use was a self-bound one (one round trip fewer per turn step)."""
    if isinstance(conn, TenantConnection) and conn.take_reset_skip():
        return
    await conn.execute(RESET_BINDINGS)
