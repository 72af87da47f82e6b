"""One turn at a time per conversation, replies in arrival order, bursts answered together."""

from __future__ import annotations

import asyncio
import collections
import random
import uuid

import asyncpg

from tests.integration.support import create_org, enqueue, payload, run_burst
from turn.model import ModelRequest, ModelResponse
from worker.settings import Settings


class WatchingModel:
    """Replies with the user messages it was shown; counts concurrent turns per conversation."""

    def __init__(self, delay_s: float = 0.0, jitter_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.jitter_s = jitter_s
        self.running: collections.Counter[str] = collections.Counter()
        self.max_concurrent = 0
        self.calls = 0
        self.entered = asyncio.Event()  # set once a turn is inside the model call

    async def complete(self, request: ModelRequest) -> ModelResponse:
        # The latest user messages after the last assistant one are this turn's burst.
        burst: list[str] = []
        for message in reversed(request.messages):
            if message.role != "user":
                break
            burst.insert(0, message.content)
        conversation = burst[0].split("#")[0]
        self.calls += 1
        self.entered.set()
        self.running[conversation] += 1
        self.max_concurrent = max(self.max_concurrent, self.running[conversation])
        try:
            await asyncio.sleep(self.delay_s + random.uniform(0, self.jitter_s))
        finally:
            self.running[conversation] -= 1
        return ModelResponse(text=" | ".join(burst))


async def _replies(db: asyncpg.Connection, org: uuid.UUID) -> list[asyncpg.Record]:
    return await db.fetch(
        """select c.contact_id, r.id, r.body,
                  array_agg(i.external_id order by i.received_at, i.id) as answered
           from messages r
           join conversations c on c.id = r.conversation_id
           join messages i on i.answered_by = r.id
           where r.organization_id = $1 and r.direction = 'outbound'
           group by c.contact_id, r.id, r.body, r.created_at
           order by c.contact_id, r.created_at""",
        org,
    )


async def test_bursts_get_one_reply_that_sees_every_message(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    contact = "5511955550000"
    await enqueue(
        settings,
        *(payload(org, f"b{n}", f"c#oi {n}", contact=contact) for n in range(3)),
    )
    model = WatchingModel()
    worker = await run_burst(settings.model_copy(update={"max_jobs": 3}), model=model)
    assert worker.jobs_complete == 3
    [reply] = await _replies(db, org)
    assert list(reply["answered"]) == ["b0", "b1", "b2"]
    assert reply["body"] == "c#oi 0 | c#oi 1 | c#oi 2"
    assert model.calls == 1


async def test_messages_arriving_during_a_turn_get_the_following_reply(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    contact = "5511955550001"
    model = WatchingModel(delay_s=0.6)
    settings = settings.model_copy(update={"max_jobs": 4})
    await enqueue(settings, payload(org, "first", "c#primeira", contact=contact))

    async def late_arrivals() -> None:
        await model.entered.wait()  # the first turn is running now, whatever the machine's load
        await enqueue(
            settings,
            payload(org, "second", "c#segunda", contact=contact),
            payload(org, "third", "c#terceira", contact=contact),
        )

    await asyncio.gather(run_burst(settings, model=model), late_arrivals())
    await run_burst(settings, model=model)  # in case the late jobs were enqueued after the burst
    replies = await _replies(db, org)
    assert [list(r["answered"]) for r in replies] == [["first"], ["second", "third"]]
    assert model.max_concurrent == 1


async def test_many_conversations_in_parallel_each_in_order(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    messages = [
        payload(org, f"k{conv}-{n}", f"k{conv}#msg {n}", contact=f"55119000000{conv:02d}")
        for n in range(6)
        for conv in range(8)
    ]
    await enqueue(settings, *messages)
    model = WatchingModel(delay_s=0.01, jitter_s=0.03)
    await run_burst(settings.model_copy(update={"max_jobs": 16}), model=model)

    assert model.max_concurrent == 1  # never two turns of one conversation at once
    replies = await _replies(db, org)
    by_contact: dict[str, list[str]] = collections.defaultdict(list)
    for reply in replies:
        by_contact[reply["contact_id"]].extend(reply["answered"])
    assert len(by_contact) == 8
    for conv in range(8):
        # every message answered exactly once, in arrival order
        assert by_contact[f"55119000000{conv:02d}"] == [f"k{conv}-{n}" for n in range(6)]
