"""`skillet drafts ...` and `skillet audit`: a person decides what the agent knows.

Every decision is written to the org's audit log with the actor `cli` (an operator with a
shell and the owner's database URL); the API records its key's prefix instead.
"""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from cli.args import org_command, uuid_arg
from core.db import connection
from skills.draft_queries import DraftStatus
from worker.settings import Settings

CLI_ACTOR = "cli"
DEFAULT_LIMIT = 50


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.draft_queries import list_drafts

    status = None if args.status == "all" else DraftStatus(args.status)
    async with connection(settings.owner_url) as conn:
        drafts = await list_drafts(conn, args.org, status=status, limit=args.limit)
    lines = [
        f"{d.name}  {d.status.value}  {d.edits} edit(s)  {d.updated_at:%Y-%m-%d %H:%M}Z  "
        f"{d.version.description[:60]}"
        for d in drafts
    ]
    return {
        "drafts": [d.to_json() for d in drafts],
        "message": "\n".join(lines) or f"no {args.status} drafts",
    }


async def cmd_show(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.drafts import show_draft

    async with connection(settings.owner_url) as conn:
        draft, diff = await show_draft(conn, args.org, args.name)
    files = [f"+ {p}" for p in diff.added] + [f"- {p}" for p in diff.removed]
    files += [f"~ {p}" for p in diff.changed]
    message = diff.skill_md or "(SKILL.md unchanged)\n"
    if files:
        message += "files:\n" + "\n".join(files)
    return {**draft.to_json(), "diff": diff.to_json(), "message": message.rstrip()}


async def cmd_approve(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.clock import system_clock
    from skills.drafts import approve_draft
    from skills.usage import UsageStore

    async with connection(settings.owner_url) as conn:
        decision = await approve_draft(
            conn,
            UsageStore(system_clock),
            organization_id=args.org,
            name=args.name,
            actor=CLI_ACTOR,
        )
    return {
        "name": decision.name,
        "status": decision.status.value,
        "before_version_id": _str(decision.before_version_id),
        "after_version_id": _str(decision.after_version_id),
        "reactivated_from": decision.reactivated_from,
        "message": f"{decision.name}: approved, now version {decision.after_version_id}",
    }


async def cmd_reject(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.drafts import reject_draft

    async with connection(settings.owner_url) as conn:
        decision = await reject_draft(
            conn, organization_id=args.org, name=args.name, actor=CLI_ACTOR
        )
    return {
        "name": decision.name,
        "status": decision.status.value,
        "draft_id": str(decision.draft_id),
        "message": f"{decision.name}: draft rejected (kept for the record)",
    }


async def cmd_audit(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.audit import list_audit

    async with connection(settings.owner_url) as conn:
        rows = await list_audit(conn, args.org, limit=args.limit, before_id=args.before)
    entries = [
        {
            "id": r.id,
            "actor": r.entry.actor,
            "action": r.entry.action,
            "outcome": r.entry.outcome,
            "skill": r.entry.skill_name,
            "before_version_id": _str(r.entry.before_version_id),
            "after_version_id": _str(r.entry.after_version_id),
            "detail": r.entry.detail,
            "created_at": r.created_at.isoformat(),
        }
        for r in rows
    ]
    lines = [
        f"{r.created_at:%Y-%m-%d %H:%M:%S}Z  {r.entry.actor}  {r.entry.action}  "
        f"{r.entry.outcome}  {r.entry.skill_name or ''}"
        for r in rows
    ]
    return {"entries": entries, "message": "\n".join(lines) or "no audit entries"}


def _str(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    drafts = sub.add_parser(
        "drafts", help="skills the agent wrote, awaiting a person"
    ).add_subparsers(dest="drafts_command", required=True)
    listed = org_command(drafts, common, "list", "drafts, newest first")
    listed.add_argument(
        "--status", choices=[*(s.value for s in DraftStatus), "all"], default="pending"
    )
    listed.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    listed.set_defaults(handler=cmd_list)
    for name, help_text, handler in (
        ("show", "a pending draft and its diff against the installed version", cmd_show),
        ("approve", "install the draft (refused if the skill changed meanwhile)", cmd_approve),
        ("reject", "refuse the draft (kept for the record)", cmd_reject),
    ):
        command = org_command(drafts, common, name, help_text)
        command.add_argument("name")
        command.set_defaults(handler=handler)

    audit = sub.add_parser("audit", parents=[common], help="an organization's audit log")
    audit.add_argument("--org", type=uuid_arg, required=True, help="organization id")
    audit.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    audit.add_argument("--before", type=int, help="page on: entries older than this id")
    audit.set_defaults(handler=cmd_audit)
