"""`skillet curator consolidate` and `skillet curator proposals list|show|approve|reject`.

`cli.curator.register` calls `add_commands(curator_subparsers, common)`. Decisions are
audited with the actor `cli`, like drafts.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

from cli.args import org_command, uuid_arg
from cli.object_store import command_store
from core.clock import system_clock
from core.db import connection
from worker.settings import Settings

if TYPE_CHECKING:
    from consolidation.proposal_queries import Proposal

CLI_ACTOR = "cli"


async def cmd_consolidate(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from consolidation.run import consolidate_org
    from worker.crons import consolidation_config
    from worker.model_providers import build_model_registry, model_http

    async with (
        model_http(settings) as http,
        connection(settings.owner_url) as conn,
        command_store(settings) as store,
    ):
        # The agents' models, as the tick has them: a real one may rewrite umbrella bodies.
        models = build_model_registry(settings, http)
        config = dataclasses.replace(consolidation_config(settings), models=models)
        report = await consolidate_org(
            conn,
            store,
            args.org,
            config,
            now=system_clock(),
            force=args.force,
            dry_run=args.dry_run,
        )
    out = report.to_json()
    if not report.ran or report.skipped_reason:
        message = f"skipped: {report.skipped_reason} (index {report.index_bytes} bytes)"
    else:
        verb = "would propose" if args.dry_run else "proposed"
        fallback = f", fallback from {report.fallback_from}" if report.fallback_from else ""
        lines = [
            f"{len(report.links)} link(s) ({report.backend}{fallback}), {verb} "
            f"{len(report.proposals)} merge(s); index {report.index_bytes} bytes"
        ]
        lines += [
            f"  {p.umbrella} <- {', '.join(p.absorbs)}  "
            f"({p.index_bytes_before} -> {p.index_bytes_after} bytes; body: {p.rewrite})  "
            f"{p.id or ''}".rstrip()
            for p in report.proposals
        ]
        lines += [
            f"  not proposed ({n['reason']}: {n['rule']}): {n['umbrella']} <- "
            f"{', '.join(n['absorbs'])}"
            for n in report.not_proposed
        ]
        message = "\n".join(lines)
    return {**out, "message": message}


def _line(p: Proposal) -> str:
    return (
        f"{p.id}  {p.status}  {p.umbrella} <- {', '.join(p.absorbs)}  "
        f"({p.index_bytes_before} -> {p.index_bytes_after} bytes; body: {p.rewrite})"
    )


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from consolidation.decide import list_org_proposals

    status = None if args.status == "all" else args.status
    async with connection(settings.owner_url) as conn:
        proposals = await list_org_proposals(conn, args.org, status)
    return {
        "proposals": [p.to_json() for p in proposals],
        "message": "\n".join(_line(p) for p in proposals) or f"no {args.status} proposals",
    }


async def cmd_show(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from consolidation.decide import show_proposal

    async with connection(settings.owner_url) as conn:
        view = await show_proposal(conn, args.org, args.id)
    p = view.proposal
    members = [
        f"  {m.role:8}  {m.name}  {m.uses_30d} use(s) in 30 days"
        + ("" if m.score is None else f"  similarity {m.score:.2f}")
        for m in p.members
    ]
    files = [f"+ {path}" for path in view.diff.added] + [f"- {path}" for path in view.diff.removed]
    message = "\n".join([_line(p), *members, view.diff.skill_md.rstrip(), *files])
    return {**p.to_json(), "diff": view.diff.to_json(), "message": message}


async def cmd_approve(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from consolidation.decide import approve_proposal
    from skills.usage import UsageStore

    async with connection(settings.owner_url) as conn:
        p = await approve_proposal(
            conn,
            UsageStore(system_clock),
            organization_id=args.org,
            proposal_id=args.id,
            actor=CLI_ACTOR,
            now=system_clock(),
        )
    message = f"{p.umbrella}: approved; absorbed (archived): {', '.join(p.absorbs)}"
    return {**p.to_json(), "message": message}


async def cmd_reject(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from consolidation.decide import reject_proposal

    async with connection(settings.owner_url) as conn:
        p = await reject_proposal(
            conn, organization_id=args.org, proposal_id=args.id, actor=CLI_ACTOR
        )
    return {**p.to_json(), "message": f"proposal {p.id} rejected (nothing changed)"}


def add_commands(
    curator: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    consolidate = org_command(
        curator, common, "consolidate", "associate similar skills and propose merges now"
    )
    consolidate.add_argument(
        "--force", action="store_true", help="skip the watermark and memory-pressure gates"
    )
    consolidate.add_argument("--dry-run", action="store_true", help="report, write nothing")
    consolidate.set_defaults(handler=cmd_consolidate)

    proposals = curator.add_parser("proposals", help="merges waiting for a person").add_subparsers(
        dest="proposals_command", required=True
    )
    listed = org_command(proposals, common, "list", "proposals, newest first")
    listed.add_argument(
        "--status",
        choices=["pending", "approved", "rejected", "expired", "all"],
        default="pending",
    )
    listed.set_defaults(handler=cmd_list)
    for name, handler, help_text in (
        ("show", cmd_show, "a proposal, its members and the umbrella's diff"),
        ("approve", cmd_approve, "merge: the umbrella's new version, the others archived"),
        ("reject", cmd_reject, "keep every skill as it is"),
    ):
        parser = org_command(proposals, common, name, help_text)
        parser.add_argument("id", type=uuid_arg, help="the proposal's id")
        parser.set_defaults(handler=handler)
