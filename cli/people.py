"""`skillet people invite|list|deactivate --org ORG`: an org's team, as the operator (the
owner's connection; audit actor `cli`). An invitation's link is printed once: give it to the
person; it opens the console where they set a password (7 days, single use)."""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from api import people
from api.keys import Role
from api.people_queries import list_people
from cli.args import CliError, org_command, uuid_arg
from core.db import connection
from skills.catalog_queries import fetch_organization_exists
from worker.settings import Settings

CLI_ACTOR = "cli"


async def _require_org(conn: Any, org: uuid.UUID) -> None:
    if not await fetch_organization_exists(conn, org):
        raise CliError(f"organization {org} does not exist", code="organization_not_found")


async def invite_person(
    conn: Any, settings: Settings, org: uuid.UUID, email: str, name: str, role: Role
) -> dict[str, Any]:
    made = await people.invite(
        conn,
        org,
        CLI_ACTOR,
        email=email,
        name=name,
        role=role,
        public_url=settings.console_public_url,
    )
    return {
        **made.to_json(),
        "message": f"{made.url}\n(convite de {made.person.name} <{made.person.email}>, "
        f"papel {role.value}; vale até {made.expires_at.isoformat()}, uma vez só)",
    }


async def cmd_invite(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn, conn.transaction():
        await _require_org(conn, args.org)
        return await invite_person(conn, settings, args.org, args.email, args.name, Role(args.role))


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn:
        found = await list_people(conn, args.org)
    lines = [
        f"{p.id}  {p.role.value:<6}  {'ativa  ' if p.active else 'inativa'}  {p.name} <{p.email}>"
        for p in found
    ]
    return {"people": [p.to_json() for p in found], "message": "\n".join(lines) or "no people"}


async def cmd_deactivate(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn, conn.transaction():
        person, returned = await people.deactivate(conn, args.org, CLI_ACTOR, args.person_id)
    return {
        **person.to_json(),
        "conversations_waiting": [str(c) for c in returned],
        "message": f"{person.name} deactivated; {len(returned)} conversation(s) back to waiting",
    }


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    group = sub.add_parser("people", help="an organization's team (console accounts)")
    commands = group.add_subparsers(dest="people_command", required=True)
    invite = org_command(commands, common, "invite", "invite a person (prints the link once)")
    invite.add_argument("--email", required=True)
    invite.add_argument("--name", required=True)
    invite.add_argument("--role", required=True, choices=[r.value for r in Role])
    invite.set_defaults(handler=cmd_invite)
    org_command(commands, common, "list", "the org's people").set_defaults(handler=cmd_list)
    deactivate = org_command(commands, common, "deactivate", "deactivate a person at once")
    deactivate.add_argument("person_id", type=uuid_arg, help="the person's id (people list)")
    deactivate.set_defaults(handler=cmd_deactivate)
