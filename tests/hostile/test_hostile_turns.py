"""Hostile input to a turn: whatever a customer sends or a model answers, the work is bounded
and every message ends answered, retried or dead-lettered, never silently lost."""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
from arq.constants import job_key_prefix

from conversation.burst import REJECTED_REPLY
from jobs.queue import open_queue
from tests.integration.support import create_org, enqueue, payload, result_of, run_burst
from turn.errors import ModelRequestRejected
from turn.model import ModelRequest, ModelResponse
from worker.settings import Settings

CONTACT = "5511966660000"


class Recording:
    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=f"ok {len(self.requests)}")


async def _replies(db: asyncpg.Connection, org: uuid.UUID) -> list[str]:
    rows = await db.fetch(
        "select body from messages where organization_id = $1 and direction = 'outbound' "
        "order by created_at, id",
        org,
    )
    return [r["body"] for r in rows]


async def _dead(db: asyncpg.Connection) -> list[tuple[str, str]]:
    rows = await db.fetch("select function, error_code from dead_letters order by id")
    return [(r["function"], r["error_code"]) for r in rows]


async def test_a_64_kib_burst_reaches_the_model_capped(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = Recording()
    huge = ("compra " * 9_000).strip()  # 62,999 characters
    await enqueue(
        settings,
        payload(org, "h1", huge, CONTACT),
        payload(org, "h2", huge, CONTACT),
        payload(org, "h3", huge, CONTACT),
        payload(org, "h4", "e o preço?", CONTACT),
    )
    await run_burst(settings, model=model)
    [request] = model.requests
    sent = [m.content for m in request.messages]
    assert sum(len(t) for t in sent) <= settings.max_burst_chars + 200
    assert sent[-1] == "e o preço?"
    assert sent[0].startswith("[mensagem anterior omitida: 62999 caracteres]")
    assert "mensagem cortada" in sent[-2]
    assert await _replies(db, org) == ["ok 1"]


async def test_a_nul_byte_is_stripped_not_retried_forever(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    [job] = await enqueue(settings, payload(org, "n1", "oi\x00 tudo bem?", CONTACT))
    await run_burst(settings, model=Recording())
    assert (await result_of(settings, job))["status"] == "replied"
    assert await db.fetchval("select body from messages where external_id = 'n1'") == (
        "oi tudo bem?"
    )


async def test_an_undecodable_job_is_dead_lettered_and_the_worker_goes_on(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        await redis.set(job_key_prefix + "garbage", b"\x80\x04not a json job")
        await redis.zadd(settings.queue_name, {"garbage": 1})  # arq skips a score of 0
    finally:
        await redis.aclose()
    [job] = await enqueue(settings, payload(org, "g1", "oi", CONTACT))
    worker = await run_burst(settings, model=Recording())
    assert (await result_of(settings, job))["status"] == "replied"
    assert await _dead(db) == [("undecodable_job", "undecodable_job")]
    assert worker.jobs_failed == 0


class Rejecting(Recording):
    """The provider refuses, for good, a request whose new message says REJEITE."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if "REJEITE" in request.messages[-1].content:
            self.requests.append(request)
            raise ModelRequestRejected("400: prompt violates the provider's policy")
        return await super().complete(request)


async def test_a_burst_the_provider_refuses_for_good_gets_a_handoff_and_frees_the_rest(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = Rejecting()
    [refused] = await enqueue(settings, payload(org, "r1", "REJEITE isto", CONTACT))
    await run_burst(settings, model=model)
    assert (await result_of(settings, refused))["status"] == "replied"
    [later] = await enqueue(settings, payload(org, "r2", "e agora, tudo certo?", CONTACT))
    await run_burst(settings, model=model)
    assert (await result_of(settings, later))["status"] == "replied"
    assert await _replies(db, org) == [REJECTED_REPLY, "ok 2"]
    assert await _dead(db) == [("model_rejected", "model_request_rejected")]
    # The later turn does not resend the refused text as if it were unanswered.
    assert [m.content for m in model.requests[-1].messages][-1] == "e agora, tudo certo?"


class Broken(Recording):
    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise RuntimeError("a bug in a model adapter")


async def test_an_unexpected_error_is_retried_then_dead_lettered(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    [job] = await enqueue(settings, payload(org, "b1", "oi", CONTACT))
    worker = await run_burst(settings.model_copy(update={"max_tries": 2}), model=Broken())
    assert (await result_of(settings, job)) == {"status": "failed", "code": "unexpected_error"}
    assert worker.jobs_retried == 1
    assert await _dead(db) == [("handle_inbound_message", "unexpected_error")]


class Slow(Recording):
    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(30)
        return await super().complete(request)


async def test_a_turn_that_outlives_its_deadline_is_dead_lettered_before_arq_cancels_it(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    [job] = await enqueue(settings, payload(org, "s1", "oi", CONTACT))
    quick = settings.model_copy(update={"job_timeout_s": 3, "max_tries": 1})
    await run_burst(quick, model=Slow())
    assert (await result_of(settings, job)) == {"status": "failed", "code": "turn_deadline"}
    assert await _dead(db) == [("handle_inbound_message", "turn_deadline")]
