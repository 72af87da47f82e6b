"""Routes of the org's people: invite (admin), list (viewer), rename or change role (admin),
deactivate (admin). The logic and audit rows are api.people's."""

from __future__ import annotations

import uuid

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api import people
from api.bodies import read_json
from api.keys import Role
from api.people_queries import list_people
from api.routing import Principal, Reply, deps_of, org_db


class InvitationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: str = Field(min_length=3, max_length=people.MAX_EMAIL_CHARS)
    name: str = Field(min_length=1, max_length=people.MAX_NAME_CHARS)
    role: Role


class PersonChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=people.MAX_NAME_CHARS)
    role: Role | None = None


def _person_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise people.person_not_found() from None


async def create_invitation(request: web.Request, principal: Principal) -> Reply:
    wanted = await read_json(request, InvitationRequest)
    async with org_db(request, principal) as conn, conn.transaction():
        made = await people.invite(
            conn,
            principal.organization_id,
            principal.prefix,
            email=wanted.email,
            name=wanted.name,
            role=wanted.role,
            public_url=deps_of(request).console_public_url,
        )
    return made.to_json()


async def list_people_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        found = await list_people(conn, principal.organization_id)
    return {"items": [p.to_json() for p in found]}


async def update_person_route(request: web.Request, principal: Principal) -> Reply:
    person_id = _person_id(request)
    change = await read_json(request, PersonChange)
    async with org_db(request, principal) as conn, conn.transaction():
        updated = await people.change_person(
            conn,
            principal.organization_id,
            principal.prefix,
            person_id,
            name=change.name,
            role=change.role,
        )
    return updated.to_json()


async def deactivate_person_route(request: web.Request, principal: Principal) -> Reply:
    person_id = _person_id(request)
    async with org_db(request, principal) as conn, conn.transaction():
        person, returned = await people.deactivate(
            conn, principal.organization_id, principal.prefix, person_id
        )
    return {**person.to_json(), "conversations_waiting": [str(c) for c in returned]}
