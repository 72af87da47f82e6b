"""`skillet status` (the queue, workers, dead letters, curator) and `skillet health` (a probe)."""

from __future__ import annotations

import argparse
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cli.args import CliError
from worker.settings import Settings, mask_password

if TYPE_CHECKING:
    from cli.status_queries import (
        CuratorCoverage,
        DeadLetterCounts,
        LastCuratorRun,
        OutboxCounts,
        TokensToday,
    )
    from worker.heartbeat import WorkerBeat
    from worker.queue_status import QueueSnapshot

DEAD_LETTER_CODES = 10  # most frequent error codes listed


def _count(value: str) -> int:
    try:
        count = int(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from exc
    if count < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return count


async def _redis_status(settings: Settings) -> tuple[QueueSnapshot, list[WorkerBeat]]:
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    from worker.heartbeat import list_alive
    from worker.queue_status import queue_snapshot

    redis = Redis.from_url(settings.redis_url)
    try:
        return (
            await queue_snapshot(redis, settings.queue_name),
            await list_alive(redis, settings.queue_name),
        )
    except RedisError as exc:
        raise CliError(
            f"Redis at {mask_password(settings.redis_url)}: {exc}", code="service_unavailable"
        ) from exc
    finally:
        await redis.aclose()


async def cmd_status(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    from cli import status_queries as q
    from core.db import connection

    queue, workers = await _redis_status(settings)
    queue = queue.with_owners(workers, time.time())
    async with connection(settings.owner_url) as conn:
        counts = await q.fetch_dead_letter_counts(conn, codes=DEAD_LETTER_CODES)
        recent = await q.list_recent_dead_letters(conn, limit=args.dead_letters)
        coverage = await q.fetch_curator_coverage(conn)
        runs = await q.list_last_curator_runs(conn, limit=args.orgs)
        outbox = await q.fetch_outbox_counts(conn, codes=DEAD_LETTER_CODES)
        tokens = await q.list_tokens_today(conn)
        needs_token = await q.list_channels_needing_token(conn)
    now = time.time()
    return {
        "queue": queue.to_json(),
        "workers": [{**w.to_json(), "age_s": round(now - w.seen_at, 1)} for w in workers],
        "dead_letters": {
            "total": counts.total,
            "last_24h": counts.last_24h,
            "by_code": counts.by_code,
            "latest": [
                {
                    "id": d.id,
                    "job_id": d.job_id,
                    "function": d.function,
                    "error_code": d.error_code,
                    "tries": d.tries,
                    "created_at": d.created_at.isoformat(),
                }
                for d in recent
            ],
        },
        "curator": {
            "organizations": coverage.organizations,
            "never_run": coverage.never_run,
            "last_runs": [
                {
                    "organization_id": str(r.organization_id),
                    "ran_at": r.ran_at.isoformat(),
                    "trigger": r.trigger,
                    "transitioned": r.transitioned,
                }
                for r in runs
            ],
        },
        "outbox": {
            "pending": outbox.pending,
            "sending": outbox.sending,
            "oldest_pending": _iso(outbox.oldest_pending),
            "failed_24h": outbox.failed_24h,
            "undelivered_24h": outbox.undelivered_24h,
        },
        "tokens_today": [t.to_json() for t in tokens],
        # Numbers whose own token Meta refused: their replies wait for a new one.
        "channels_needing_token": needs_token,
        "message": _status_text(queue, workers, counts, coverage, runs, outbox, now)
        + "".join(
            f"\nNEEDS TOKEN: {c['kind']} {c['address']} (org {c['organization_id']})"
            for c in needs_token
        )
        + _tokens_text(tokens),
    }


def _tokens_text(tokens: list[TokensToday]) -> str:
    lines = ["", "tokens today (UTC):" if tokens else "tokens today (UTC): none"]
    for t in tokens:
        name = f"{t.provider or 'default'}/{t.model or '-'}"
        cached = f"{t.cache_read_tokens / t.input_tokens:.0%}" if t.input_tokens else "-"
        unreported = f", {t.unreported_turns} unreported" if t.unreported_turns else ""
        lines.append(
            f"  {name}: {t.turns} turns, {t.input_tokens} in ({cached} cached), "
            f"{t.output_tokens} out{unreported}"
        )
    return "\n".join(lines)


def _status_text(
    queue: QueueSnapshot,
    workers: list[WorkerBeat],
    counts: DeadLetterCounts,
    coverage: CuratorCoverage,
    runs: list[LastCuratorRun],
    outbox: OutboxCounts,
    now: float,
) -> str:
    oldest = "" if queue.oldest_waiting_s is None else f" (oldest {queue.oldest_waiting_s:g} s)"
    orphaned = f", {len(queue.orphaned)} orphaned" if queue.orphaned else ""
    lines = [
        f"queue {queue.name}: {queue.waiting} waiting{oldest}, {queue.in_progress} in progress"
        f"{orphaned}, {queue.deferred} deferred",
    ]
    # A killed worker's job: nobody runs it until arq's in-progress key expires.
    lines.extend(f"  orphaned (no live worker runs it): {job_id}" for job_id in queue.orphaned)
    lines.append(f"workers alive: {len(workers)}")
    for w in workers:
        health = {True: "healthy", False: "UNHEALTHY", None: "unchecked"}[w.healthy]
        drain = ", draining" if w.draining else ""
        lines.append(
            f"  {w.worker_id}  up {int(now - w.started_at)} s  jobs {w.jobs_in_progress}  "
            f"{health}{drain}  similarity {w.similarity or 'unknown'}"
        )
    codes = ", ".join(f"{c} {n}" for c, n in counts.by_code.items())
    lines.append(
        f"dead letters: {counts.total} total, {counts.last_24h} in 24 h"
        + (f" ({codes})" if codes else "")
    )
    failed = ", ".join(f"{c} {n}" for c, n in outbox.failed_24h.items()) or "none"
    oldest_reply = f" (oldest {_iso(outbox.oldest_pending)})" if outbox.oldest_pending else ""
    undelivered = ", ".join(f"{c} {n}" for c, n in outbox.undelivered_24h.items()) or "none"
    lines.append(
        f"outbox: {outbox.pending} pending{oldest_reply}, {outbox.sending} sending; "
        f"failed in 24 h: {failed}; sent but undelivered in 24 h: {undelivered}"
    )
    lines.append(f"curator: {coverage.organizations} orgs, {coverage.never_run} never run")
    lines.extend(
        f"  {r.organization_id}  {r.ran_at.isoformat()}  {r.trigger}  {r.transitioned} transitioned"
        for r in runs
    )
    return "\n".join(lines)


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def unreachable_reason(exc: BaseException, timeout_s: float) -> str:
    """Why no usable answer came, in a few words: never a library's repr."""
    import aiohttp

    if isinstance(exc, TimeoutError):  # aiohttp's ServerTimeoutError is one too
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, aiohttp.ClientConnectorError):
        if isinstance(exc.os_error, ConnectionRefusedError):
            return "connection refused"
        return exc.os_error.strerror or type(exc.os_error).__name__
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the connection closed without an answer"
    if isinstance(exc, aiohttp.InvalidURL):
        return "not a valid URL (check --host and --port)"
    if isinstance(exc, ValueError):
        return "the answer is not JSON (is that port a skillet worker's?)"
    first_line = next(iter(str(exc).strip().splitlines()), "")
    return f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__


async def cmd_health(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """Exit 0 when the worker on this host answers /healthz with 200 (a container healthcheck)."""
    import aiohttp

    port = args.port or settings.metrics_port
    if not port:
        raise CliError(
            "this worker serves no health endpoint: set SKILLET_METRICS_PORT (or pass --port)",
            code="health_endpoint_off",
        )
    url = f"http://{args.host}:{port}/healthz"
    timeout_s = args.timeout or settings.health_timeout_s + 3
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as http,
            http.get(url) as response,
        ):
            status = response.status
            body: dict[str, Any] = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        reason = unreachable_reason(exc, timeout_s)
        raise CliError(f"no worker answers at {url}: {reason}", code="worker_unreachable") from exc
    checks = body.get("checks", {})
    summary = ", ".join(
        f"{name} {'ok' if c.get('ok') else c.get('error') or 'down'}" for name, c in checks.items()
    )
    if status != 200:
        raise CliError(f"{body.get('status', status)}: {summary}", code="unhealthy")
    return {**body, "message": f"healthy: {summary}"}


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """Add `status` and `health` to the `skillet` parser."""
    status = sub.add_parser(
        "status", parents=[common], help="queue, workers, dead letters, curator runs"
    )
    status.add_argument("--orgs", type=_count, default=20, help="latest curator runs listed")
    status.add_argument("--dead-letters", type=_count, default=5, help="latest dead letters listed")
    status.set_defaults(handler=cmd_status)
    health = sub.add_parser(
        "health", parents=[common], help="probe this host's worker (container healthcheck)"
    )
    health.add_argument("--host", default="127.0.0.1")
    health.add_argument("--port", type=int, help="default: SKILLET_METRICS_PORT")
    health.add_argument("--timeout", type=float, help="seconds (default: health timeout + 3)")
    health.set_defaults(handler=cmd_health)
