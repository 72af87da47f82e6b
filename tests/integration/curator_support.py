"""Builders for the curator/usage tests: installed skills with a chosen usage history."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from skills.curator import CuratorPolicy
from skills.curator.run import PassOptions
from tests.integration.support import publish

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def days_ago(days: float, now: datetime = NOW) -> datetime:
    return now - timedelta(days=days)


class NoFiles:
    """An object store for skills without files: publishing never touches it."""

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        raise AssertionError("these skills have no files")

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> Any:
        raise AssertionError("these skills have no files")


INSERT_USAGE = """
insert into skill_usage (organization_id, skill_name, created_by, use_count, last_used_at,
                         last_activity_at, state, pinned)
values ($1, $2, $3, $4, $5, $5, $6, $7)
"""


async def install(
    db: asyncpg.Connection,
    org: uuid.UUID,
    name: str,
    *,
    created_by: str = "agent",
    last_activity_at: datetime | None = None,
    state: str = "active",
    pinned: bool = False,
    usage: bool = True,
    keywords: tuple[str, ...] = (),
) -> None:
    """Publish `name` for the org (no files) and, with `usage`, give it a skill_usage row."""
    await publish(db, NoFiles(), org, name, keywords=keywords or (name,), created_by=created_by)  # type: ignore[arg-type]
    if usage:
        uses = 0 if last_activity_at is None else 1
        await db.execute(INSERT_USAGE, org, name, created_by, uses, last_activity_at, state, pinned)


async def states(db: asyncpg.Connection, org: uuid.UUID) -> dict[str, str]:
    rows = await db.fetch(
        "select skill_name, state from skill_usage where organization_id = $1", org
    )
    return {r["skill_name"]: r["state"] for r in rows}


def options(now: datetime = NOW, **overrides: Any) -> PassOptions:
    return PassOptions(now=now, policy=CuratorPolicy(), **overrides)
