"""A person's way into the console: e-mail and password (the sign-in form), and the
invitation link (`/console/convite/{token}`) where they set their password.

E-mail and password: the e-mail's person, hash and recent failures come from one
security-definer lookup before any org is bound; the password is checked against the hash, or
against a dummy hash when there is no person (the same cost: api.passwords). More than
`MAX_EMAIL_FAILURES` failures of an e-mail in the last hour (counted in Postgres, known e-mail
or not) refuse it before any hash is computed. Every failure also counts against the client's
address (api.rate_limit), as a wrong key does.

The invitation page sends `Referrer-Policy: no-referrer` (its URL carries the token); a link
that is not an open invitation counts as a failed sign-in. Setting the password uses the link
once, replaces any older password, ends the person's other sessions and opens a new one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web

from api.console.render import html
from api.invitations import hash_token, same_hash, well_formed_token
from api.keys import Role
from api.passwords import hash_password, password_problem, verify_password
from api.people_queries import (
    OpenInvitation,
    delete_person_sessions,
    fetch_open_invitation,
    fetch_sign_in,
    person_actor,
    record_sign_in_failure,
    set_password,
    use_invitation,
)
from api.rate_limit import RateLimited
from api.routing import DEPS, Principal
from core.audit import AuditEntry, insert_audit
from core.db_errors import db_errors
from core.tenancy import org_connection

log = structlog.get_logger(__name__)

MAX_EMAIL_FAILURES = 10  # per e-mail per hour
MAX_EMAIL_CHARS = 254
NO_REFERRER = {"Referrer-Policy": "no-referrer"}


def too_many_for_email() -> RateLimited:
    return RateLimited(
        "too_many_failed_sign_ins",
        "Muitas tentativas erradas para este e-mail na última hora. Espere um pouco ou peça "
        "um novo convite a quem administra a equipe.",
        3600,
    )


def person_principal(organization_id: uuid.UUID, role: Role, person_id: uuid.UUID) -> Principal:
    return Principal(organization_id, role, person_id, person_actor(person_id), person_id=person_id)


@dataclass(frozen=True)
class PersonSignIn:
    principal: Principal | None
    refusal: RateLimited | None = None


async def authenticate_person(pool: Any, email: str, password: str) -> PersonSignIn:
    """Who an e-mail and password sign in as; (None, None) for a wrong pair (the failure is
    recorded against the e-mail), (None, refusal) when the e-mail is locked."""
    wanted = email.strip().lower()[:MAX_EMAIL_CHARS]
    with db_errors("console person sign-in"):
        async with pool.acquire() as conn:
            found = await fetch_sign_in(conn, wanted)
    if found.failures >= MAX_EMAIL_FAILURES:
        return PersonSignIn(None, too_many_for_email())
    matched = await verify_password(found.password_hash, password)
    if (
        not matched
        or found.person_id is None
        or found.organization_id is None
        or found.role is None
    ):
        with db_errors("console person sign-in"):
            async with pool.acquire() as conn:
                await record_sign_in_failure(conn, wanted)
        return PersonSignIn(None)
    return PersonSignIn(
        person_principal(found.organization_id, found.role or Role.VIEWER, found.person_id)
    )


async def open_invitation(request: web.Request, token: str) -> OpenInvitation | None:
    """The open invitation of a link's token; None for anything else."""
    if not well_formed_token(token):
        return None
    with db_errors("console invitation lookup"):
        async with request.app[DEPS].pool.acquire() as conn:
            found = await fetch_open_invitation(conn, hash_token(token))
    if found is None or not same_hash(found.token_sha256, token):
        return None
    return found


def invitation_page(
    request: web.Request,
    invitation: OpenInvitation | None,
    csrf: str,
    status: int,
    error: dict[str, str] | None = None,
) -> web.Response:
    response = html(
        request,
        "invitation.html",
        {"visit": None, "csrf": csrf, "invitation": invitation, "error": error},
        status,
    )
    response.headers.update(NO_REFERRER)
    return response


async def accept(
    request: web.Request, invitation: OpenInvitation, password: str
) -> Principal | str:
    """Uses the invitation and sets the password; the principal, or a pt-BR refusal."""
    if (problem := password_problem(password)) is not None:
        return problem
    encoded = await hash_password(password)
    org = invitation.organization_id
    with db_errors("console invitation"):
        async with org_connection(request.app[DEPS].pool, org) as conn, conn.transaction():
            person_id = await use_invitation(conn, org, invitation.invitation_id)
            if person_id is None:
                return "Este convite já foi usado ou venceu. Peça um novo a quem administra."
            role = await set_password(conn, org, person_id, encoded)
            ended = await delete_person_sessions(conn, org, person_id)
            await insert_audit(
                conn,
                AuditEntry(
                    org,
                    person_actor(person_id),
                    "person.accept_invitation",
                    detail={"person_id": str(person_id), "sessions_ended": ended},
                ),
            )
    log.info("console.invitation_used", organization_id=str(org), person_id=str(person_id))
    return person_principal(org, role, person_id)
