"""`skillet` command line: argparse front end; each command is a small async function."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import asyncpg
import structlog
from pydantic import ValidationError

from cli import agents as cli_agents
from cli import api as cli_api
from cli import channels as cli_channels
from cli import conversations as cli_conversations
from cli import curator as cli_curator
from cli import drafts as cli_drafts
from cli import orgs as cli_orgs
from cli import people as cli_people
from cli import pipes as cli_pipes
from cli import skills as cli_skills
from cli import status as cli_status
from cli.args import Command, aware_datetime_arg, uuid_arg
from core.errors import SkilletError
from dev.env import load_settings
from worker.logging import configure_logging
from worker.settings import Settings

log = structlog.get_logger(__name__)


async def cmd_migrate(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.db import connection
    from core.tenant_key import TenantKey, store_tenant_secret
    from worker.db_logins import check_passwords, sync_login_users
    from worker.migrate import apply_migrations, migrations_dir

    directory = migrations_dir(settings.migrations_dir)
    check_passwords(settings.login_passwords())  # a bad one stops before any migration
    tenant_secret = settings.tenant_secret_value()
    if tenant_secret is not None:
        TenantKey.from_setting(tenant_secret)  # so does a short tenant secret
    async with connection(settings.owner_url) as conn:
        applied = await apply_migrations(conn, directory)
        logins = await sync_login_users(conn, settings.login_passwords())
        secret_changed = tenant_secret is not None and await store_tenant_secret(
            conn, tenant_secret
        )
    message = f"{len(applied)} migration(s) applied"
    if logins:
        message += f"; login users ready: {', '.join(logins)}"
    if secret_changed:
        message += "; tenant secret stored (restart the processes that held another)"
    return {
        "applied": applied,
        "logins": logins,
        "tenant_secret_changed": secret_changed,
        "message": message,
    }


async def cmd_dev(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from dev import services as dev_services

    action = {"up": dev_services.up, "down": dev_services.down, "status": dev_services.status}
    result: dict[str, Any] = await action[args.action](settings)
    return result


async def cmd_demo(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from demo.run import run_demo

    return await run_demo(settings, print_transcript=not args.json)


async def cmd_worker(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from worker.app import build_worker

    worker = build_worker(settings, burst=args.burst)
    try:
        await worker.async_run()
    except asyncio.CancelledError:
        # SIGTERM/SIGINT: arq waits for running jobs (job_completion_wait), then cancels its
        # main task; that is a clean stop, not an error.
        log.info("worker.signalled")
    finally:
        await worker.close()
    return {
        "jobs_complete": worker.jobs_complete,
        "jobs_failed": worker.jobs_failed,
        "jobs_retried": worker.jobs_retried,
    }


async def cmd_enqueue(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from core.db import create_pool
    from inbox.message import InboundMessage
    from inbox.store import store_inbound
    from jobs.payloads import inbound_job_id
    from jobs.queue import enqueue_wakeup, open_queue

    message = InboundMessage(
        organization_id=args.org,
        contact_id=args.sender,
        message_id=args.message_id,
        text=args.text,
        sent_at=args.sent_at or datetime.now(UTC),
    )
    job_id = inbound_job_id(message.organization_id, message.message_id)
    pool = await create_pool(settings.owner_url, min_size=1, max_size=1)
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        # Stored first (skillet_store_inbound), then its conversation woken by id.
        persisted = await store_inbound(pool, message, received_at=datetime.now(UTC))
        job = await enqueue_wakeup(
            redis,
            message.organization_id,
            persisted,
            message.message_id,
            coalesce_ms=settings.coalesce_ms,
        )
    finally:
        await redis.aclose()
        await pool.close()
    if persisted.foreign:
        # Another contact's stored message: refused like the webhook refuses it.
        log.warning("enqueue.duplicate_foreign_contact", job_id=job_id)
        text = f"duplicate: {job_id} (message id already stored for another contact)"
        return {"job_id": job_id, "status": "duplicate", "message": text}
    status = "enqueued" if job is not None else "duplicate"
    return {"job_id": job_id, "status": status, "message": f"{status}: {job_id}"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skillet", description="WhatsApp agent turns with skills")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("migrate", parents=[common], help="apply pending migrations").set_defaults(
        handler=cmd_migrate
    )
    dev = sub.add_parser("dev", parents=[common], help="local Postgres/Redis/S3 for development")
    dev.add_argument("action", choices=["up", "down", "status"])
    dev.set_defaults(handler=cmd_dev)
    sub.add_parser("demo", parents=[common], help="run the main job end to end").set_defaults(
        handler=cmd_demo
    )
    worker = sub.add_parser("worker", parents=[common], help="run an arq worker")
    worker.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    worker.set_defaults(handler=cmd_worker)

    cli_orgs.register(sub, common)

    enqueue = sub.add_parser("enqueue", parents=[common], help="enqueue one inbound message")
    enqueue.add_argument("--org", type=uuid_arg, required=True)
    enqueue.add_argument("--from", dest="sender", required=True, help="the contact's wa_id")
    enqueue.add_argument("--message-id", required=True)
    enqueue.add_argument("--text", required=True)
    enqueue.add_argument("--sent-at", type=aware_datetime_arg)
    enqueue.set_defaults(handler=cmd_enqueue)

    modules = (
        cli_agents,
        cli_skills,
        cli_drafts,
        cli_curator,
        cli_channels,
        cli_status,
        cli_api,
        cli_people,
        cli_conversations,
    )
    for module in modules:
        module.register(sub, common)
    return parser


# Commands that run until stopped and whose output is collected as logs.
LOG_STREAMS = frozenset({"worker", "webhook", "api"})


def _print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, ensure_ascii=False, default=str))
    elif "message" in result:
        print(result["message"])
    elif result:
        print(json.dumps(result, ensure_ascii=False, default=str, indent=2))


def _print_error(code: str, message: str, as_json: bool) -> None:
    line = " ".join(message.split())
    if as_json:
        print(json.dumps({"error": code, "message": line}, ensure_ascii=False))
    else:
        print(f"error: {code}: {line}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code. A reader that went away ends it quietly (cli_pipes)."""
    try:
        try:
            return _main(argv)
        finally:
            # Here, not at interpreter exit, where a closed pipe would only print noise.
            sys.stdout.flush()
    except BrokenPipeError:
        return cli_pipes.quiet_exit()


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    as_json = bool(getattr(args, "json", False))
    try:
        # `dev up` reads only the environment: dev.env is what it writes for the others.
        dev_up = args.command == "dev" and args.action == "up"
        settings = load_settings(read_dev_env=not dev_up)
        # The demo prints a transcript on stdout: keep routine worker logs out of its way.
        level = "WARNING" if args.command == "demo" else settings.log_level
        configure_logging(
            log_format=settings.log_format,
            level=level,
            log_bodies=settings.log_message_bodies,
            own_process=True,
        )
        # A long-running process's output is a log stream: in JSON mode its last line (the
        # result, or the error) is one JSON object too.
        as_json = as_json or (settings.log_format == "json" and args.command in LOG_STREAMS)
        handler: Command = args.handler
        result = asyncio.run(handler(args, settings))
    except SkilletError as exc:
        _print_error(exc.code, exc.message, as_json)
        return 1
    except ValidationError as exc:
        _print_error("invalid_input", "; ".join(e["msg"] for e in exc.errors()), as_json)
        return 2
    except asyncpg.PostgresError as exc:
        _print_error("database_error", str(exc), as_json)
        return 1
    except (OSError, ConnectionError) as exc:
        if isinstance(exc, BrokenPipeError) and cli_pipes.reader_gone(sys.stdout):
            raise  # the command was printing (the demo's transcript) to a closed pipe
        _print_error("service_unavailable", str(exc), as_json)
        return 1
    except KeyboardInterrupt:
        return 130
    _print_result(result, as_json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
