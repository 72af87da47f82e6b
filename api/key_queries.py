"""SQL of API keys: the pre-org lookup (a security-definer function), create, list, revoke.

Everything but the lookup runs on a connection bound to the key's org (row-level security);
no query here ever reads `key_hash` (the API's role may not).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from api.keys import MintedKey, Role


@dataclass(frozen=True)
class KeyOwner:
    """Who a live key speaks for."""

    organization_id: uuid.UUID
    role: Role
    key_id: uuid.UUID


@dataclass(frozen=True)
class ApiKey:
    id: uuid.UUID
    organization_id: uuid.UUID
    prefix: str
    role: Role
    name: str | None
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        def stamp(value: datetime | None) -> str | None:
            return None if value is None else value.isoformat()

        return {
            "id": str(self.id),
            "prefix": self.prefix,
            "role": self.role.value,
            "name": self.name,
            "created_at": self.created_at.isoformat(),
            "revoked_at": stamp(self.revoked_at),
            "last_used_at": stamp(self.last_used_at),
        }


_COLUMNS = "id, organization_id, prefix, role, name, created_at, revoked_at, last_used_at"


def _api_key(row: asyncpg.Record) -> ApiKey:
    values = dict(row)
    values["role"] = Role(values["role"])
    return ApiKey(**values)


LOOKUP_API_KEY = "select organization_id, role, key_id from skillet_api_key_lookup($1, $2)"


async def fetch_key_owner(
    conn: asyncpg.Connection, prefix: str, key_hash: bytes
) -> KeyOwner | None:
    """The org and role of a live key (not revoked); None for any other (prefix, hash)."""
    row = await conn.fetchrow(LOOKUP_API_KEY, prefix, key_hash)
    if row is None:
        return None
    return KeyOwner(row["organization_id"], Role(row["role"]), row["key_id"])


INSERT_API_KEY = f"""
insert into api_keys (id, organization_id, prefix, key_hash, role, name)
values ($1, $2, $3, $4, $5, $6)
on conflict (prefix) do nothing
returning {_COLUMNS}
"""


async def insert_api_key(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    minted: MintedKey,
    role: Role,
    name: str | None,
) -> ApiKey | None:
    """The new key's row; None when its prefix is taken (mint another)."""
    row = await conn.fetchrow(
        INSERT_API_KEY,
        uuid.uuid4(),
        organization_id,
        minted.prefix,
        minted.key_hash,
        role.value,
        name,
    )
    return None if row is None else _api_key(row)


LIST_API_KEYS = f"""
select {_COLUMNS} from api_keys where organization_id = $1 order by created_at, id
"""


async def list_api_keys(conn: asyncpg.Connection, organization_id: uuid.UUID) -> list[ApiKey]:
    return [_api_key(r) for r in await conn.fetch(LIST_API_KEYS, organization_id)]


# Revoking twice keeps the first stamp (and still answers the key).
UPDATE_API_KEY_REVOKED = f"""
update api_keys set revoked_at = coalesce(revoked_at, now())
where organization_id = $1 and prefix = $2
returning {_COLUMNS}
"""


async def update_api_key_revoked(
    conn: asyncpg.Connection, organization_id: uuid.UUID, prefix: str
) -> ApiKey | None:
    """Revoked from the next request on; None when the org has no key with that prefix."""
    row = await conn.fetchrow(UPDATE_API_KEY_REVOKED, organization_id, prefix)
    return None if row is None else _api_key(row)
