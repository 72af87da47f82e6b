"""`skillet skills rehearse`: a change tried on an org's own customer messages before it goes
live (rehearsal.run), as the API's POST /v1/rehearsals answers it."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cli.args import CliError, org_command, uuid_arg
from worker.settings import Settings

# A SKILL.md is at most a few KiB (its keywords' body is injected); read no more than this.
MAX_SKILL_FILE_BYTES = 1024 * 1024


def _read_skill_file(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SKILL_FILE_BYTES + 1)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}", code="file_unreadable") from exc
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise CliError(f"{path} is over {MAX_SKILL_FILE_BYTES} bytes", code="file_too_large")
    return data


def _summary(body: dict[str, Any]) -> str:
    lines = [
        f"{body['messages']} mensagens de clientes em {body['days']} dias: "
        f"ganharia {body['gained']} (sondas atendidas {body['probes_served']}), "
        f"perderia {body['lost']}, mudaria {body['moved']}; índice "
        f"{body['index_bytes_before']} -> {body['index_bytes_after']} bytes"
    ]
    for kind, word in (("lost", "perdida"), ("gained", "ganha")):
        for sample in body["samples"][kind]:
            before = ", ".join(sample["before"]) or "-"
            after = ", ".join(sample["after"]) or "-"
            text = " ".join(sample["text"].split())[:80]
            lines.append(f"  {word}: {text!r} ({before} -> {after})")
    return "\n".join(lines)


async def cmd_rehearse(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.db import create_pool
    from rehearsal.changes import requested_change, skill_file
    from rehearsal.run import run_rehearsal

    typed = None if args.skill_file is None else skill_file(_read_skill_file(args.skill_file))
    change_of = requested_change(
        args.org,
        draft=args.draft,
        proposal=args.proposal,
        typed=typed,
        uninstalled=args.uninstall,
    )
    pool = await create_pool(settings.owner_url, min_size=1, max_size=1)
    try:
        rehearsal = await run_rehearsal(
            pool,
            args.org,
            change_of,
            days=settings.rehearsal_days if args.days is None else args.days,
            now=datetime.now(UTC),
            max_matched=settings.max_injected_skills,
        )
    finally:
        await pool.close()
    body = rehearsal.to_json()
    return {**body, "message": _summary(body)}


def add_rehearse_command(
    skills: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    rehearse = org_command(
        skills, common, "rehearse", "try a change on the org's recent customer messages"
    )
    change = rehearse.add_mutually_exclusive_group(required=True)
    change.add_argument("--draft", metavar="NAME", help="the pending draft of NAME")
    change.add_argument("--proposal", metavar="ID", type=uuid_arg, help="a pending proposal")
    change.add_argument("--skill-file", metavar="SKILL.md", type=Path, help="a typed skill")
    change.add_argument("--uninstall", metavar="NAME", help="uninstalling NAME")
    rehearse.add_argument("--days", type=int, help="days of messages (1-90; default 30)")
    rehearse.set_defaults(handler=cmd_rehearse)
