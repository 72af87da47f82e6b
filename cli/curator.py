"""`skillet curator run` and the usage commands `skillet skills pin|unpin|restore`.

`register` adds `curator`; the `skills` parser belongs to cli/skills.py, which calls
`add_usage_commands(skills_subparsers, common)` to add pin/unpin/restore to it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from cli import consolidation as cli_consolidation
from cli.args import aware_datetime_arg, uuid_arg
from core.clock import system_clock
from core.db import connection
from skills.curator import CuratorReport
from skills.curator.run import PassOptions, run_curator, run_curator_all
from skills.usage import UsageStore
from worker.crons import curator_policy
from worker.settings import Settings


async def cmd_curator_run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """One pass now (or at `--now`, a replay): one org, or every org."""
    options = PassOptions(
        now=args.now or system_clock(),
        policy=curator_policy(settings),
        replayed=args.now is not None,
        dry_run=args.dry_run,
        chunk_orgs=settings.curator_chunk_orgs,
    )
    async with connection(settings.owner_url) as conn:
        if args.org is not None:
            reports = [await run_curator(conn, args.org, options)]
        else:
            reports = await run_curator_all(conn, options)
    meta = {"ran_at": options.now.isoformat(), "dry_run": options.dry_run}
    if args.org is not None:
        return {**reports[0].to_json(), **meta, "message": _describe(reports, options.dry_run)}
    return {
        "runs": [r.to_json() for r in reports],
        **meta,
        "message": _describe(reports, options.dry_run),
    }


def _describe(reports: Sequence[CuratorReport], dry_run: bool) -> str:
    moves = [f"{t.name} {t.from_state}->{t.to_state}" for r in reports for t in r.transitioned]
    skipped = sum(len(r.skipped) for r in reports)
    verb = "would transition" if dry_run else "transitioned"
    shown = f": {', '.join(moves[:10])}" + (" ..." if len(moves) > 10 else "") if moves else ""
    return f"{len(reports)} org(s), {len(moves)} {verb}{shown}; {skipped} skipped"


async def cmd_skills_pin(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    return await _set_pinned(args, settings, pinned=True)


async def cmd_skills_unpin(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    return await _set_pinned(args, settings, pinned=False)


async def _set_pinned(
    args: argparse.Namespace, settings: Settings, *, pinned: bool
) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn:
        record = await UsageStore(system_clock).set_pinned(conn, args.org, args.name, pinned)
    word = "pinned" if pinned else "unpinned"
    return {
        "name": record.skill_name,
        "pinned": record.pinned,
        "state": record.state,
        "message": f"{record.skill_name} {word} (state {record.state})",
    }


async def cmd_skills_restore(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    async with connection(settings.owner_url) as conn:
        restored = await UsageStore(system_clock).restore(conn, args.org, args.name)
    record = restored.record
    message = f"{record.skill_name} restored: {restored.previous_state} -> {record.state}"
    if restored.absorbed_into is not None:
        message += (
            f"; it had been absorbed into {restored.absorbed_into}, which keeps its keywords: "
            "both may match until a person edits one"
        )
    return {
        "name": record.skill_name,
        "state": record.state,
        "previous_state": restored.previous_state,
        "absorbed_into": restored.absorbed_into,
        "last_activity_at": record.last_activity_at.isoformat()
        if record.last_activity_at
        else None,
        "message": message,
    }


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add `curator run|consolidate|proposals` to the `skillet` parser (each command takes
    `common` for --json)."""
    curator = sub.add_parser("curator", help="the idle-skill curator").add_subparsers(
        dest="curator_command", required=True
    )
    run = curator.add_parser(
        "run", parents=[common], help="move idle agent skills active -> stale -> archived"
    )
    run.add_argument("--org", type=uuid_arg, help="one organization (default: all)")
    run.add_argument("--now", type=aware_datetime_arg, help="the clock for a replay (ISO 8601)")
    run.add_argument("--dry-run", action="store_true", help="report without writing anything")
    run.set_defaults(handler=cmd_curator_run)
    cli_consolidation.add_commands(curator, common)


def add_usage_commands(
    skills_sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    """Add `pin`, `unpin` and `restore` to the `skills` sub-parsers (owned by cli_skills)."""
    commands = (
        ("pin", cmd_skills_pin, "exempt a skill from the curator"),
        ("unpin", cmd_skills_unpin, "let the curator manage a skill again"),
        ("restore", cmd_skills_restore, "bring an archived skill back as active"),
    )
    for name, handler, help_text in commands:
        parser = skills_sub.add_parser(name, parents=[common], help=help_text)
        parser.add_argument("name", help="the skill's name")
        parser.add_argument("--org", type=uuid_arg, required=True)
        parser.set_defaults(handler=handler)
