"""`skillet channels templates sync|list --org ORG --address A`: a Cloud API number's
WhatsApp templates, read from its WABA (channels.template_sync) and listed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cli.args import CliError, org_command
from worker.settings import Settings

if TYPE_CHECKING:
    import asyncpg

    from channels.models import Channel


async def _channel(conn: asyncpg.Connection, args: argparse.Namespace) -> Channel:
    from channels.queries import list_channels

    found = [c for c in await list_channels(conn, args.org) if c.address == args.address]
    if not found:
        raise CliError(
            f"the org {args.org} has no number {args.address} (skillet channels list --org ...)",
            code="channel_not_found",
        )
    return found[0]


async def cmd_sync(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    import aiohttp

    from channels.template_queries import fetch_own_token_as_owner, replace_templates
    from channels.template_refresh import sync_target
    from channels.template_sync import GraphAccess, fetch_templates
    from core.db import connection

    async with connection(settings.owner_url) as conn:
        channel = await _channel(conn, args)
        own = await fetch_own_token_as_owner(conn, channel.id)
    token = settings.whatsapp_access_token
    target = sync_target(channel, own, None if token is None else token.get_secret_value())
    access = GraphAccess(settings.graph_api_base_url, target.access_token, settings.send_timeout_s)
    async with aiohttp.ClientSession() as session:  # no connection held meanwhile
        listing = await fetch_templates(session, access, target.waba_id)
    async with connection(settings.owner_url) as conn:
        stored = await replace_templates(
            conn,
            channel.organization_id,
            channel.id,
            listing.templates,
            complete=listing.complete,
        )
    approved = sum(t.approved for t in listing.templates)
    note = "" if listing.complete else f" (stopped after {listing.pages} pages: nothing dropped)"
    return {
        "address": channel.address,
        "templates": len(listing.templates),
        "approved": approved,
        "dropped": stored.dropped,
        "pages": listing.pages,
        "skipped": listing.skipped,
        "complete": listing.complete,
        "message": f"{len(listing.templates)} templates ({approved} approved) from "
        f"WABA {target.waba_id}, {stored.dropped} dropped{note}",
    }


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from channels.template_queries import list_templates
    from core.db import connection

    async with connection(settings.owner_url) as conn:
        channel = await _channel(conn, args)
        templates = await list_templates(conn, channel.id)
    lines = [f"templates of {channel.address} ({len(templates)}):"]
    lines += [
        f"  {t.name} [{t.language}] {t.status} {t.category} {len(t.placeholders)} params"
        for t in templates
    ]
    return {
        "address": channel.address,
        "templates": [t.as_json() for t in templates],
        "message": "\n".join(lines),
    }


def register(
    channels: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """`channels templates ...` under the `channels` command group."""
    group = channels.add_parser("templates", help="a Cloud API number's WhatsApp templates")
    templates = group.add_subparsers(dest="templates_command", required=True)
    sync = org_command(templates, common, "sync", "read the templates from the number's WABA")
    sync.add_argument("--address", required=True, help="the Cloud API phone_number_id")
    sync.set_defaults(handler=cmd_sync)
    listing = org_command(templates, common, "list", "the templates last synced")
    listing.add_argument("--address", required=True, help="the Cloud API phone_number_id")
    listing.set_defaults(handler=cmd_list)
