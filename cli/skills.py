"""`skillet skills ...` and `skillet catalog ...`: the org's skills and the platform catalog.

The curator's `skills pin|unpin|restore` join the same `skills` group through
`cli.curator.add_usage_commands`, called from `register` below.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli import curator as cli_curator
from cli import rehearsals as cli_rehearsals
from cli import skill_editor as cli_skill_editor
from cli.args import CliError, org_command
from cli.files import read_capped
from cli.object_store import command_store
from core.db import connection
from skills.catalog_seed import DEFAULT_CATALOG_DIR
from worker.settings import Settings

if TYPE_CHECKING:
    from skills.catalog import SkillListing


async def cmd_import(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.catalog import ImportStatus, import_skill_package

    limits = settings.package_limits()
    # Read only up to what the package limits could ever accept.
    data = read_capped(
        args.file,
        limits.max_upload_bytes,
        too_large="mais do que um pacote dentro dos limites (SKILLET_PACKAGE_MAX_BYTES) pode "
        "ter. Reduza o pacote.",
        code="skill_too_large",
    )
    async with connection(settings.owner_url) as conn, command_store(settings) as store:
        result = await import_skill_package(
            conn, store, organization_id=args.org, data=data, limits=limits
        )
    if result.status is ImportStatus.UNCHANGED:
        message = f"{result.name}: unchanged (version {result.version_id} already has this content)"
    else:
        message = f"{result.name}: imported as version {result.version_id}"
    if result.reactivated_from:
        message += f" (was {result.reactivated_from}: active again)"
    return {**result.to_json(), "message": message}


async def cmd_install(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.catalog import install_catalog_skill

    async with connection(settings.owner_url) as conn, command_store(settings) as store:
        result = await install_catalog_skill(conn, store, organization_id=args.org, name=args.name)
    message = f"{result.name}: installed from the catalog as version {result.version_id}"
    if result.reactivated_from:
        message += f" (was {result.reactivated_from}: active again)"
    return {**result.to_json(), "message": message}


async def cmd_uninstall(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.catalog import uninstall_skill

    async with connection(settings.owner_url) as conn:
        await uninstall_skill(conn, organization_id=args.org, name=args.name)
    return {"name": args.name, "message": f"{args.name}: uninstalled (its versions are kept)"}


def _write_export(path: Path, data: bytes) -> None:
    """Written beside the target and renamed over it: a reader never sees half a .zip."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise CliError(
            f"não foi possível gravar {str(path)!r}: {exc.strerror or exc}",
            code="file_unwritable",
        ) from exc


async def cmd_export(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.export.installed import export_skill

    async with connection(settings.owner_url) as conn, command_store(settings) as store:
        data = await export_skill(conn, store, organization_id=args.org, name=args.name)
    _write_export(args.out, data)
    return {
        "name": args.name,
        "out": str(args.out),
        "bytes": len(data),
        "message": f"{args.name}: exported to {args.out} ({len(data)} bytes)",
    }


def _listing_text(listing: SkillListing) -> str:
    lines = [f"installed ({len(listing.installed)}):"]
    for s in listing.installed:
        state = "" if s.state == "active" else f" [{s.state}]"
        lines.append(f"  {s.name}  {s.source}  {s.version_id}{state}  {s.description}")
    lines.append(f"catalog ({len(listing.catalog)}):")
    lines.extend(f"  {s.name}  {s.description}" for s in listing.catalog)
    return "\n".join(lines)


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.catalog import list_skills

    async with connection(settings.owner_url) as conn:
        listing = await list_skills(conn, organization_id=args.org)
    return {**listing.to_json(), "message": _listing_text(listing)}


async def cmd_catalog_seed(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from skills.catalog_seed import seed_catalog

    async with connection(settings.owner_url) as conn, command_store(settings) as store:
        seeded = await seed_catalog(conn, store, args.dir, settings.package_limits())
    lines = [f"{r.name}: {r.status} ({r.version_id})" for r in seeded.results]
    return {"seeded": [r.to_json() for r in seeded.results], "message": "\n".join(lines)}


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add this module's commands to the `skillet` parser (each takes `common` for --json)."""
    skills = sub.add_parser("skills", help="an organization's skills").add_subparsers(
        dest="skills_command", required=True
    )
    imported = org_command(skills, common, "import", "import (or customize) a skill .zip")
    imported.add_argument("file", type=Path, help="the skill package (.zip)")
    imported.set_defaults(handler=cmd_import)
    install = org_command(skills, common, "install", "install a skill from the catalog")
    install.add_argument("name")
    install.set_defaults(handler=cmd_install)
    uninstall = org_command(skills, common, "uninstall", "uninstall a skill (history is kept)")
    uninstall.add_argument("name")
    uninstall.set_defaults(handler=cmd_uninstall)
    export = org_command(skills, common, "export", "write a skill as an Agent Skills .zip")
    export.add_argument("name")
    export.add_argument("--out", type=Path, required=True, help="the .zip to write")
    export.set_defaults(handler=cmd_export)
    org_command(skills, common, "list", "installed skills and the catalog").set_defaults(
        handler=cmd_list
    )
    cli_curator.add_usage_commands(skills, common)
    cli_rehearsals.add_rehearse_command(skills, common)
    cli_skill_editor.register(skills, common)

    catalog = sub.add_parser("catalog", help="the platform catalog").add_subparsers(
        dest="catalog_command", required=True
    )
    seed = catalog.add_parser("seed", parents=[common], help="publish the catalog (idempotent)")
    seed.add_argument(
        "--dir",
        type=Path,
        default=DEFAULT_CATALOG_DIR,
        help="folder of skill package folders (default: the catalog shipped in skillet_data/)",
    )
    seed.set_defaults(handler=cmd_catalog_seed)
