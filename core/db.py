"""Postgres connections: the pool the worker owns and single connections for the CLI."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from core.tenancy import TenantConnection, reset_bindings
from core.tenant_key import TenantKey, resolve_tenant_key


async def _init_connection(conn: asyncpg.Connection) -> None:
    # jsonb columns travel as Python values (dict/list), not JSON text.
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def create_pool(
    database_url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    app_role: str | None = None,
    tenant_secret: str | None = None,
) -> Any:
    """An asyncpg pool whose connections decode jsonb; the caller closes it.

    With `app_role`, every connection switches to that (non-owner) role, so row-level
    security applies to all it does, and is reset to no tenant between uses. With `app_role`
    or `tenant_secret`, its org bindings carry proofs under `tenant_secret` (unset: the
    database's own, when the login may read it), checked against the database's before the
    pool opens (core.tenant_key).
    """
    key: TenantKey | None = None
    if app_role is not None or tenant_secret is not None:
        probe = await asyncpg.connect(database_url)
        try:
            key = await resolve_tenant_key(probe, tenant_secret)
        finally:
            await probe.close()

    async def init(conn: asyncpg.Connection) -> None:
        await _init_connection(conn)
        if app_role is not None:
            await conn.execute(f"set role {quote_ident(app_role)}")
        conn.tenant_key = key

    return await asyncpg.create_pool(
        database_url,
        min_size=min_size,
        max_size=max_size,
        init=init,
        reset=reset_bindings if app_role is not None else None,
        connection_class=TenantConnection,
    )


def quote_ident(name: str) -> str:
    """A Postgres identifier, double-quoted (SET ROLE, CREATE DATABASE take no parameters)."""
    return '"' + name.replace('"', '""') + '"'


async def connect(database_url: str) -> asyncpg.Connection:
    """One connection (CLI commands); the caller closes it."""
    conn = await asyncpg.connect(database_url)
    await _init_connection(conn)
    return conn


@contextlib.asynccontextmanager
async def connection(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """One connection for the block (a CLI command), closed however the block ends."""
    conn = await connect(database_url)
    try:
        yield conn
    finally:
        await conn.close()


def with_database(database_url: str, name: str) -> str:
    """The same server URL pointing at database `name` (query string kept)."""
    parts = urlsplit(database_url)
    return urlunsplit(parts._replace(path=f"/{name}"))
