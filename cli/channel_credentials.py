"""A number's own credentials on the CLI: `--access-token-file`, `--waba-id`,
`--waha-base-url`, `--waha-api-key-file`, the proof `channels add|set` asks for them, and
`skillet channels move` (an operator's: a number proven by another org)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from channels.connect import Credentials, Prover, check_credentials
from cli.args import CliError, uuid_arg
from core.channel_kind import ChannelKind
from core.db import connection
from core.errors import SkilletError
from worker.settings import Settings

if TYPE_CHECKING:
    import uuid

    import asyncpg

    from channels.models import Channel

CLI_ACTOR = "cli"
MAX_SECRET_FILE_CHARS = 16_384  # a token is at most 4,096: more is not a token file


def add_credential_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--access-token-file",
        metavar="PATH",
        help="this Cloud API number's own access token, read from a file (-: stdin); "
        "default: SKILLET_WHATSAPP_ACCESS_TOKEN",
    )
    parser.add_argument("--waba-id", help="its WhatsApp Business Account id (Cloud API)")
    parser.add_argument(
        "--waha-base-url", metavar="URL", help="this WAHA session's own server (default: shared)"
    )
    parser.add_argument(
        "--waha-api-key-file",
        metavar="PATH",
        help="that server's API key, read from a file (-: stdin)",
    )


def _read_secret(path: str | None) -> str | None:
    """A file's content without surrounding whitespace (a trailing newline is no part of it)."""
    if path is None:
        return None
    try:
        if path == "-":
            raw = sys.stdin.read(MAX_SECRET_FILE_CHARS + 1)
        else:
            with Path(path).open(encoding="utf-8") as file:
                raw = file.read(MAX_SECRET_FILE_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {exc}", code="invalid_credentials") from exc
    if len(raw) > MAX_SECRET_FILE_CHARS:
        raise CliError(f"{path} is too long for a token or key", code="invalid_credentials")
    return raw.strip()


def credentials_from_args(kind: ChannelKind, args: argparse.Namespace) -> Credentials:
    given = Credentials(
        access_token=_read_secret(args.access_token_file),
        waba_id=args.waba_id,
        waha_base_url=args.waha_base_url,
        waha_api_key=_read_secret(args.waha_api_key_file),
    )
    try:
        return check_credentials(kind, given)
    except SkilletError as exc:
        raise CliError(exc.message, code=exc.code) from exc


@contextlib.asynccontextmanager
async def prover(settings: Settings) -> AsyncIterator[Prover]:
    import aiohttp

    from worker.channel_senders import proof_config

    async with aiohttp.ClientSession() as http:
        yield Prover(http, proof_config(settings))


def cli_error(exc: SkilletError) -> CliError:
    return CliError(exc.message, code=exc.code)


async def store_secrets(conn: asyncpg.Connection, channel: Channel, given: Credentials) -> None:
    from channels.credential_queries import upsert_channel_secrets_as_owner

    if given.access_token is not None or given.waha_api_key is not None:
        await upsert_channel_secrets_as_owner(
            conn, channel, access_token=given.access_token, waha_api_key=given.waha_api_key
        )


async def prove_change(settings: Settings, channel: Channel, given: Credentials) -> None:
    """A new token, server or key is proven before anything is stored (a key alone is that
    of the channel's own server)."""
    from dataclasses import replace

    if given.access_token is None and given.waha_api_key is None and given.waha_base_url is None:
        return
    proof = replace(given, waha_base_url=given.waha_base_url or channel.waha_base_url)
    if channel.kind is ChannelKind.WAHA and proof.waha_base_url is None:
        raise CliError(
            "a WAHA API key is that of a server of the session's own: give --waha-base-url too",
            code="invalid_credentials",
        )
    try:
        async with prover(settings) as proving:
            await proving.prove(channel.kind, channel.address, proof, operator=True)
    except SkilletError as exc:
        raise cli_error(exc) from exc


async def apply_credentials(
    conn: asyncpg.Connection, channel: Channel, given: Credentials
) -> Channel:
    """Write proven credentials: what may be shown on the row, the secrets apart."""
    from channels.credential_queries import update_channel_credentials
    from channels.queries import UNCHANGED

    updated = await update_channel_credentials(
        conn,
        channel.id,
        waba_id=UNCHANGED if given.waba_id is None else given.waba_id,
        waha_base_url=UNCHANGED if given.waha_base_url is None else given.waha_base_url,
        access_token=given.access_token,
        waha_api_key=given.waha_api_key,
        waha_server_vouched=True,  # an operator's server is used as given
    )
    assert updated is not None  # the caller's transaction holds it
    await store_secrets(conn, updated, given)
    return updated


async def wake_waiting(settings: Settings, conn: asyncpg.Connection, org: uuid.UUID) -> int:
    """A new token resumes the replies that waited for it."""
    from jobs.channel_resume import wake_waiting_replies
    from jobs.queue import open_queue

    queue = await open_queue(settings.redis_url, settings.queue_name)
    try:
        return await wake_waiting_replies(conn, queue, org)
    finally:
        await queue.aclose()


MOVE_CHANNEL = """
update channels set organization_id = $2, agent_id = null
where id = $1
returning id
"""
# The old org's messages no longer route replies through a number that is not its own.
DELETE_OLD_ROUTES = "delete from inbound_routes where channel_id = $1 and organization_id = $2"


async def cmd_move(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """Hand a connected number to another org (its secrets and WAHA key follow; its agent is
    the new org's first until set); audited in both orgs."""
    from channels.queries import fetch_channel_by_address
    from core.audit import AuditEntry, insert_audit
    from turn.agent_queries import fetch_org_agent

    kind = ChannelKind(args.kind)
    async with connection(settings.owner_url) as conn, conn.transaction():
        channel = await fetch_channel_by_address(conn, kind, args.address)
        if channel is None:
            raise CliError(f"{args.kind} {args.address} is not connected", code="channel_not_found")
        if await fetch_org_agent(conn, args.to) is None:
            raise CliError(f"organization {args.to} does not exist", code="organization_not_found")
        source = channel.organization_id
        if source == args.to:
            raise CliError(f"{args.kind} {args.address} is already {args.to}'s", code="same_org")
        await conn.execute(DELETE_OLD_ROUTES, channel.id, source)
        await conn.execute(MOVE_CHANNEL, channel.id, args.to)
        detail = {
            "kind": kind.value,
            "address": args.address,
            "from": str(source),
            "to": str(args.to),
        }
        for org in (source, args.to):
            await insert_audit(conn, AuditEntry(org, CLI_ACTOR, "channel.move", detail=detail))
        moved = await fetch_channel_by_address(conn, kind, args.address)
    assert moved is not None
    return {
        **moved.as_json(),
        "moved_from": str(source),
        "message": f"moved {kind.value} {args.address} from {source} to {args.to}",
    }


def register_move(
    channels: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    move = channels.add_parser(
        "move", parents=[common], help="hand a connected number to another org (operator)"
    )
    move.add_argument("--kind", choices=[k.value for k in ChannelKind], required=True)
    move.add_argument("--address", required=True)
    move.add_argument("--to", type=uuid_arg, required=True, help="the org that proved it")
    move.set_defaults(handler=cmd_move)
