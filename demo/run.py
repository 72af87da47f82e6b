"""`skillet demo`: a demo org, 3 skills, some WhatsApp messages, a burst worker, a transcript."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from core.db import connect, create_pool
from core.organizations import insert_organization
from demo.content import DEMO_MESSAGES, DEMO_PERSONA, DEMO_SKILLS
from inbox.message import InboundMessage
from jobs.queue import enqueue_inbound, open_queue
from skills.publisher import publish_skill_version
from turn.agent_queries import insert_agent
from worker.app import build_worker
from worker.migrate import apply_migrations, migrations_dir
from worker.report_queries import list_activations, list_replies
from worker.resources import open_resources
from worker.settings import Settings


async def _setup_org(settings: Settings) -> tuple[uuid.UUID, dict[str, str]]:
    """Migrate, then a fresh demo org (a new one per run, so runs never collide)."""
    org_id = uuid.uuid4()
    directory = migrations_dir(settings.migrations_dir)
    conn = await connect(settings.owner_url)
    try:
        # First: the migrations create the role the pool switches to (a fresh server has none).
        await apply_migrations(conn, directory)
        resources = await open_resources(settings)
    except BaseException:
        await conn.close()
        raise
    versions: dict[str, str] = {}
    try:
        await insert_organization(conn, org_id, "Loja Exemplo (demo)")
        await insert_agent(conn, org_id, "Bia", DEMO_PERSONA)
        for draft in DEMO_SKILLS:
            version_id = await publish_skill_version(
                conn, resources.store, organization_id=org_id, draft=draft, created_by="user"
            )
            versions[draft.name] = str(version_id)
    finally:
        await resources.close()
        await conn.close()
    return org_id, versions


def jobs_payload(org_id: uuid.UUID, message_id: str, contact: str, text: str) -> dict[str, Any]:
    return {
        "organization_id": str(org_id),
        "channel": "whatsapp",
        "contact_id": contact,
        "message_id": message_id,
        "text": text,
        "sent_at": datetime.now(UTC).isoformat(),
    }


async def _run_messages(settings: Settings, org_id: uuid.UUID) -> list[dict[str, Any]]:
    redis = await open_queue(settings.redis_url, settings.queue_name)
    pool = await create_pool(settings.owner_url, min_size=1, max_size=1)
    deliveries: list[dict[str, Any]] = []
    try:
        jobs = []
        for message_id, contact, text, purpose in DEMO_MESSAGES:
            body = jobs_payload(org_id, message_id, contact, text)
            payload = InboundMessage.model_validate(body)
            job = await enqueue_inbound(pool, redis, payload, coalesce_ms=settings.coalesce_ms)
            deliveries.append(
                {
                    "message_id": message_id,
                    "contact": contact,
                    "text": text,
                    "purpose": purpose,
                    "queued": job is not None,
                }
            )
            jobs.append(job)
        worker = build_worker(settings, burst=True, handle_signals=False)
        try:
            await worker.async_run()
        finally:
            await worker.close()
        # The same message again after it was answered (a webhook retry hours later): the
        # database finds it stored and answered, so no job wakes the conversation again.
        first = deliveries[0]
        late = InboundMessage.model_validate(
            jobs_payload(org_id, first["message_id"], first["contact"], first["text"])
        )
        late_job = await enqueue_inbound(pool, redis, late, coalesce_ms=settings.coalesce_ms)
        deliveries.append(
            {
                "message_id": first["message_id"],
                "contact": first["contact"],
                "text": first["text"],
                "purpose": "reentrega tardia (depois da resposta)",
                "queued": late_job is not None,
                "refused": "answered",
            }
        )
        jobs.append(late_job)
        for delivery, job in zip(deliveries, jobs, strict=True):
            delivery["result"] = await job.result(timeout=10) if job is not None else None
    finally:
        await pool.close()
        await redis.aclose()
    return deliveries


async def run_demo(settings: Settings, *, print_transcript: bool = True) -> dict[str, Any]:
    # A queue of its own, so a worker already running elsewhere does not take the demo's jobs;
    # a short poll delay, so the burst worker drains it in about a second.
    settings = settings.model_copy(
        update={
            "queue_name": f"skillet:demo:{uuid.uuid4().hex[:8]}",
            "poll_delay_s": 0.05,
            # One job at a time keeps the transcript the same on every run.
            "max_jobs": 1,
        }
    )
    org_id, versions = await _setup_org(settings)
    deliveries = await _run_messages(settings, org_id)
    conn = await connect(settings.owner_url)
    try:
        replies = await list_replies(conn, org_id)
        activations = await list_activations(conn, org_id)
    finally:
        await conn.close()
    report = {
        "organization_id": str(org_id),
        "skills": versions,
        "deliveries": deliveries,
        "replies": [vars(r) for r in replies],
        "activations": [
            {
                "skill_name": a.skill_name,
                "skill_version_id": str(a.skill_version_id or ""),
                "trigger": a.trigger,
            }
            for a in activations
        ],
    }
    if print_transcript:
        from demo.transcript import render_transcript

        print(render_transcript(report))
    return {} if print_transcript else report
