"""`skillet api` (the admin HTTP API) and `skillet api-keys create|list|revoke`.

Keys are made here by an operator with the owner's database URL: the first admin key of an
org can come from nowhere else. Each change is written to the org's audit log (actor `cli`).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

from api.keys import Role
from cli.args import CliError, org_command
from cli.channels import port_arg
from core.db import connection
from worker.settings import Settings

CLI_ACTOR = "cli"
MINT_ATTEMPTS = 5


async def cmd_api(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from worker.api_process import serve_api

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        await serve_api(
            settings,
            args.host or settings.api_host,
            args.port if args.port is not None else settings.api_port,
            stop,
        )
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
    return {"message": "api stopped"}


async def cmd_create(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from api.key_queries import insert_api_key
    from api.keys import mint_key
    from core.audit import AuditEntry, insert_audit
    from skills.catalog_queries import fetch_organization_exists

    role = Role(args.role)
    async with connection(settings.owner_url) as conn, conn.transaction():
        if not await fetch_organization_exists(conn, args.org):
            raise CliError(f"organization {args.org} does not exist", code="organization_not_found")
        for _ in range(MINT_ATTEMPTS):
            minted = mint_key()
            created = await insert_api_key(conn, args.org, minted, role, args.name)
            if created is not None:
                break
        else:
            raise CliError("could not mint a unique key prefix; try again", code="key_collision")
        await insert_audit(
            conn,
            AuditEntry(
                args.org,
                CLI_ACTOR,
                "api_key.create",
                detail={"prefix": created.prefix, "role": role.value},
            ),
        )
    return {
        "key": minted.key,
        "prefix": created.prefix,
        "role": role.value,
        "name": created.name,
        "message": f"{minted.key}\n(role {role.value}; shown once: store it now. "
        f"Revoke with `skillet api-keys revoke {created.prefix} --org {args.org}`)",
    }


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from api.key_queries import list_api_keys

    async with connection(settings.owner_url) as conn:
        keys = await list_api_keys(conn, args.org)
    lines = [
        f"{k.prefix}  {k.role.value:<6}  {'revoked' if k.revoked_at else 'live   '}  {k.name or ''}"
        for k in keys
    ]
    return {"keys": [k.to_json() for k in keys], "message": "\n".join(lines) or "no keys"}


async def cmd_revoke(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from api.key_queries import update_api_key_revoked
    from core.audit import AuditEntry, insert_audit

    async with connection(settings.owner_url) as conn, conn.transaction():
        key = await update_api_key_revoked(conn, args.org, args.prefix)
        if key is None:
            raise CliError(
                f"organization {args.org} has no key {args.prefix}", code="api_key_not_found"
            )
        await insert_audit(
            conn,
            AuditEntry(args.org, CLI_ACTOR, "api_key.revoke", detail={"prefix": args.prefix}),
        )
    return {**key.to_json(), "message": f"{args.prefix} revoked"}


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add `api` and `api-keys` to the `skillet` parser."""
    api = sub.add_parser("api", parents=[common], help="run the admin HTTP API")
    api.add_argument("--host", help="listen address (default SKILLET_API_HOST)")
    api.add_argument("--port", type=port_arg, help="listen port (default SKILLET_API_PORT)")
    api.set_defaults(handler=cmd_api)

    keys = sub.add_parser("api-keys", help="an organization's admin API keys").add_subparsers(
        dest="api_keys_command", required=True
    )
    create = org_command(keys, common, "create", "create a key (printed once)")
    create.add_argument("--role", required=True, choices=[r.value for r in Role])
    create.add_argument("--name", help="what the key is for, e.g. painel-da-loja")
    create.set_defaults(handler=cmd_create)
    org_command(keys, common, "list", "the org's keys (prefixes, never the keys)").set_defaults(
        handler=cmd_list
    )
    revoke = org_command(keys, common, "revoke", "revoke a key at once")
    revoke.add_argument("prefix", help="the key's prefix, e.g. skt_ab12cd34")
    revoke.set_defaults(handler=cmd_revoke)
