"""Soak: many conversations, several worker processes, duplicates, a SIGKILL, a Postgres restart,
and a person who takes over 5% of the conversations through the API for a while.

Run: .venv/bin/python bench/soak.py [--messages 10000 --conversations 500 --workers 4]
Starts servers of its own (bench/private_services.py), so nobody else's connections are cut:
a PostgreSQL (initdb in a temp dir from the system's binaries: restarted at half), a Redis
(wiped at three quarters) and a `weed mini`; all stopped at the end, and a `skillet api`.
Prints, last:
    sent=N lost=0 duplicate_replies=0 out_of_order=0 photo_only_replies=0
    agent_replies_while_human=0 person_replies=N ... msgs/s
(10% of the messages are photos on a number that does not answer them: stored, and answered
only together with a text of their burst. The person takes over at 30% of the rounds, answers
every customer message of theirs that arrives, and gives them back at 60% with
answer_pending false; a message is lost when neither the agent nor the person answered it.)
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

from core.db import connect, with_database
from dev.processes import free_port
from dev.weed import start_weed
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations
from worker.settings import Settings

# The scenario lives beside the tests (its small-size run is one); make the repo importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.private_services import PrivatePostgres, start_private_postgres, start_private_redis
from tests.soak.run import SoakPlan, run_soak


async def _main(args: argparse.Namespace, base: Settings, postgres: PrivatePostgres) -> int:
    name = "skillet_soak"
    admin = await asyncpg.connect(base.database_url)
    await admin.execute(f'create database "{name}"')
    await admin.close()
    settings = base.model_copy(
        update={
            "database_url": with_database(base.database_url, name),
            "queue_name": f"soak:{uuid.uuid4().hex}",
        }
    )
    conn = await connect(settings.database_url)
    await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
    await conn.close()
    plan = SoakPlan(
        messages=args.messages,
        conversations=args.conversations,
        workers=args.workers,
        duplicate_share=0.10,
        kill_one_worker=True,
        restart_postgres=None if args.no_restart else postgres.restart,
        wipe_redis=True,
        model_latency_ms=args.latency_ms,
        round_gap_s=args.round_gap_s,
        timeout_s=args.timeout_s,
        takeover_share=args.takeover_share,
    )
    started = time.perf_counter()
    report = await run_soak(settings, plan)
    elapsed = time.perf_counter() - started
    print(f"events: {', '.join(report.events) or 'none'}")
    print(
        f"sent={report.sent} lost={report.lost} duplicate_replies={report.duplicate_replies} "
        f"out_of_order={report.out_of_order} photo_only_replies={report.photo_only_replies} "
        f"agent_replies_while_human={report.agent_replies_while_human} "
        f"person_replies={report.person_replies} takeovers={report.takeovers} "
        f"releases={report.releases} messages={plan.messages} "
        f"throughput={plan.messages / elapsed:.1f} msgs/s"
    )
    return 0 if report.ok else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--no-restart", action="store_true", help="skip the Postgres restart")
    parser.add_argument("--round-gap-s", type=float, default=0.2)
    parser.add_argument("--timeout-s", type=float, default=600.0)
    parser.add_argument(
        "--takeover-share", type=float, default=0.05, help="conversations a person takes (0: none)"
    )
    args = parser.parse_args()
    configure_logging(level="WARNING")
    with tempfile.TemporaryDirectory() as tmp:
        weed = start_weed(Path(tmp), free_port(), "soak", "soak-secret-key")
        redis, redis_port = start_private_redis(Path(tmp))
        postgres = start_private_postgres()
        try:
            base = Settings(
                database_url=postgres.url,
                redis_url=f"redis://127.0.0.1:{redis_port}/0",
                s3_endpoint_url=weed.endpoint_url,
                aws_access_key_id="soak",
                aws_secret_access_key="soak-secret-key",
                s3_bucket="soak",
            )
            return asyncio.run(_main(args, base, postgres))
        finally:
            postgres.stop()
            redis.terminate()
            redis.wait()
            weed.stop()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
