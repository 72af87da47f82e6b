"""`skillet orgs create|list|set`: organizations, as the operator (the owner's connection).

`orgs set` changes any subset of an org's settings in one transaction, each change audited;
with no option it changes nothing and shows the settings as they are.
"""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from cli.args import CliError, org_command, uuid_arg
from core.db import connection
from core.organizations import (
    Organization,
    fetch_organization,
    insert_organization,
    list_organizations,
    update_organization_name,
)
from skills.audit_queries import AuditEntry, insert_audit
from skills.draft_queries import AuthoringMode
from skills.drafts import set_agent_authoring
from worker.settings import Settings

CLI_ACTOR = "cli"
MAX_NAME_CHARS = 200


def _name_arg(value: str) -> str:
    name = value.strip()
    if not name or len(name) > MAX_NAME_CHARS or "\x00" in name:
        raise argparse.ArgumentTypeError(f"a name of 1 to {MAX_NAME_CHARS} characters, no NUL")
    return name


def _as_json(org: Organization) -> dict[str, Any]:
    return {
        "id": str(org.id),
        "name": org.name,
        "agent_authoring": org.agent_authoring,
        "created_at": org.created_at.isoformat(),
    }


async def cmd_create(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    org_id = args.id or uuid.uuid4()
    async with connection(settings.owner_url) as conn:
        created = await insert_organization(conn, org_id, args.name)
    if not created:
        raise CliError(f"organization {org_id} already exists", code="organization_exists")
    return {"id": str(org_id), "name": args.name, "message": f"organization {org_id} created"}


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn:
        orgs = await list_organizations(conn)
    lines = [f"{o.id}  {o.name}  agent_authoring={o.agent_authoring}" for o in orgs]
    return {
        "organizations": [_as_json(o) for o in orgs],
        "message": "\n".join(lines) or "no organizations",
    }


async def cmd_set(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    changed: list[str] = []
    previous: dict[str, str | None] = {}  # of each option given
    async with connection(settings.owner_url) as conn, conn.transaction():
        if await fetch_organization(conn, args.org) is None:
            raise CliError(f"organization {args.org} not found", code="organization_not_found")
        if args.name is not None:
            previous_name = await update_organization_name(conn, args.org, args.name)
            previous["name"] = previous_name
            if previous_name != args.name:
                detail = {"from": previous_name, "to": args.name}
                await insert_audit(
                    conn, AuditEntry(args.org, CLI_ACTOR, "settings.name", detail=detail)
                )
                changed.append(f"name: {previous_name} -> {args.name}")
        if args.agent_authoring is not None:
            mode = AuthoringMode(args.agent_authoring)
            was = await set_agent_authoring(
                conn, organization_id=args.org, mode=mode, actor=CLI_ACTOR
            )
            previous["agent_authoring"] = was.value
            changed.append(f"agent_authoring: {was.value} -> {mode.value}")
        org = await fetch_organization(conn, args.org)
    assert org is not None  # checked above, in the same transaction
    message = (
        "\n".join(changed)
        or f"nothing to change: {org.name}, agent_authoring={org.agent_authoring}"
    )
    return {**_as_json(org), "previous": previous, "changed": changed, "message": message}


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    orgs = sub.add_parser("orgs", help="organizations").add_subparsers(
        dest="orgs_command", required=True
    )
    create = orgs.add_parser("create", parents=[common], help="create an organization")
    create.add_argument("--name", required=True, type=_name_arg)
    create.add_argument("--id", type=uuid_arg)
    create.set_defaults(handler=cmd_create)
    listed = orgs.add_parser("list", parents=[common], help="every organization, oldest first")
    listed.set_defaults(handler=cmd_list)
    changed = org_command(orgs, common, "set", "change any subset of an organization's settings")
    changed.add_argument("--name", type=_name_arg, help="the organization's name")
    changed.add_argument(
        "--agent-authoring",
        choices=[m.value for m in AuthoringMode],
        help="off: the agent writes no skills; review: its writes are drafts a person approves "
        "(default); auto: published at once",
    )
    changed.set_defaults(handler=cmd_set)
