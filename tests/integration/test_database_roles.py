"""Least privilege: the processes log in as users who own nothing and are
members of one group role each; neither a session setting nor RESET ROLE opens other orgs."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import pytest_asyncio

from cli.main import main
from core.db import with_database
from core.tenancy import BIND_ORGANIZATION
from core.tenant_key import TenantKey
from tests.integration.conftest import ADMIN_DATABASE_URL, TENANT_SECRET
from tests.integration.support import create_org, enqueue, payload, publish, run_burst
from worker.db_logins import scram_sha256_verifier
from worker.resources import Resources
from worker.settings import Settings

PASSWORDS = {
    "SKILLET_WORKER_DB_PASSWORD": "0123456789abcdef-worker",
    "SKILLET_WEBHOOK_DB_PASSWORD": "0123456789abcdef-webhook",
    "SKILLET_API_DB_PASSWORD": "0123456789abcdef-api",
}


def _as_user(url: str, user: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}"))


@pytest.fixture
def logins(env: Settings, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`skillet migrate` with the three passwords set: login URLs by process (this machine's
    Postgres trusts loopback, so the URLs carry no password)."""
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    assert main(["migrate", "--json"]) == 0
    return {
        p: _as_user(env.database_url, f"skillet_{p}_login") for p in ("worker", "webhook", "api")
    }


@pytest_asyncio.fixture(loop_scope="session")
async def worker_login(logins: dict[str, str]) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(logins["worker"])
    yield conn
    await conn.close()


