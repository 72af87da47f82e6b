"""A person's reply with an Idempotency-Key, end to end (real API, Postgres, Redis, burst
workers, a fake Graph API): the same key answers the first reply and sends nothing again,
even after Redis is wiped and when two requests arrive at once; another body is refused."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import asyncpg
import pytest
from redis.asyncio import Redis

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"
# A Redis database of this test's own: wiping it touches no other run's queue.
OWN_REDIS_DB = 14

WAITING_ON_LOCKS = """
select count(*) from pg_stat_activity
where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()
"""


@pytest.fixture
def own_redis(whatsapp_settings: Settings) -> Settings:
    base = whatsapp_settings.redis_url.rsplit("/", 1)[0]
    return whatsapp_settings.model_copy(update={"redis_url": f"{base}/{OWN_REDIS_DB}"})


async def _conversation_path(settings: Settings, db: asyncpg.Connection) -> tuple[str, str]:
    """A conversation the agent answered once; (its path, an editor's key)."""
    org = await create_org(db, "Loja Chaves")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    editor = await create_key(db, org, Role.EDITOR)
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", "Oi!", sender=CUSTOMER, timestamp=int(time.time())
    )
    async with running_webhook(settings) as hook:
        assert (await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))).status
    await run_burst(settings, model=CountingModel())
    conversation = await db.fetchval("select id from conversations")
    return f"/v1/conversations/{conversation}", editor


async def _person_messages(db: asyncpg.Connection) -> int:
    return int(await db.fetchval("select count(*) from messages where author = 'person'"))


async def _reply(api: ApiClient, path: str, key: str, idem: str, text: str) -> Any:
    return await api.call(
        "POST",
        f"{path}/messages",
        key,
        json_body={"text": text},
        headers={"Idempotency-Key": idem},
    )


async def test_the_same_key_answers_the_first_reply_even_after_a_redis_wipe(
    own_redis: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    path, editor = await _conversation_path(own_redis, db)
    redis = Redis.from_url(own_redis.redis_url)
    try:
        async with running_api(own_redis, resources.store) as api:
            first = await _reply(api, path, editor, "resposta-1", "Oi! Sou a Ana.")
            assert first.status == 202, first.body
            await run_burst(own_redis)
            assert [t for _, _, t in fake_graph.delivered][-1] == "Oi! Sou a Ana."
            sent_before = len(fake_graph.delivered)

            await redis.flushdb()  # the queue, rate limits, everything Redis held: gone
            again = await _reply(api, path, editor, "resposta-1", "Oi! Sou a Ana.")
            assert (again.status, again.body) == (202, first.body)
            await run_burst(own_redis)
            assert len(fake_graph.delivered) == sent_before  # nothing sent again
            assert await _person_messages(db) == 1

            other_body = await _reply(api, path, editor, "resposta-1", "Outra coisa")
            assert (other_body.status, other_body.code) == (422, "idempotency_key_reused")
            assert await _person_messages(db) == 1

            # After 24 hours the key is free again: a new reply.
            await db.execute("update person_reply_keys set created_at = now() - interval '25h'")
            later = await _reply(api, path, editor, "resposta-1", "Oi! Sou a Ana.")
            assert later.status == 202 and later.body["id"] != first.body["id"]
            assert await _person_messages(db) == 2
    finally:
        await redis.flushdb()
        await redis.aclose()


@pytest.mark.parametrize("bad", ["", " ", "com espaço", "x" * 256, "tab\there"])
async def test_a_malformed_key_is_refused_and_nothing_is_sent(
    own_redis: Settings, db: asyncpg.Connection, resources: Resources, bad: str
) -> None:
    path, editor = await _conversation_path(own_redis, db)
    async with running_api(own_redis, resources.store) as api:
        refused = await _reply(api, path, editor, bad, "Oi")
        assert (refused.status, refused.code) == (422, "idempotency_key_invalid")
        fine = await _reply(api, path, editor, "!" + "~" * 254, "Oi")  # 255 visible ASCII
        assert fine.status == 202, fine.body
    assert await _person_messages(db) == 1


async def test_two_requests_at_once_send_one_reply(
    own_redis: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    path, editor = await _conversation_path(own_redis, db)
    conversation = uuid.UUID(path.rsplit("/", 1)[1])
    sent_before = len(fake_graph.delivered)
    async with running_api(own_redis, resources.store) as api:
        holder = await asyncpg.connect(own_redis.database_url)
        try:
            # Hold the conversation's row: the first request claims the key and waits here,
            # the second waits on the key itself, then both go.
            tx = holder.transaction()
            await tx.start()
            await holder.execute(
                "select 1 from conversations where id = $1 for update", conversation
            )
            both = asyncio.gather(
                _reply(api, path, editor, "uma-vez", "Chegou!"),
                _reply(api, path, editor, "uma-vez", "Chegou!"),
            )
            # Watched from another connection: pg_stat_activity is a snapshot per transaction.
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 30
            while await db.fetchval(WAITING_ON_LOCKS) < 2:
                assert loop.time() < deadline, "the two requests never both waited"
                await asyncio.sleep(0.02)
            await tx.rollback()
            first, second = await both
        finally:
            await holder.close()
        assert first.status == second.status == 202, (first.body, second.body)
        assert first.body == second.body
    assert await _person_messages(db) == 1
    assert await db.fetchval("select count(*) from outbox where body = 'Chegou!'") == 1
    await run_burst(own_redis)
    assert [t for _, _, t in fake_graph.delivered[sent_before:]].count("Chegou!") == 1
