"""SQL of people: the pre-org sign-in and invitation lookups (security-definer functions),
and everything else bound to the person's org. No query here reads `password_hash` but the
sign-in lookup; the caller owns the transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from api.keys import Role

PERSON_PREFIX = "person:"


def person_actor(person_id: uuid.UUID) -> str:
    """A person's `held_by` and audit actor."""
    return f"{PERSON_PREFIX}{person_id}"


def person_of_actor(actor: str | None) -> uuid.UUID | None:
    if actor is None or not actor.startswith(PERSON_PREFIX):
        return None
    try:
        return uuid.UUID(actor[len(PERSON_PREFIX) :])
    except ValueError:
        return None


@dataclass(frozen=True)
class Person:
    id: uuid.UUID
    organization_id: uuid.UUID
    name: str
    email: str
    role: Role
    active: bool
    created_at: datetime
    deactivated_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "name": self.name,
            "email": self.email,
            "role": self.role.value,
            "active": self.active,
            "created_at": self.created_at.isoformat(),
            "deactivated_at": None
            if self.deactivated_at is None
            else self.deactivated_at.isoformat(),
        }


_COLUMNS = "id, organization_id, name, email, role, active, created_at, deactivated_at"


def _person(row: asyncpg.Record) -> Person:
    values = dict(row)
    values["role"] = Role(values["role"])
    return Person(**values)


@dataclass(frozen=True)
class SignInRow:
    person_id: uuid.UUID | None
    organization_id: uuid.UUID | None
    role: Role | None
    password_hash: str | None
    failures: int


LOOKUP_SIGN_IN = (
    "select person_id, organization_id, role, password_hash, failures"
    " from skillet_person_sign_in_lookup($1)"
)


async def fetch_sign_in(conn: asyncpg.Connection, email: str) -> SignInRow:
    row = await conn.fetchrow(LOOKUP_SIGN_IN, email)
    assert row is not None  # the function always answers one row
    role = None if row["role"] is None else Role(row["role"])
    return SignInRow(
        row["person_id"], row["organization_id"], role, row["password_hash"], row["failures"]
    )


RECORD_SIGN_IN_FAILURE = "select skillet_person_sign_in_failed($1)"


async def record_sign_in_failure(conn: asyncpg.Connection, email: str) -> None:
    await conn.execute(RECORD_SIGN_IN_FAILURE, email)


@dataclass(frozen=True)
class OpenInvitation:
    invitation_id: uuid.UUID
    organization_id: uuid.UUID
    person_id: uuid.UUID
    name: str
    email: str
    token_sha256: bytes


LOOKUP_INVITATION = (
    "select invitation_id, organization_id, person_id, name, email, token_sha256"
    " from skillet_invitation_lookup($1)"
)


async def fetch_open_invitation(
    conn: asyncpg.Connection, token_sha256: bytes
) -> OpenInvitation | None:
    row = await conn.fetchrow(LOOKUP_INVITATION, token_sha256)
    return None if row is None else OpenInvitation(**dict(row))


SELECT_PERSON_BY_EMAIL = f"select {_COLUMNS} from people where organization_id = $1 and email = $2"


async def fetch_person_by_email(
    conn: asyncpg.Connection, organization_id: uuid.UUID, email: str
) -> Person | None:
    row = await conn.fetchrow(SELECT_PERSON_BY_EMAIL, organization_id, email)
    return None if row is None else _person(row)


SELECT_PERSON = f"select {_COLUMNS} from people where organization_id = $1 and id = $2"


async def fetch_person(
    conn: asyncpg.Connection, organization_id: uuid.UUID, person_id: uuid.UUID
) -> Person | None:
    row = await conn.fetchrow(SELECT_PERSON, organization_id, person_id)
    return None if row is None else _person(row)


LIST_PEOPLE = f"select {_COLUMNS} from people where organization_id = $1 order by created_at, id"


async def list_people(conn: asyncpg.Connection, organization_id: uuid.UUID) -> list[Person]:
    return [_person(r) for r in await conn.fetch(LIST_PEOPLE, organization_id)]


SELECT_NAMES = "select id, name from people where organization_id = $1 and id = any($2::uuid[])"


async def fetch_names(
    conn: asyncpg.Connection, organization_id: uuid.UUID, ids: list[uuid.UUID]
) -> dict[uuid.UUID, str]:
    if not ids:
        return {}
    return {r["id"]: r["name"] for r in await conn.fetch(SELECT_NAMES, organization_id, ids)}


INSERT_PERSON = f"""
insert into people (id, organization_id, name, email, role)
values ($1, $2, $3, $4, $5)
on conflict (email) do nothing
returning {_COLUMNS}
"""