async def _two_orgs(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> tuple[uuid.UUID, uuid.UUID]:
    org_a, org_b = await create_org(db, "A"), await create_org(db, "B")
    await publish(db, resources.store, org_a, "frete", keywords=["frete"])
    await enqueue(settings, payload(org_a, "a1", "frete?"), payload(org_b, "b1", "oi"))
    await run_burst(settings)
    return org_a, org_b


async def _orgs_seen(conn: asyncpg.Connection) -> set[uuid.UUID]:
    rows = await conn.fetch("select organization_id from messages")
    return {r["organization_id"] for r in rows}


async def test_neither_the_system_setting_nor_reset_role_opens_other_orgs(
    settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    logins: dict[str, str],
    worker_login: asyncpg.Connection,
) -> None:
    org_a, org_b = await _two_orgs(settings, db, resources)
    conn = worker_login
    assert await _orgs_seen(conn) == set()  # no org bound: nothing
    await conn.execute("select set_config('skillet.system', 'on', false)")
    assert await _orgs_seen(conn) == set()
    # The org alone, set by hand, opens nothing (skillet_org_proof_valid): it takes the org's proof.
    await conn.execute("select set_config('skillet.organization_id', $1, false)", str(org_a))
    assert await _orgs_seen(conn) == set()
    await conn.execute(
        BIND_ORGANIZATION, str(org_a), TenantKey.from_setting(TENANT_SECRET).proof(org_a)
    )
    await conn.execute("reset role")
    await conn.execute("set role none")
    assert await conn.fetchval("select current_user") == "skillet_worker_login"
    assert await _orgs_seen(conn) == {org_a}
    for role in ("postgres", "skillet_system", "skillet_api"):
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(f"set role {role}")
    assert await conn.execute(
        "update messages set body = 'x' where organization_id = $1", org_b
    ) == ("UPDATE 0")
    with pytest.raises(asyncpg.InsufficientPrivilegeError):  # the policy's check
        await conn.execute(
            "insert into conversations (organization_id, channel, contact_id)"
            " values ($1, 'whatsapp', '5511')",
            org_b,
        )
    assert await db.fetchval("select count(*) from messages where body = 'x'") == 0


async def test_a_login_owns_nothing_and_reaches_only_its_grants(
    logins: dict[str, str], worker_login: asyncpg.Connection
) -> None:
    conn = worker_login
    owned = await conn.fetchval(
        "select count(*) from pg_class where relowner = (select oid from pg_roles"
        " where rolname = current_user)"
    )
    assert owned == 0
    assert not await conn.fetchval(
        "select rolsuper or rolcreaterole or rolcreatedb or rolbypassrls from pg_roles"
        " where rolname = current_user"
    )
    refused = (
        "select * from api_keys",
        "select * from schema_migrations",
        "select * from channel_waha_keys",
        "select * from dead_letters",
        "select * from console_sessions",
        "create table leak (id int)",
        "select * from skillet_api_key_lookup('x', 'x'::bytea)",
        "select * from skillet_channel_by_address('waha', 'x')",
    )
    for statement in refused:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetch(statement)
    webhook = await asyncpg.connect(logins["webhook"])
    try:
        for statement in (
            "select * from skillet_curator_schedule()",
            "select * from skillet_conversations_waiting(0, 10)",
            "select * from skillet_echoes_pending_since(0, 10)",
            "select skillet_prune_org_events(30, 10)",
            "select skillet_record_dead_letter('j', 'f', '{}', 'c', 'e', 1, null)",
            "select * from skill_versions",
        ):
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await webhook.fetch(statement)
    finally:
        await webhook.close()


async def test_the_worker_answers_logged_in_as_its_login(
    settings: Settings, db: asyncpg.Connection, resources: Resources, logins: dict[str, str]
) -> None:
    """The grants are enough for a whole turn, the sweeps and the curator as a real login."""
    org = await create_org(db)
    await publish(db, resources.store, org, "frete", keywords=["frete"], created_by="agent")
    as_login = settings.model_copy(update={"database_url": logins["worker"]})
    await enqueue(as_login, payload(org, "m1", "qual o frete?"))
    worker = await run_burst(as_login)
    assert worker.jobs_failed == 0
    reply = await db.fetchrow("select status, body from outbox where organization_id = $1", org)
    assert reply is not None and reply["status"] == "sent"
    conn = await asyncpg.connect(logins["worker"])
    try:
        assert await conn.fetch("select * from skillet_conversations_waiting(0, 10)") == []
        assert await conn.fetch("select * from skillet_fail_abandoned_claims(3600)") == []
        assert await conn.fetch("select * from skillet_echoes_pending_since(0, 10)") == []
        assert await conn.fetchval("select skillet_prune_org_events(30, 10)") == 0
        schedule = await conn.fetch("select * from skillet_curator_schedule()")
        assert org in {r["organization_id"] for r in schedule}
    finally:
        await conn.close()


async def test_the_password_verifier_is_the_one_postgres_computes(db: asyncpg.Connection) -> None:
    name = f"skillet_scram_{uuid.uuid4().hex[:8]}"
    password = "correct-horse-battery-staple"
    async with db.transaction():
        await db.execute("set local password_encryption = 'scram-sha-256'")
        await db.execute(f"create role {name} password '{password}'")
        stored: str = await db.fetchval(
            "select rolpassword from pg_authid where rolname = $1", name
        )
        await db.execute(f"drop role {name}")
    iterations, salt = stored.split("$")[1].split(":")
    ours = scram_sha256_verifier(password, salt=base64.b64decode(salt), iterations=int(iterations))
    assert ours == stored


@pytest.fixture
def empty_database(settings: Settings) -> Iterator[str]:
    name = f"skillet_roles_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'create database "{name}"'))
    yield with_database(settings.database_url, name)
    asyncio.run(_admin(f'drop database if exists "{name}" with (force)'))


async def _admin(statement: str) -> None:
    admin = await asyncpg.connect(ADMIN_DATABASE_URL)
    try:
        await admin.execute(statement)
    finally:
        await admin.close()


def test_a_bad_password_stops_migrate_before_anything_changes(
    empty_database: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLET_OWNER_DATABASE_URL", empty_database)
    monkeypatch.setenv("DATABASE_URL", _as_user(empty_database, "skillet_worker_login"))
    monkeypatch.setenv("SKILLET_API_DB_PASSWORD", "short")
    assert main(["migrate", "--json"]) != 0
    error = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert error["error"] == "login_password_rejected"
    assert "SKILLET_API_DB_PASSWORD" in error["message"] and "short" not in error["message"]
    assert asyncio.run(_migrations_table(empty_database)) is None


async def _migrations_table(url: str) -> str | None:
    conn = await asyncpg.connect(url)
    try:
        found: str | None = await conn.fetchval("select to_regclass('public.schema_migrations')")
        return found
    finally:
        await conn.close()


async def test_tables_added_later_are_granted_to_nobody_by_default(db: asyncpg.Connection) -> None:
    """Each migration grants its tables to the groups that use them; 0006's default grant to
    the retired skillet_app would hand every new table to it."""
    defaults = await db.fetch("select defaclacl::text as acl from pg_default_acl")
    assert [r["acl"] for r in defaults if "skillet_app" in r["acl"]] == []
