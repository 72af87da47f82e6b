"""Builders shared by the integration tests: orgs, skills, payloads, burst workers."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
from arq.jobs import Job
from arq.worker import Worker

from core.db import create_pool
from core.object_store import ObjectStore
from core.organizations import insert_organization
from delivery.contract import Sender
from inbox.message import InboundMessage
from inbox.store import store_inbound as store_message
from jobs import serialization
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload, inbound_job_id
from jobs.queue import enqueue_inbound, open_queue
from skills.models import FileKind, SkillMatcher
from skills.publisher import SkillDraft, SkillFile, publish_skill_version
from turn.model import Model
from worker.app import build_worker
from worker.settings import Settings

SKILLET = str(Path(sys.executable).parent / "skillet")


def worker_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of a `skillet worker` subprocess on this test's services and queue."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLET_")}
    return (
        env
        | {
            "DATABASE_URL": settings.database_url,
            "REDIS_URL": settings.redis_url,
            "S3_ENDPOINT_URL": settings.s3_endpoint_url,
            "S3_BUCKET": settings.s3_bucket,
            "AWS_ACCESS_KEY_ID": settings.aws_access_key_id,
            "AWS_SECRET_ACCESS_KEY": settings.aws_secret_access_key.get_secret_value(),
            "SKILLET_QUEUE_NAME": settings.queue_name,
            "SKILLET_POLL_DELAY_S": "0.05",
            "SKILLET_COALESCE_MS": "0",
            "SKILLET_LOG_FORMAT": "json",
        }
        | extra
    )


async def create_org(conn: asyncpg.Connection, name: str = "Org de teste") -> uuid.UUID:
    org_id = uuid.uuid4()
    await insert_organization(conn, org_id, name)
    return org_id


async def publish(
    conn: asyncpg.Connection,
    store: ObjectStore,
    org_id: uuid.UUID | None,
    name: str,
    *,
    keywords: Sequence[str],
    probes: Sequence[str] = (),
    body: str | None = None,
    description: str | None = None,
    references: Mapping[str, str] | None = None,
    created_by: str = "user",
) -> uuid.UUID:
    files = tuple(
        SkillFile(path, text.encode("utf-8"), FileKind.REFERENCE)
        for path, text in (references or {}).items()
    )
    draft = SkillDraft(
        name=name,
        description=description or f"Skill {name}",
        body=body or f"Resposta da skill {name}.",
        matcher=SkillMatcher(any_keywords=keywords, probe_keywords=probes),
        files=files,
    )
    return await publish_skill_version(
        conn, store, organization_id=org_id, draft=draft, created_by=created_by
    )


def payload(
    org_id: uuid.UUID, message_id: str, text: str, contact: str | None = None
) -> InboundMessage:
    """One inbound message; without `contact`, each message id is its own customer (so tests
    that are not about bursts never coalesce)."""
    digits = int(hashlib.sha256(message_id.encode()).hexdigest(), 16) % 10**8
    return InboundMessage(
        organization_id=org_id,
        contact_id=contact or f"55119{digits:08d}",
        message_id=message_id,
        text=text,
        sent_at=datetime.now(UTC),
    )


async def store_inbound(
    pool: Any, org_id: uuid.UUID, message_id: str, contact: str
) -> tuple[uuid.UUID, uuid.UUID]:
    """Store a message as the webhook does, with no job: (conversation id, message id)."""
    stored = await store_message(
        pool, payload(org_id, message_id, "oi", contact), received_at=datetime.now(UTC)
    )
    return stored.conversation_id, stored.inbound_id


def job_id_of(message: InboundMessage) -> str:
    """The job id the queue gives the message's wakeup."""
    return inbound_job_id(message.organization_id, message.message_id)


async def wake_raw(
    settings: Settings, message: InboundMessage, *, job_id: str | None = None
) -> str:
    """Store the message, then enqueue its conversation's wakeup under any job id, even one
    already used (to bypass the queue's dedup on purpose, e.g. a second delivery)."""
    pool = await create_pool(settings.database_url, min_size=1, max_size=1)
    try:
        stored = await store_message(pool, message, received_at=datetime.now(UTC))
    finally:
        await pool.close()
    wakeup = ConversationPayload(
        organization_id=message.organization_id,
        conversation_id=stored.conversation_id,
        inbound_id=stored.inbound_id,
        message_id=message.message_id,
    )
    return await enqueue_raw(settings, wakeup.model_dump(mode="json"), job_id=job_id)


async def enqueue(settings: Settings, *payloads: InboundMessage) -> list[str | None]:
    """Enqueue each payload; the list holds the job id, or None for a refused duplicate."""
    redis = await open_queue(settings.redis_url, settings.queue_name)
    pool = await create_pool(
        settings.database_url, min_size=1, max_size=1, tenant_secret=settings.tenant_secret_value()
    )
    try:
        jobs = [
            await enqueue_inbound(pool, redis, p, coalesce_ms=settings.coalesce_ms)
            for p in payloads
        ]
    finally:
        await pool.close()
        await redis.aclose()
    return [None if job is None else job.job_id for job in jobs]


async def enqueue_raw(settings: Settings, body: Any, *, job_id: str | None = None) -> str:
    """Enqueue any JSON body under any job id (to bypass the queue's dedup on purpose)."""
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        job = await redis.enqueue_job(
            HANDLE_INBOUND_MESSAGE, body, _job_id=job_id or f"raw-{uuid.uuid4()}"
        )
    finally:
        await redis.aclose()
    assert job is not None
    return str(job.job_id)


async def result_of(settings: Settings, job_id: str | None) -> Any:
    """The stored result of a finished job (each call opens and closes its own pool)."""
    assert job_id is not None
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        job = Job(job_id, redis, _queue_name=settings.queue_name, _deserializer=serialization.loads)
        return await job.result(timeout=5)
    finally:
        await redis.aclose()


async def close_between_jobs(worker: Worker, *, within_s: float = 30.0) -> None:
    """Close a running (not burst) worker once no job is in flight, waiting at most `within_s`:
    arq's close cancels a job still running, even one only writing its result, and raises
    that cancellation. Nothing awaits between the last check and close's own cancel, so no job
    starts in between."""
    for _ in range(int(within_s / 0.02)):
        if all(task.done() for task in worker.tasks.values()):
            break
        await asyncio.sleep(0.02)
    await worker.close()


async def run_burst(
    settings: Settings, *, model: Model | None = None, sender: Sender | None = None
) -> Worker:
    """A real arq worker in burst mode: runs until the test's queue is empty, then closes."""
    worker = build_worker(settings, burst=True, handle_signals=False, model=model, sender=sender)
    try:
        await worker.async_run()
    finally:
        await worker.close()
    return worker


LOCK_WAIT = "select wait_event_type = 'Lock' from pg_stat_activity where pid = $1"


async def wait_until_waiting_on_lock(
    database_url: str, pid: int, *, timeout_s: float = 30.0
) -> None:
    """Poll until the backend `pid` waits on a lock: how a test knows a concurrent statement
    has reached the row it must wait for, however slow the machine (a fixed sleep can end
    before the statement even started)."""
    conn = await asyncpg.connect(database_url)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not await conn.fetchval(LOCK_WAIT, pid):
            assert loop.time() < deadline, f"backend {pid} never waited on a lock"
            await asyncio.sleep(0.02)
    finally:
        await conn.close()
