"""Postgres connections: the pool the worker owns and single connections for the CLI."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg


async def _init_connection(conn: asyncpg.Connection) -> None:
    # jsonb columns travel as Python values (dict/list), not JSON text.
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def create_pool(database_url: str, *, min_size: int = 1, max_size: int = 10) -> Any:
    """An asyncpg pool whose connections decode jsonb; the caller closes it."""
    return await asyncpg.create_pool(
        database_url, min_size=min_size, max_size=max_size, init=_init_connection
    )


async def connect(database_url: str) -> asyncpg.Connection:
    """One connection (CLI commands); the caller closes it."""
    conn = await asyncpg.connect(database_url)
    await _init_connection(conn)
    return conn


def with_database(database_url: str, name: str) -> str:
    """The same server URL pointing at database `name` (query string kept)."""
    parts = urlsplit(database_url)
    return urlunsplit(parts._replace(path=f"/{name}"))
