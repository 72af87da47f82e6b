"""What changes a person: invite, rename or change role, deactivate, accept an invitation.
Shared by the API (an admin's key or session) and the CLI (the operator); each runs in the
caller's transaction, on a connection bound to the org, and writes its audit row.

The last active admin of an org is never demoted or deactivated (409 `last_admin`): the
org's active admins are locked first, so two admins demoting each other wait in turn.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from api.errors import ApiError, conflict, invalid, not_found
from api.invitations import INVITATION_TTL_S, hash_token, invitation_url, mint_token
from api.keys import Role
from api.people_queries import (
    Person,
    deactivate_person,
    delete_person_sessions,
    fetch_person,
    fetch_person_by_email,
    insert_invitation,
    insert_person,
    lock_active_admins,
    lock_held_conversations,
    person_actor,
    revoke_open_invitations,
    update_person,
)
from conversation.mode import Transition
from conversation.mode_queries import change_mode
from core.audit import AuditEntry, insert_audit

MAX_NAME_CHARS = 200
MAX_EMAIL_CHARS = 254
_EMAIL_RE = re.compile(
    r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]{1,189}\.[^@\s\x00-\x1f\x7f]+$"
)


def normal_email(text: str) -> str:
    """The stored form of an e-mail (trimmed, lower case); 422 `invalid_email` otherwise."""
    email = text.strip().lower()
    if len(email) > MAX_EMAIL_CHARS or _EMAIL_RE.match(email) is None:
        raise invalid("invalid_email", "Informe um e-mail válido (nome@empresa.com.br).")
    return email


def normal_name(text: str) -> str:
    name = " ".join(text.split())
    if not name or len(name) > MAX_NAME_CHARS or "\x00" in name:
        raise invalid("invalid_name", f"O nome precisa ter de 1 a {MAX_NAME_CHARS} caracteres.")
    return name


def person_not_found() -> ApiError:
    return not_found("person_not_found", "Essa pessoa não existe nesta organização.")


def _last_admin() -> ApiError:
    return conflict(
        "last_admin",
        "Esta é a última pessoa administradora ativa da organização: convide ou promova outra "
        "antes de mudar o papel dela ou desativá-la.",
    )


@dataclass(frozen=True)
class Invitation:
    id: uuid.UUID
    person: Person
    url: str  # carries the token: shown once, never logged
    expires_at: datetime

    def __repr__(self) -> str:
        return f"Invitation(id={self.id!r}, person={self.person.id!r})"

    def to_json(self) -> dict[str, object]:
        return {
            "id": str(self.id),
            "url": self.url,
            "expires_at": self.expires_at.isoformat(),
            "person": self.person.to_json(),
        }


async def _guard_last_admin(conn: asyncpg.Connection, person: Person) -> None:
    if person.role is Role.ADMIN and person.active:
        admins = await lock_active_admins(conn, person.organization_id)
        if person.id in admins and len(admins) == 1:
            raise _last_admin()


async def invite(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    *,
    email: str,
    name: str,
    role: Role,
    public_url: str | None,
) -> Invitation:
    """A new link for the e-mail; older unused links of the same person stop working."""
    email, name = normal_email(email), normal_name(name)
    person = await fetch_person_by_email(conn, organization_id, email)
    if person is None:
        person = await insert_person(conn, organization_id, name, email, role)
        if person is None:
            raise conflict(
                "email_taken", "Esse e-mail já tem acesso a outra organização deste serviço."
            )
    elif person.name != name or person.role is not role:
        if role is not Role.ADMIN:
            await _guard_last_admin(conn, person)
        updated = await update_person(conn, organization_id, person.id, name, role)
        assert updated is not None
        person = updated
    await revoke_open_invitations(conn, organization_id, person.id)
    token = mint_token()
    invitation_id, expires_at = await insert_invitation(
        conn, organization_id, person.id, hash_token(token), actor, INVITATION_TTL_S
    )
    await insert_audit(
        conn,
        AuditEntry(
            organization_id,
            actor,
            "person.invite",
            detail={"person_id": str(person.id), "role": role.value},
        ),
    )
    return Invitation(invitation_id, person, invitation_url(token, public_url), expires_at)


async def change_person(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    person_id: uuid.UUID,
    *,
    name: str | None,
    role: Role | None,
) -> Person:
    person = await fetch_person(conn, organization_id, person_id)
    if person is None:
        raise person_not_found()
    if role is not None and role is not Role.ADMIN:
        await _guard_last_admin(conn, person)
    updated = await update_person(
        conn, organization_id, person_id, None if name is None else normal_name(name), role
    )
    assert updated is not None
    fields = sorted(k for k, v in (("name", name), ("role", role)) if v is not None)
    await insert_audit(
        conn,
        AuditEntry(
            organization_id,
            actor,
            "person.update",
            detail={"person_id": str(person_id), "fields": fields}
            | ({"role": role.value} if role is not None else {}),
        ),
    )
    return updated


async def deactivate(
    conn: asyncpg.Connection, organization_id: uuid.UUID, actor: str, person_id: uuid.UUID
) -> tuple[Person, list[uuid.UUID]]:
    """The person, no longer active, and the conversations that went back to waiting. Their
    sessions and open invitations end in the same transaction."""
    person = await fetch_person(conn, organization_id, person_id)
    if person is None:
        raise person_not_found()
    await _guard_last_admin(conn, person)
    gone = await deactivate_person(conn, organization_id, person_id)
    assert gone is not None
    sessions = await delete_person_sessions(conn, organization_id, person_id)
    await revoke_open_invitations(conn, organization_id, person_id)
    returned = []
    for conversation in await lock_held_conversations(
        conn, organization_id, person_actor(person_id)
    ):
        if await change_mode(conn, conversation, Transition.HOLDER_GONE) is not None:
            returned.append(conversation)
    await insert_audit(
        conn,
        AuditEntry(
            organization_id,
            actor,
            "person.deactivate",
            detail={
                "person_id": str(person_id),
                "sessions_ended": sessions,
                "conversations_waiting": len(returned),
            },
        ),
    )
    return gone, returned
