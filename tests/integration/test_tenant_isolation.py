"""Row-level security: a worker connection sees one org's rows, whatever a query forgets."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from core.db import create_pool
from core.tenancy import org_connection
from tests.integration.support import create_org, enqueue, payload, publish, run_burst
from worker.resources import Resources
from worker.settings import Settings


@pytest_asyncio.fixture(loop_scope="session")
async def app_pool(settings: Settings) -> AsyncIterator[Any]:
    """A pool exactly like the worker's: its group role, bindings reset between uses."""
    pool = await create_pool(settings.database_url, max_size=2, app_role="skillet_worker")
    yield pool
    await pool.close()


async def _two_orgs_with_history(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> tuple[uuid.UUID, uuid.UUID]:
    org_a = await create_org(db, "A")
    org_b = await create_org(db, "B")
    await publish(db, resources.store, org_a, "segredo-a", keywords=["frete"])
    await publish(db, resources.store, org_b, "frete-b", keywords=["frete"])
    await publish(db, resources.store, None, "catalogo", keywords=["x"], created_by="platform")
    await enqueue(settings, payload(org_a, "a1", "frete?"), payload(org_b, "b1", "frete?"))
    await run_burst(settings)
    return org_a, org_b


async def test_queries_without_an_org_filter_see_only_the_bound_org(
    settings: Settings, db: asyncpg.Connection, resources: Resources, app_pool: Any
) -> None:
    org_a, org_b = await _two_orgs_with_history(settings, db, resources)
    async with org_connection(app_pool, org_b) as conn:
        # Deliberately no `where organization_id = ...` anywhere below.
        orgs = {
            r["organization_id"] for r in await conn.fetch("select organization_id from messages")
        }
        assert orgs == {org_b}
        assert await conn.fetchval("select count(*) from outbox") == 1
        daily = await conn.fetch("select distinct organization_id from skill_activation_daily")
        assert [r["organization_id"] for r in daily] == [org_b]
        assert [r["id"] for r in await conn.fetch("select id from organizations")] == [org_b]
        names = sorted(r["name"] for r in await conn.fetch("select name from skill_versions"))
        assert names == ["catalogo", "frete-b"]  # its own and the platform catalog, never A's
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "insert into conversations (organization_id, channel, contact_id) "
                "values ($1, 'whatsapp', '5511')",
                org_a,
            )
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("select count(*) from schema_migrations")


async def test_an_unbound_connection_sees_nothing_and_bindings_do_not_leak(
    settings: Settings, db: asyncpg.Connection, resources: Resources, app_pool: Any
) -> None:
    org_a, _ = await _two_orgs_with_history(settings, db, resources)
    async with app_pool.acquire() as conn:
        assert await conn.fetchval("select count(*) from messages") == 0
        # The setting that opened every org in earlier releases no longer does.
        await conn.execute("select set_config('skillet.system', 'on', false)")
        assert await conn.fetchval("select count(*) from messages") == 0
    async with org_connection(app_pool, org_a) as conn:
        assert await conn.fetchval("select count(*) from messages") == 2
    for _ in range(2):  # the same pooled connections, after the org binding was released
        async with app_pool.acquire() as conn:
            assert await conn.fetchval("select count(*) from messages") == 0
            assert await conn.fetchval("select current_user") == "skillet_worker"


async def test_every_org_scoped_table_has_forced_row_level_security(
    db: asyncpg.Connection,
) -> None:
    unprotected = await db.fetch(
        """select c.relname from pg_class c
           join pg_namespace n on n.oid = c.relnamespace
           where n.nspname = 'public' and c.relkind = 'r'
             and not (c.relrowsecurity and c.relforcerowsecurity)
             and exists (select 1 from pg_attribute a where a.attrelid = c.oid
                         and a.attname = 'organization_id' and not a.attisdropped)"""
    )
    assert [r["relname"] for r in unprotected] == []
    # The owner's functions see every org through a policy of their own, nobody else's.
    without_system_policy = await db.fetch(
        """select c.relname from pg_class c
           join pg_namespace n on n.oid = c.relnamespace
           where n.nspname = 'public' and c.relkind = 'r' and c.relrowsecurity
             and not exists (select 1 from pg_policies p where p.schemaname = 'public'
                             and p.tablename = c.relname and p.policyname = 'system_access'
                             and p.roles = '{skillet_system}')"""
    )
    assert [r["relname"] for r in without_system_policy] == []
