"""`skillet orgs create|list|set`: organizations, as the operator (the owner's connection).

`orgs set` changes any subset of an org's settings in one transaction, each change audited;
with no option it changes nothing and shows the settings as they are. The events webhook's
URL is checked (https, a public host: core.addresses) before the transaction opens; its
secret is read from a file, never from the command line (where `ps` and shell history show it).
Business hours (`--business-hours`, `--timezone`, `--closed`, `--after-hours`) are parsed
before the transaction too (hours.change): a schedule or zone that does not parse writes
nothing.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path
from typing import Any

from api.keys import Role
from cli.args import CliError, org_command, uuid_arg
from cli.people import invite_person
from consolidation.decide import set_consolidation
from consolidation.gates import ConsolidationMode
from core.address_guard import AddressGuard
from core.audit import AuditEntry, insert_audit
from core.clock import system_clock
from core.db import connection
from core.organizations import (
    Organization,
    fetch_organization,
    insert_organization,
    list_organizations,
    update_organization_name,
)
from events.endpoint import EndpointChange, apply_change, check_change, endpoint_json
from events.queries import fetch_endpoint
from hours.change import HoursChange, hours_json
from hours.change import apply_change as apply_hours
from hours.change import check_change as check_hours
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
        "consolidation": org.consolidation,
        "created_at": org.created_at.isoformat(),
    }


async def cmd_create(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    org_id = args.id or uuid.uuid4()
    if (args.admin_email is None) != (args.admin_name is None):
        raise CliError("give --admin-email and --admin-name together", code="admin_incomplete")
    async with connection(settings.owner_url) as conn, conn.transaction():
        created = await insert_organization(conn, org_id, args.name)
        if not created:
            raise CliError(f"organization {org_id} already exists", code="organization_exists")
        admin = None
        if args.admin_email is not None:
            # The first admin's invitation, in the org's own transaction: both or neither.
            admin = await invite_person(
                conn, settings, org_id, args.admin_email, args.admin_name, Role.ADMIN
            )
    answer: dict[str, Any] = {
        "id": str(org_id),
        "name": args.name,
        "message": f"organization {org_id} created",
    }
    if admin is not None:
        answer["admin_invitation"] = {k: v for k, v in admin.items() if k != "message"}
        answer["message"] += f"\nfirst admin's invitation: {admin['message']}"
    return answer


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn:
        orgs = await list_organizations(conn)
    lines = [f"{o.id}  {o.name}  agent_authoring={o.agent_authoring}" for o in orgs]
    return {
        "organizations": [_as_json(o) for o in orgs],
        "message": "\n".join(lines) or "no organizations",
    }


def _read_secret_file(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(
            f"não consegui ler o segredo de eventos em {path}: {exc}", code="events_secret_invalid"
        ) from None


async def cmd_set(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    changed: list[str] = []
    previous: dict[str, str | None] = {}  # of each option given
    guard = AddressGuard(allow_private=settings.events_allow_private_urls)
    events = await check_change(
        EndpointChange(url=args.events_url, secret=_read_secret_file(args.events_secret_file)),
        guard,
    )
    hours = check_hours(
        HoursChange(args.business_hours, args.timezone, args.closed, args.after_hours)
    )
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
        if args.consolidation is not None:
            wanted = ConsolidationMode(args.consolidation)
            was_mode = await set_consolidation(
                conn, organization_id=args.org, mode=wanted, actor=CLI_ACTOR
            )
            previous["consolidation"] = was_mode.value
            changed.append(f"consolidation: {was_mode.value} -> {wanted.value}")
        changed += await _set_satisfaction(conn, args, previous)
        events_changed = await apply_change(conn, args.org, events, CLI_ACTOR)
        if args.events_url is not None:
            previous["events_url"] = events_changed.previous_url
        changed += events_changed.changed
        hours_changed = await apply_hours(conn, args.org, hours, CLI_ACTOR)
        changed += hours_changed.changed
        org = await fetch_organization(conn, args.org)
        endpoint = await fetch_endpoint(conn, args.org)
    assert org is not None  # checked above, in the same transaction
    message = "\n".join(changed) or (
        f"nothing to change: {org.name}, agent_authoring={org.agent_authoring}, "
        f"events_url={endpoint.url or '-'}, business_hours={hours_changed.hours.schedule or '-'}"
    )
    return {
        **_as_json(org),
        **endpoint_json(endpoint),
        **hours_json(hours_changed.hours, system_clock()),
        "previous": previous,
        "changed": changed,
        "message": message,
    }


async def _set_satisfaction(
    conn: Any, args: argparse.Namespace, previous: dict[str, Any]
) -> list[str]:
    """--satisfaction and --satisfaction-buttons: what changed, in `changed`'s words."""
    from conversation.satisfaction import ButtonsRefused, checked_buttons
    from conversation.satisfaction_settings import change_satisfaction

    if args.satisfaction is None and args.satisfaction_buttons is None:
        return []
    buttons = None
    if args.satisfaction_buttons is not None:
        try:
            buttons = checked_buttons(args.satisfaction_buttons)
        except ButtonsRefused as exc:
            raise CliError(str(exc), code="satisfaction_buttons_invalid") from None
    enabled = None if args.satisfaction is None else args.satisfaction == "on"
    was = await change_satisfaction(conn, args.org, CLI_ACTOR, enabled=enabled, buttons=buttons)
    lines = []
    if enabled is not None:
        before = "on" if was.enabled else "off"
        previous["satisfaction"] = before
        lines.append(f"satisfaction: {before} -> {args.satisfaction}")
    if buttons is not None:
        previous["satisfaction_buttons"] = list(was.buttons)
        lines.append(f"satisfaction_buttons: {' | '.join(was.buttons)} -> {' | '.join(buttons)}")
    return lines


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    orgs = sub.add_parser("orgs", help="organizations").add_subparsers(
        dest="orgs_command", required=True
    )
    create = orgs.add_parser("create", parents=[common], help="create an organization")
    create.add_argument("--name", required=True, type=_name_arg)
    create.add_argument("--id", type=uuid_arg)
    create.add_argument("--admin-email", help="the first admin's e-mail: prints their invitation")
    create.add_argument("--admin-name", type=_name_arg, help="the first admin's name")
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
    changed.add_argument(
        "--consolidation",
        choices=[m.value for m in ConsolidationMode],
        help="off (default): no consolidation; review: the curator's sleep cycle links similar "
        "agent skills and proposes merges a person approves",
    )
    changed.add_argument(
        "--satisfaction",
        choices=["on", "off"],
        help="on: when a person releases a conversation they answered, the customer is asked "
        "how it went with three buttons (off by default)",
    )
    changed.add_argument(
        "--satisfaction-buttons",
        nargs=3,
        metavar=("GOOD", "OK", "BAD"),
        help='the three button texts, best first, each at most 20 characters (default "😀 '
        'Ótimo" "😐 Ok" "🙁 Ruim")',
    )
    changed.add_argument(
        "--events-url",
        metavar="URL",
        help="where handoffs, takeovers, releases and messages a person must see are POSTed "
        "(https, a public host); '' clears it",
    )
    changed.add_argument(
        "--events-secret-file",
        metavar="FILE",
        help="a file holding the secret the events are signed with (X-Skillet-Signature; "
        "16 to 512 characters, surrounding whitespace stripped)",
    )
    _hours_options(changed)
    changed.set_defaults(handler=cmd_set)


def _hours_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--business-hours",
        metavar="SCHEDULE",
        help='when people of the business answer, e.g. "seg-sex 09:00-18:00; sab 09:00-13:00" '
        "(a range may pass midnight: \"sex 22:00-02:00\"); '' clears it (always open)",
    )
    parser.add_argument(
        "--timezone",
        metavar="ZONE",
        help="the IANA time zone the hours are in (default America/Sao_Paulo)",
    )
    parser.add_argument(
        "--closed",
        metavar="DATES",
        help="days closed all day, YYYY-MM-DD separated by commas; '' clears them",
    )
    parser.add_argument(
        "--after-hours",
        choices=["answer", "away"],
        help="answer: the agent answers as always (default); away: one away message per "
        "conversation per closed period, then silence until the next opening",
    )
