"""Apply migrations/NNNN_name.sql in order, once, under an advisory lock, with checksums."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from core.errors import SkilletError
from skillet_data import MIGRATIONS_DIR

# Any constant works; it only has to be the same for every skillet process.
MIGRATION_LOCK_KEY = 0x5C111E7

_FILE_RE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

# Shipped in the wheel (skillet_data), so an installed skillet finds them without a checkout.
DEFAULT_MIGRATIONS_DIR = MIGRATIONS_DIR


class MigrationError(SkilletError):
    code = "migration_error"


def migrations_dir(override: str | None) -> Path:
    """SKILLET_MIGRATIONS_DIR when set, else the migrations shipped with the package."""
    return Path(override) if override else DEFAULT_MIGRATIONS_DIR


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations(directory: Path) -> list[Migration]:
    """Migrations on disk, by version; refuses misnamed files, duplicate numbers and none at all.

    No files means a wrong SKILLET_MIGRATIONS_DIR or a broken install, never an up-to-date
    database: reporting "0 applied" there would hide it.
    """
    found: dict[int, Migration] = {}
    for path in sorted(directory.glob("*.sql")):
        m = _FILE_RE.match(path.name)
        if m is None:
            raise MigrationError(f"migration file name must be NNNN_name.sql: {path.name}")
        version = int(m.group(1))
        if version in found:
            raise MigrationError(f"two migrations share number {version:04d}")
        found[version] = Migration(version, m.group(2), path.read_text(encoding="utf-8"))
    if not found:
        raise MigrationError(
            f"no migration files (NNNN_name.sql) in {directory}: check SKILLET_MIGRATIONS_DIR"
        )
    return [found[v] for v in sorted(found)]


_CREATE_VERSIONS = """
create table if not exists schema_migrations (
    version    integer primary key,
    name       text not null,
    checksum   text not null,
    applied_at timestamptz not null default now()
)
"""


async def apply_migrations(conn: asyncpg.Connection, directory: Path) -> list[str]:
    """Apply pending migrations in one transaction; return the names applied (may be empty)."""
    migrations = load_migrations(directory)
    async with conn.transaction():
        await conn.execute("select pg_advisory_xact_lock($1)", MIGRATION_LOCK_KEY)
        await conn.execute(_CREATE_VERSIONS)
        rows = await conn.fetch("select version, name, checksum from schema_migrations")
        applied = {r["version"]: r for r in rows}
        _check_history(migrations, applied)
        done: list[str] = []
        for migration in migrations:
            if migration.version in applied:
                continue
            await conn.execute(migration.sql)
            await conn.execute(
                "insert into schema_migrations (version, name, checksum) values ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
            done.append(f"{migration.version:04d}_{migration.name}")
        return done


def _check_history(migrations: list[Migration], applied: dict[int, asyncpg.Record]) -> None:
    known = {m.version: m for m in migrations}
    ahead = sorted(v for v in applied if v not in known)
    if ahead:
        raise MigrationError(
            f"the database has migration {ahead[-1]:04d}, which this code does not know: "
            "deploy the newer code instead of running this one"
        )
    for version, row in applied.items():
        if row["checksum"] != known[version].checksum:
            raise MigrationError(
                f"migration {version:04d}_{row['name']} was edited after it was applied; "
                "add a new migration instead"
            )
