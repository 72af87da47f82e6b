"""`skillet channels ...` and `skillet webhook`: WhatsApp numbers and ingress."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from channels.models import ChannelStatus, masked
from cli import channel_templates
from cli.args import CliError, uuid_arg
from cli.channel_credentials import add_credential_args, register_move
from core.channel_kind import ChannelKind
from core.db import connection
from worker.settings import Settings

if TYPE_CHECKING:
    import uuid

    import asyncpg

    from channels.models import Channel
    from webhook.config import WebhookConfig

# Same rule as the `channels.address` check constraint (channels_address_check).
_ADDRESS_RE = re.compile(r"^[0-9A-Za-z._:-]{1,128}$")


def _line(channel: Channel) -> str:
    phone = f"  {channel.display_phone}" if channel.display_phone else ""
    agent = f"  agent {channel.agent_id}" if channel.agent_id else ""
    non_text = "  replies to non-text" if channel.reply_to_non_text else ""
    token = f"  token {masked(channel.access_token_last4)}" if channel.access_token_last4 else ""
    waba = f"  waba {channel.waba_id}" if channel.waba_id else ""
    waha = f"  waha {channel.waha_base_url}" if channel.waha_base_url else ""
    status = "  NEEDS TOKEN" if channel.status is ChannelStatus.NEEDS_TOKEN else ""
    return (
        f"{channel.kind.value}  {channel.address}{phone}  org {channel.organization_id}"
        f"{agent}{non_text}{waba}{token}{waha}{status}"
    )


async def _check_agent(conn: asyncpg.Connection, agent_id: uuid.UUID, org: uuid.UUID) -> None:
    from turn.agent_queries import fetch_agent

    agent = await fetch_agent(conn, agent_id)
    if agent is None or agent.organization_id != org:
        raise CliError(f"agent {agent_id} is not an agent of {org}", code="agent_not_found")


async def cmd_add(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """Connect a number: its proof first (its own token or server, else the global ones),
    then the row and its secrets in one transaction."""
    from channels.connect import NewChannel, insert_proven_channel
    from channels.ownership import ChannelClaimedElsewhere
    from cli.channel_credentials import cli_error, credentials_from_args, prover, store_secrets
    from core.errors import SkilletError
    from turn.agent_queries import fetch_org_agent

    if not _ADDRESS_RE.match(args.address):
        raise CliError(
            f"not a phone_number_id or session name: {args.address!r}", code="invalid_address"
        )
    kind = ChannelKind(args.kind)
    given = credentials_from_args(kind, args)
    try:
        async with prover(settings) as proving:
            proven = await proving.prove(kind, args.address, given, operator=True)
        async with connection(settings.owner_url) as conn, conn.transaction():
            if await fetch_org_agent(conn, args.org) is None:
                raise CliError(
                    f"organization {args.org} does not exist", code="organization_not_found"
                )
            if args.agent:
                await _check_agent(conn, args.agent, args.org)
            wanted = NewChannel(
                organization_id=args.org,
                kind=kind,
                address=args.address,
                agent_id=args.agent,
                display_phone=args.display_phone,
                reply_to_non_text=args.reply_to_non_text,
            )
            channel = await insert_proven_channel(conn, wanted, given, proven)
            await store_secrets(conn, channel, given)
    except CliError:
        raise
    except ChannelClaimedElsewhere as exc:  # the operator may know whose it is
        owner = await _owner(settings, kind, args.address)
        raise CliError(
            f"{args.kind} {args.address} is proven by this token but connected to {owner}: "
            f"skillet channels move --kind {args.kind} --address {args.address} --to {args.org}",
            code=exc.code,
        ) from exc
    except SkilletError as exc:
        raise cli_error(exc) from exc
    return {**channel.as_json(), "message": f"connected: {_line(channel)}"}


async def _owner(settings: Settings, kind: ChannelKind, address: str) -> str:
    from channels.queries import fetch_channel_by_address

    async with connection(settings.owner_url) as conn:
        found = await fetch_channel_by_address(conn, kind, address)
    return "another organization" if found is None else str(found.organization_id)


async def cmd_list(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from channels.queries import list_channels

    async with connection(settings.owner_url) as conn:
        channels = await list_channels(conn, args.org)
    lines = [f"channels ({len(channels)}):", *(f"  {_line(c)}" for c in channels)]
    return {"channels": [c.as_json() for c in channels], "message": "\n".join(lines)}


def _waha_key(args: argparse.Namespace) -> str | None:
    """The key given by --waha-hmac-key, --waha-hmac-key-file (`-`: stdin) or
    --waha-hmac-key-env (the last two keep it out of shell history and `ps`)."""
    from channels.waha_key_queries import MAX_KEY_CHARS, MIN_KEY_CHARS

    if args.waha_hmac_key is not None:
        raw = args.waha_hmac_key
    elif args.waha_hmac_key_file is not None:
        path = args.waha_hmac_key_file
        raw = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    elif args.waha_hmac_key_env is not None:
        raw = os.environ.get(args.waha_hmac_key_env)
        if raw is None:
            raise CliError(f"{args.waha_hmac_key_env} is not set", code="invalid_waha_hmac_key")
    else:
        return None
    key: str = raw.strip()  # a file's trailing newline is not part of the key
    if not MIN_KEY_CHARS <= len(key) <= MAX_KEY_CHARS:
        raise CliError(
            f"the WAHA HMAC key must have {MIN_KEY_CHARS} to {MAX_KEY_CHARS} characters "
            f"(got {len(key)})",
            code="invalid_waha_hmac_key",
        )
    return key


async def cmd_set(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from channels.queries import UNCHANGED, fetch_channel_by_address, update_channel
    from cli.channel_credentials import (
        apply_credentials,
        credentials_from_args,
        prove_change,
        wake_waiting,
    )

    kind = ChannelKind(args.kind)
    key = _waha_key(args)
    given = credentials_from_args(kind, args)
    secrets = given.access_token is not None or given.waha_api_key is not None
    changes_creds = secrets or given.waba_id is not None or given.waha_base_url is not None
    changes_key = key is not None or args.no_waha_hmac_key
    changes_channel = args.agent is not None or args.no_agent or args.reply_to_non_text is not None
    if not changes_channel and not changes_key and not changes_creds:
        raise CliError(
            "nothing to change: give --agent, --no-agent, --reply-to-non-text, "
            "--no-reply-to-non-text, --access-token-file, --waba-id, --waha-base-url, "
            "--waha-api-key-file, --waha-hmac-key(-file/-env) or --no-waha-hmac-key",
            code="nothing_to_change",
        )
    if changes_key and kind is not ChannelKind.WAHA:
        raise CliError("only WAHA channels have a webhook HMAC key", code="not_a_waha_channel")
    async with connection(settings.owner_url) as conn:
        channel = await fetch_channel_by_address(conn, kind, args.address)
        if channel is None:
            raise CliError(f"{args.kind} {args.address} is not connected", code="channel_not_found")
        await prove_change(settings, channel, given)
        async with conn.transaction():
            if args.agent is not None:
                await _check_agent(conn, args.agent, channel.organization_id)
            agent = None if args.no_agent else (args.agent or UNCHANGED)
            reply = UNCHANGED if args.reply_to_non_text is None else args.reply_to_non_text
            updated = await update_channel(
                conn, kind, args.address, agent_id=agent, reply_to_non_text=reply
            )
            if updated is None:
                raise CliError(
                    f"{args.kind} {args.address} is not connected", code="channel_not_found"
                )
            if changes_creds:
                updated = await apply_credentials(conn, updated, given)
            own_key = await _set_waha_key(conn, updated, key, remove=args.no_waha_hmac_key)
        woken = await wake_waiting(settings, conn, updated.organization_id) if secrets else 0
    answer: dict[str, Any] = {**updated.as_json(), "message": f"updated: {_line(updated)}"}
    if own_key is not None:  # never the key itself: only whether the channel has one
        answer["waha_hmac_key"] = "own" if own_key else "global"
        answer["message"] += "  own WAHA key" if own_key else "  global WAHA key"
    if woken:
        answer["resumed_conversations"] = woken
        answer["message"] += f"\n{woken} conversation(s) with replies waiting resumed"
    return answer


async def _set_waha_key(
    conn: asyncpg.Connection, channel: Channel, key: str | None, *, remove: bool
) -> bool | None:
    """Whether the channel now has its own key; None for a channel that is not WAHA."""
    from channels.waha_key_queries import (
        delete_waha_channel_key,
        fetch_has_waha_channel_key,
        upsert_waha_channel_key,
    )

    if channel.kind is not ChannelKind.WAHA:
        return None
    if key is not None:
        await upsert_waha_channel_key(conn, channel, key)
    elif remove:
        await delete_waha_channel_key(conn, channel.id)
    return await fetch_has_waha_channel_key(conn, channel.id)


async def cmd_remove(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from channels.queries import delete_channel

    async with connection(settings.owner_url) as conn:
        channel = await delete_channel(conn, ChannelKind(args.kind), args.address)
    if channel is None:
        raise CliError(f"{args.kind} {args.address} is not connected", code="channel_not_found")
    return {**channel.as_json(), "message": f"disconnected: {_line(channel)}"}


def webhook_config(settings: Settings) -> WebhookConfig:
    from inbox.reactions import negative_set
    from webhook.config import WebhookConfig

    def secret(value: Any) -> str | None:
        return (value.get_secret_value() or None) if value is not None else None

    return WebhookConfig(
        app_secret=secret(settings.whatsapp_app_secret),
        verify_token=secret(settings.whatsapp_verify_token),
        waha_hmac_key=secret(settings.waha_hmac_key),
        max_body_bytes=settings.webhook_max_body_bytes,
        coalesce_ms=settings.coalesce_ms,
        # Only where WAHA sends us events: ask it for the phone behind a new `@lid`.
        # (WAHA channels may have keys of their own and no global one: not a WAHA signal.)
        waha_base_url=settings.waha_base_url if settings.waha_lid_lookup else None,
        waha_api_key=secret(settings.waha_api_key),
        transcribes_voice=settings.transcribe_base_url is not None or settings.voice_ask_to_type,
        negative_reactions=negative_set(settings.negative_reactions),
    )


async def cmd_webhook(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from webhook.server import ServerConfig, serve

    server = ServerConfig(
        host=args.host or settings.webhook_host,
        port=args.port if args.port is not None else settings.webhook_port,
        database_url=settings.database_url,
        redis_url=settings.redis_url,
        queue_name=settings.queue_name,
        db_pool_max_size=settings.db_pool_max_size,
        tenant_secret=settings.tenant_secret_value(),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        await serve(webhook_config(settings), server, stop)
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
    return {"message": "webhook stopped"}


def port_arg(value: str) -> int:
    port = int(value)
    if not 0 <= port <= 65_535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {value}")
    return port


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add this module's commands to the `skillet` parser (each takes `common` for --json)."""
    kinds = [k.value for k in ChannelKind]
    channels = sub.add_parser("channels", help="connected WhatsApp numbers").add_subparsers(
        dest="channels_command", required=True
    )
    add = channels.add_parser("add", parents=[common], help="connect a number to an org")
    add.add_argument("--org", type=uuid_arg, required=True)
    add.add_argument("--kind", choices=kinds, required=True)
    add.add_argument(
        "--address", required=True, help="Cloud API phone_number_id, or WAHA session name"
    )
    add.add_argument("--agent", type=uuid_arg, help="the org's agent that answers this number")
    add.add_argument("--display-phone", help="the number as people see it, e.g. +55 11 4000-0000")
    add.add_argument(
        "--reply-to-non-text",
        action="store_true",
        help="answer images, audios, locations, ... too (default: store them as context only)",
    )
    add_credential_args(add)
    add.set_defaults(handler=cmd_add)
    change = channels.add_parser("set", parents=[common], help="change a connected number")
    change.add_argument("--kind", choices=kinds, required=True)
    change.add_argument("--address", required=True)
    who = change.add_mutually_exclusive_group()
    who.add_argument("--agent", type=uuid_arg, help="the org's agent that answers this number")
    who.add_argument("--no-agent", action="store_true", help="answer with the org's first agent")
    change.add_argument(
        "--reply-to-non-text",
        action=argparse.BooleanOptionalAction,
        help="answer images, audios, locations, ... too",
    )
    keys = change.add_mutually_exclusive_group()
    keys.add_argument(
        "--waha-hmac-key",
        metavar="KEY",
        help="this WAHA session's own webhook hmac.key (visible in shell history: prefer "
        "--waha-hmac-key-file or --waha-hmac-key-env)",
    )
    keys.add_argument(
        "--waha-hmac-key-file", metavar="PATH", help="read the key from a file (-: stdin)"
    )
    keys.add_argument("--waha-hmac-key-env", metavar="VAR", help="read the key from an env var")
    keys.add_argument(
        "--no-waha-hmac-key",
        action="store_true",
        help="drop this session's own key (it falls back to SKILLET_WAHA_HMAC_KEY)",
    )
    add_credential_args(change)
    change.set_defaults(handler=cmd_set)
    listing = channels.add_parser("list", parents=[common], help="connected numbers")
    listing.add_argument("--org", type=uuid_arg)
    listing.set_defaults(handler=cmd_list)
    remove = channels.add_parser("remove", parents=[common], help="disconnect a number")
    remove.add_argument("--kind", choices=kinds, required=True)
    remove.add_argument("--address", required=True)
    remove.set_defaults(handler=cmd_remove)
    register_move(channels, common)
    channel_templates.register(channels, common)

    webhook = sub.add_parser("webhook", parents=[common], help="run the WhatsApp webhook")
    webhook.add_argument("--host", help="listen address (default SKILLET_WEBHOOK_HOST)")
    webhook.add_argument("--port", type=port_arg, help="listen port (default SKILLET_WEBHOOK_PORT)")
    webhook.set_defaults(handler=cmd_webhook)
