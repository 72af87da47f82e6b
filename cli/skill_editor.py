"""`skillet skills show|versions|edit|rollback`: the skill editor from the terminal.

The same service as the API and the console (skills.editing, skills.skill_view), on the
owner's connection with the operator's `--org`; writes are audited with the actor `cli`.
`edit` takes a whole SKILL.md: its frontmatter's name must be NAME (`skill_name_mismatch`),
and a change to an existing skill needs the version it starts from (`--base`, else
`base_required`), so an edit never silently overwrites someone else's.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path
from typing import Any

from cli.args import CliError, org_command, uuid_arg
from cli.files import read_capped
from cli.object_store import command_store
from core.db import connection
from worker.settings import Settings

CLI_ACTOR = "cli"


async def cmd_show(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from api.skill_detail import show_skill

    async with connection(settings.owner_url) as conn:
        view = await show_skill(conn, args.org, args.name)
    shown = view.to_json()
    lines = [
        f"{shown['name']}  {shown['version_id']}  {shown['created_via']}  [{shown['state']}]",
        f"description: {shown['description']}",
        f"keywords: {shown['keywords'] or '-'}",
        f"probe keywords: {shown['probe_keywords'] or '-'}",
        "",
        shown["body"],
    ]
    if shown["files"]:
        lines.append("")
        lines.extend(
            f"  {f['path']}  {f['size']} bytes  {f['read_count']} reads" for f in shown["files"]
        )
    return {**shown, "message": "\n".join(lines)}


def _who(item: dict[str, Any]) -> str:
    author = item.get("author")
    if author is None:
        return str(item["created_via"])
    name = author.get("key_name")
    key = author["key_prefix"]
    return f"{item['created_via']} by {name} ({key})" if name else f"{item['created_via']} by {key}"


async def cmd_versions(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.editing_queries import fetch_pointed_record, list_skill_versions
    from skills.skill_view import version_json

    async with connection(settings.owner_url) as conn:
        current = await fetch_pointed_record(conn, args.org, args.name)
        rows = await list_skill_versions(conn, args.org, args.name, before=None, limit=args.limit)
    if not rows:
        raise CliError(
            f"a skill {args.name!r} não tem versões nesta organização", code="skill_not_installed"
        )
    current_id = None if current is None else current.version.version_id
    items = []
    for record in rows:
        item = version_json(record, current=record.version.version_id == current_id)
        del item["body"]
        items.append(item)
    lines = [
        f"{'*' if i['current'] else ' '} {i['version_id']}  {i['created_at']}  {_who(i)}"
        for i in items
    ]
    return {"name": args.name, "items": items, "message": "\n".join(lines)}


async def cmd_edit(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.catalog_errors import SkillAlreadyInstalled
    from skills.editing import Editor, publish_skill_md
    from skills.editing_errors import BaseRequired

    limits = settings.package_limits()
    skill_md = read_capped(
        args.from_file,
        limits.max_file_bytes,
        too_large="mais do que um SKILL.md pode ter.",
        code="skill_file_too_large",
    )
    async with connection(settings.owner_url) as conn, command_store(settings) as store:
        try:
            result = await publish_skill_md(
                conn,
                store,
                organization_id=args.org,
                name=args.name,
                base_version_id=args.base,
                skill_md=skill_md,
                editor=Editor(CLI_ACTOR),
                limits=limits,
            )
        except SkillAlreadyInstalled:
            if args.base is not None:
                raise
            raise BaseRequired(args.name) from None
    verb = "created" if result.created else "new version"
    message = f"{result.name}: {verb} {result.version_id}"
    return {**result.to_json(), "message": message}


async def cmd_rollback(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.editing import Editor, rollback_skill
    from skills.editing_queries import fetch_pointed_record

    async with connection(settings.owner_url) as conn:
        current = await fetch_pointed_record(conn, args.org, args.name)
        base: uuid.UUID = args.to if current is None else current.version.version_id
        result = await rollback_skill(
            conn,
            organization_id=args.org,
            name=args.name,
            version_id=args.to,
            base_version_id=args.base or base,
            editor=Editor(CLI_ACTOR),
        )
    message = f"{result.name}: back to {result.version_id} (was {result.base_version_id})"
    return {**result.to_json(), "message": message}


def register(
    skills: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    show = org_command(skills, common, "show", "a skill's current version, files and reads")
    show.add_argument("name")
    show.set_defaults(handler=cmd_show)
    versions = org_command(skills, common, "versions", "a skill's versions, newest first")
    versions.add_argument("name")
    versions.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    versions.set_defaults(handler=cmd_versions)
    edit = org_command(skills, common, "edit", "publish a SKILL.md as a skill's new version")
    edit.add_argument("name")
    edit.add_argument("--from-file", type=Path, required=True, help="the SKILL.md to publish")
    edit.add_argument(
        "--base", type=uuid_arg, default=None, help="the version the edit starts from"
    )
    edit.set_defaults(handler=cmd_edit)
    rollback = org_command(skills, common, "rollback", "point a skill back at an older version")
    rollback.add_argument("name")
    rollback.add_argument("--to", type=uuid_arg, required=True, help="the version to go back to")
    rollback.add_argument(
        "--base",
        type=uuid_arg,
        default=None,
        help="refuse unless the skill is still at this version (default: whatever it is now)",
    )
    rollback.set_defaults(handler=cmd_rollback)
