"""SQL of organizations: create and list them (operator commands, the demo, tests)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

INSERT_ORGANIZATION = """
insert into organizations (id, name) values ($1, $2)
on conflict (id) do nothing
returning id
"""


async def insert_organization(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> bool:
    """Create an org; False when that id already exists (left unchanged)."""
    return await conn.fetchval(INSERT_ORGANIZATION, organization_id, name) is not None


@dataclass(frozen=True)
class Organization:
    id: uuid.UUID
    name: str
    agent_authoring: str
    created_at: datetime
    consolidation: str = "off"


LIST_ORGANIZATIONS = """
select id, name, agent_authoring, created_at, consolidation from organizations
order by created_at, id
"""


async def list_organizations(conn: asyncpg.Connection) -> list[Organization]:
    """Every org, oldest first (the owner's connection: it reads across orgs)."""
    return [Organization(**dict(r)) for r in await conn.fetch(LIST_ORGANIZATIONS)]


FETCH_ORGANIZATION = """
select id, name, agent_authoring, created_at, consolidation from organizations where id = $1
"""


async def fetch_organization(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> Organization | None:
    row = await conn.fetchrow(FETCH_ORGANIZATION, organization_id)
    return None if row is None else Organization(**dict(row))


UPDATE_ORGANIZATION_NAME = """
with previous as (select name from organizations where id = $1 for update)
update organizations o set name = $2 from previous where o.id = $1
returning previous.name
"""


async def update_organization_name(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> str | None:
    """Rename an org; the name it replaced, or None for an org that does not exist."""
    previous: str | None = await conn.fetchval(UPDATE_ORGANIZATION_NAME, organization_id, name)
    return previous
