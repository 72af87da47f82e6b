"""The migration runner on a real database: idempotent, refuses edits and newer databases."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
import pytest_asyncio

from core.db import connect, with_database
from tests.integration.conftest import ADMIN_DATABASE_URL
from worker.migrate import DEFAULT_MIGRATIONS_DIR, MigrationError, apply_migrations


@pytest_asyncio.fixture(loop_scope="session")
async def empty_db() -> AsyncIterator[asyncpg.Connection]:
    name = f"skillet_migrate_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(ADMIN_DATABASE_URL)
    await admin.execute(f'create database "{name}"')
    conn = await connect(with_database(ADMIN_DATABASE_URL, name))
    yield conn
    await conn.close()
    await admin.execute(f'drop database "{name}" with (force)')
    await admin.close()


async def test_second_run_applies_nothing(empty_db: asyncpg.Connection) -> None:
    first = await apply_migrations(empty_db, DEFAULT_MIGRATIONS_DIR)
    assert first and first[0].startswith("0001_")
    assert await apply_migrations(empty_db, DEFAULT_MIGRATIONS_DIR) == []


async def test_edited_migration_is_refused(empty_db: asyncpg.Connection, tmp_path: Path) -> None:
    await apply_migrations(empty_db, DEFAULT_MIGRATIONS_DIR)
    copy = tmp_path / "migrations"
    shutil.copytree(DEFAULT_MIGRATIONS_DIR, copy)
    first = sorted(copy.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(MigrationError, match="edited after it was applied"):
        await apply_migrations(empty_db, copy)


async def test_database_ahead_of_code_is_refused(
    empty_db: asyncpg.Connection, tmp_path: Path
) -> None:
    copy = tmp_path / "migrations"
    shutil.copytree(DEFAULT_MIGRATIONS_DIR, copy)
    (copy / "9999_future.sql").write_text("create table future_thing (id int);")
    await apply_migrations(empty_db, copy)
    with pytest.raises(MigrationError, match="does not know"):
        await apply_migrations(empty_db, DEFAULT_MIGRATIONS_DIR)


async def test_failed_migration_leaves_nothing_behind(
    empty_db: asyncpg.Connection, tmp_path: Path
) -> None:
    copy = tmp_path / "migrations"
    shutil.copytree(DEFAULT_MIGRATIONS_DIR, copy)
    (copy / "9998_broken.sql").write_text("create table half (id int); select * from nowhere;")
    with pytest.raises(asyncpg.PostgresError):
        await apply_migrations(empty_db, copy)
    tables = await empty_db.fetchval(
        "select count(*) from information_schema.tables where table_schema = 'public'"
    )
    assert tables == 0
