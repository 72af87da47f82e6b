"""The skill editor's migration on a database with history: each existing version's
`created_via` and the key that imported or installed it, backfilled from what the rows
already say."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest_asyncio

from core.db import connect, with_database
from tests.integration.conftest import ADMIN_DATABASE_URL
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

EDITOR_MIGRATION = "0046_skill_editor.sql"


@pytest_asyncio.fixture(loop_scope="session")
async def empty_db() -> AsyncIterator[asyncpg.Connection]:
    name = f"skillet_editor_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(ADMIN_DATABASE_URL)
    await admin.execute(f'create database "{name}"')
    conn = await connect(with_database(ADMIN_DATABASE_URL, name))
    yield conn
    await conn.close()
    await admin.execute(f'drop database "{name}" with (force)')
    await admin.close()


async def _version(
    db: asyncpg.Connection, org: uuid.UUID | None, created_by: str, fork: uuid.UUID | None = None
) -> uuid.UUID:
    version_id = uuid.uuid4()
    await db.execute(
        "insert into skill_versions (id, organization_id, name, description, body, created_by, "
        "forked_from_version_id) values ($1, $2, 'pix', 'd', 'b', $3, $4)",
        version_id,
        org,
        created_by,
        fork,
    )
    return version_id


async def test_existing_versions_are_backfilled(
    empty_db: asyncpg.Connection, tmp_path: Path
) -> None:
    before = tmp_path / "migrations"
    shutil.copytree(DEFAULT_MIGRATIONS_DIR, before)
    for later in sorted(before.glob("*.sql")):
        if later.name >= EDITOR_MIGRATION:
            later.unlink()
    await apply_migrations(empty_db, before)
    db = empty_db
    org = await db.fetchval("insert into organizations (name) values ('Loja') returning id")
    platform = await _version(db, None, "platform")
    fork = await _version(db, org, "user", platform)
    upload = await _version(db, org, "user")
    by_cli = await _version(db, org, "user")
    agent = await _version(db, org, "agent")
    umbrella = await _version(db, org, "agent")
    await db.execute(
        "insert into skill_proposals (id, organization_id, umbrella, version_id, backend, "
        "index_bytes_before, index_bytes_after) values ($1, $2, 'pix', $3, 'lexical', 1, 1)",
        uuid.uuid4(),
        org,
        umbrella,
    )
    for actor, action, version in (
        ("skt_abcdefgh", "skill.import", upload),
        ("skt_ijklmnop", "skill.install", fork),
        ("cli", "skill.import", by_cli),
    ):
        await db.execute(
            "insert into audit_log (organization_id, actor, action, after_version_id) "
            "values ($1, $2, $3, $4)",
            org,
            actor,
            action,
            version,
        )

    applied = await apply_migrations(db, DEFAULT_MIGRATIONS_DIR)
    assert applied[0] == EDITOR_MIGRATION[:-4]  # then any later one
    rows = {
        r["id"]: (r["created_via"], r["author_key_prefix"])
        for r in await db.fetch("select id, created_via, author_key_prefix from skill_versions")
    }
    assert rows == {
        platform: ("catalog", None),
        fork: ("catalog", "skt_ijklmnop"),
        upload: ("upload", "skt_abcdefgh"),
        by_cli: ("upload", None),
        agent: ("agent", None),
        umbrella: ("consolidation", None),
    }