async def insert_person(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, email: str, role: Role
) -> Person | None:
    """The new person; None when the e-mail is taken (in any org of the deployment)."""
    row = await conn.fetchrow(INSERT_PERSON, uuid.uuid4(), organization_id, name, email, role.value)
    return None if row is None else _person(row)


UPDATE_PERSON = f"""
update people set name = coalesce($3, name), role = coalesce($4, role)
where organization_id = $1 and id = $2
returning {_COLUMNS}
"""


async def update_person(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    person_id: uuid.UUID,
    name: str | None,
    role: Role | None,
) -> Person | None:
    row = await conn.fetchrow(
        UPDATE_PERSON, organization_id, person_id, name, None if role is None else role.value
    )
    return None if row is None else _person(row)


# Locks the org's active admins: two admins demoting each other wait for one another.
LOCK_ACTIVE_ADMINS = """
select id from people where organization_id = $1 and role = 'admin' and active for update
"""


async def lock_active_admins(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> list[uuid.UUID]:
    return [r["id"] for r in await conn.fetch(LOCK_ACTIVE_ADMINS, organization_id)]


DEACTIVATE_PERSON = f"""
update people set active = false, deactivated_at = coalesce(deactivated_at, now())
where organization_id = $1 and id = $2
returning {_COLUMNS}
"""


async def deactivate_person(
    conn: asyncpg.Connection, organization_id: uuid.UUID, person_id: uuid.UUID
) -> Person | None:
    row = await conn.fetchrow(DEACTIVATE_PERSON, organization_id, person_id)
    return None if row is None else _person(row)


SET_PASSWORD = """
update people set password_hash = $3, active = true, deactivated_at = null
where organization_id = $1 and id = $2
returning role
"""


async def set_password(
    conn: asyncpg.Connection, organization_id: uuid.UUID, person_id: uuid.UUID, encoded: str
) -> Role:
    """Replaces the password (an invitation used); the person's role."""
    role = await conn.fetchval(SET_PASSWORD, organization_id, person_id, encoded)
    return Role(role)


DELETE_PERSON_SESSIONS = (
    "delete from console_sessions where organization_id = $1 and person_id = $2"
)


async def delete_person_sessions(
    conn: asyncpg.Connection, organization_id: uuid.UUID, person_id: uuid.UUID
) -> int:
    status = await conn.execute(DELETE_PERSON_SESSIONS, organization_id, person_id)
    return int(status.split()[-1])


REVOKE_OPEN_INVITATIONS = """
update person_invitations set revoked_at = now()
where organization_id = $1 and person_id = $2 and used_at is null and revoked_at is null
"""


async def revoke_open_invitations(
    conn: asyncpg.Connection, organization_id: uuid.UUID, person_id: uuid.UUID
) -> None:
    await conn.execute(REVOKE_OPEN_INVITATIONS, organization_id, person_id)


INSERT_INVITATION = """
insert into person_invitations (id, organization_id, person_id, token_sha256, created_by,
                                expires_at)
values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
returning id, expires_at
"""


async def insert_invitation(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    person_id: uuid.UUID,
    token_sha256: bytes,
    created_by: str,
    ttl_s: int,
) -> tuple[uuid.UUID, datetime]:
    row = await conn.fetchrow(
        INSERT_INVITATION,
        uuid.uuid4(),
        organization_id,
        person_id,
        token_sha256,
        created_by,
        float(ttl_s),
    )
    assert row is not None
    return row["id"], row["expires_at"]


# Single use: of two requests with the same link, one updates the row, the other finds it used.
USE_INVITATION = """
update person_invitations set used_at = now()
where organization_id = $1 and id = $2 and used_at is null and revoked_at is null
  and expires_at > now()
returning person_id
"""


async def use_invitation(
    conn: asyncpg.Connection, organization_id: uuid.UUID, invitation_id: uuid.UUID
) -> uuid.UUID | None:
    value: uuid.UUID | None = await conn.fetchval(USE_INVITATION, organization_id, invitation_id)
    return value


HELD_CONVERSATIONS = """
select id from conversations
where organization_id = $1 and mode = 'human' and held_by = $2
order by id
for update
"""


async def lock_held_conversations(
    conn: asyncpg.Connection, organization_id: uuid.UUID, held_by: str
) -> list[uuid.UUID]:
    return [r["id"] for r in await conn.fetch(HELD_CONVERSATIONS, organization_id, held_by)]


# Held for the transfer's transaction: a deactivation waits for it (and then returns what the
# person holds to waiting), never the other way round.
LOCK_HOLDER = """
select role from people
where organization_id = $1 and id = $2 and active and role in ('editor', 'admin')
for share
"""


async def lock_possible_holder(
    conn: asyncpg.Connection, organization_id: uuid.UUID, person_id: uuid.UUID
) -> bool:
    """Whether the person is an active editor or admin of the org (row held till commit)."""
    return await conn.fetchval(LOCK_HOLDER, organization_id, person_id) is not None
