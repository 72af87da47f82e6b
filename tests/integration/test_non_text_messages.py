"""Non-text messages (images, audios, ...) are kept in the conversation, in order, and answered
only where their number says so; each number is answered by its own agent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg

from core.channel_kind import ChannelKind
from core.db import create_pool
from inbox.message import InboundMessage
from inbox.store import store_inbound
from tests.integration.support import (
    create_org,
    enqueue,
    payload,
    result_of,
    run_burst,
    wake_raw,
)
from tests.integration.webhook_support import connect_number, queued_payloads, running_webhook
from tests.whatsapp_payloads import cloud_delivery, cloud_message, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from turn.model import ModelRequest, ModelResponse
from worker.settings import Settings

CONTACT = "5511977770000"


class RecordingModel:
    """Answers "ok" and keeps every request it was shown."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=f"ok {len(self.requests)}")


def _media(org: uuid.UUID, message_id: str, text: str, *, reply: bool) -> InboundMessage:
    base = payload(org, message_id, text, contact=CONTACT)
    return base.model_copy(update={"kind": "image", "expects_reply": reply})


def _shown(request: ModelRequest) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in request.messages]


async def _inbound(db: asyncpg.Connection, org: uuid.UUID) -> list[dict[str, Any]]:
    rows = await db.fetch(
        """select external_id, kind, expects_reply, answered_by is not null as answered
           from messages where organization_id = $1 and direction = 'inbound'
           order by received_at, id""",
        org,
    )
    return [dict(r) for r in rows]


async def test_a_non_text_message_is_stored_unanswered_and_is_context_for_the_next_turn(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = RecordingModel()
    [photo_job] = await enqueue(settings, _media(org, "img1", "[imagem] modelo azul", reply=False))
    await run_burst(settings, model=model)
    assert model.requests == []  # no turn: nobody asked anything yet
    assert (await result_of(settings, photo_job))["status"] == "stored"
    assert await db.fetchval("select count(*) from outbox where organization_id = $1", org) == 0

    # The next typed message is answered (the stored photo does not hold it back) and the
    # model sees the photo before it.
    [text_job] = await enqueue(settings, payload(org, "t1", "quanto custa?", contact=CONTACT))
    await run_burst(settings, model=model)
    assert (await result_of(settings, text_job))["status"] == "replied"
    [request] = model.requests
    assert _shown(request) == [("user", "[imagem] modelo azul"), ("user", "quanto custa?")]
    assert await _inbound(db, org) == [
        {"external_id": "img1", "kind": "image", "expects_reply": False, "answered": False},
        {"external_id": "t1", "kind": "text", "expects_reply": True, "answered": True},
    ]


async def test_a_photo_and_a_question_in_one_burst_get_one_reply(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = RecordingModel()
    await enqueue(
        settings,
        _media(org, "img1", "[imagem]", reply=False),
        payload(org, "t1", "tem esse no azul?", contact=CONTACT),
    )
    await run_burst(settings.model_copy(update={"max_jobs": 2}), model=model)
    [request] = model.requests
    assert _shown(request) == [("user", "[imagem]"), ("user", "tem esse no azul?")]
    replies = await db.fetch(
        "select body from messages where organization_id = $1 and direction = 'outbound'", org
    )
    assert [r["body"] for r in replies] == ["ok 1"]
    assert [m["answered"] for m in await _inbound(db, org)] == [True, True]


async def test_a_number_that_answers_non_text_replies_to_an_audio(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = RecordingModel()
    audio = payload(org, "aud1", "[áudio]", contact=CONTACT).model_copy(update={"kind": "audio"})
    [job] = await enqueue(settings, audio)
    await run_burst(settings, model=model)
    assert (await result_of(settings, job))["status"] == "replied"
    assert _shown(model.requests[0]) == [("user", "[áudio]")]


async def test_the_webhook_enqueues_non_text_with_its_number_s_reply_rule_and_agent(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    vendas = await insert_agent(db, org, "Vendas", "Você é a Vera, de vendas.")
    await connect_number(db, org, ChannelKind.CLOUD_API, "111")
    await connect_number(
        db, org, ChannelKind.CLOUD_API, "222", agent_id=vendas, reply_to_non_text=True
    )
    audio = cloud_message("wamid.aud", "audio", {"id": "m1", "voice": True})
    document = cloud_delivery(
        cloud_value("111", [audio, cloud_text("wamid.t", "oi")]),
        cloud_value("222", [cloud_message("wamid.aud2", "audio", {"id": "m2"})]),
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(document)
    assert answer.body["enqueued"] == 3
    # Stored before the webhook answered; each job names its message only.
    rows = await db.fetch(
        "select external_id, kind, body, expects_reply, agent_id from messages "
        "where organization_id = $1",
        org,
    )
    got = {r["external_id"]: tuple(r.values())[1:] for r in rows}
    assert got == {
        "wamid.aud": ("audio", "[áudio]", False, None),
        "wamid.t": ("text", "oi", True, None),
        "wamid.aud2": ("audio", "[áudio]", True, vendas),
    }
    jobs = await queued_payloads(settings)  # one job per stored message
    assert sorted(j["message_id"] for j in jobs) == ["wamid.aud", "wamid.aud2", "wamid.t"]


async def test_each_number_is_answered_by_its_own_agent(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await insert_agent(db, org, "Suporte", "Você é o Sérgio, do suporte.")
    vendas = await insert_agent(db, org, "Vendas", "Você é a Vera, de vendas.")
    model = RecordingModel()
    support_message = payload(org, "s1", "meu pedido atrasou")
    sales_message = payload(org, "v1", "quero comprar").model_copy(update={"agent_id": vendas})
    stray = payload(org, "x1", "oi").model_copy(update={"agent_id": uuid.uuid4()})
    await enqueue(settings, support_message, sales_message, stray)
    await run_burst(settings, model=model)
    personas = {
        r.messages[-1].content: ("Sérgio" in r.prefix, "Vera" in r.prefix) for r in model.requests
    }
    assert personas == {
        "meu pedido atrasou": (True, False),
        "quero comprar": (False, True),
        "oi": (True, False),  # an agent that is not the org's: the org's first answers
    }
    cache_keys = {r.messages[-1].content: r.cache_key for r in model.requests}
    assert cache_keys["quero comprar"] != cache_keys["meu pedido atrasou"] == cache_keys["oi"]


async def test_a_stored_photo_delivered_again_is_not_answered_as_new(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = RecordingModel()
    photo = _media(org, "img1", "[imagem] modelo azul", reply=False)
    await enqueue(settings, photo)
    await run_burst(settings, model=model)

    # Hours later the provider delivers the photo again (the queue forgot it), just before
    # the customer's next question: found stored as context, it wakes nothing.
    assert await enqueue(settings, photo) == [None]
    await enqueue(settings, payload(org, "t2", "e o prazo?", contact=CONTACT))
    await run_burst(settings.model_copy(update={"max_jobs": 1}), model=model)
    [request] = model.requests
    assert _shown(request) == [("user", "[imagem] modelo azul"), ("user", "e o prazo?")]
    assert [m["answered"] for m in await _inbound(db, org)] == [False, True]


async def test_a_rerun_whose_own_photo_is_stored_still_answers_what_it_was_handed(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    model = RecordingModel()
    photo = _media(org, "img1", "[imagem]", reply=False)
    await enqueue(settings, photo)
    await run_burst(settings, model=model)
    # The photo's job held the conversation and was killed: a text arrived meanwhile (stored;
    # its job found the lease taken and returned "queued"), and the lease ran out.
    question = payload(org, "t1", "tem no azul?", contact=CONTACT)
    pool = await create_pool(settings.database_url, min_size=1, max_size=1)
    try:
        await store_inbound(pool, question, received_at=datetime.now(UTC))
    finally:
        await pool.close()
    await db.execute(
        "update conversations set lease_token = gen_random_uuid(), "
        "lease_until = now() - interval '1 second' where organization_id = $1",
        org,
    )
    # arq re-runs the killed holder's job (the photo's conversation, woken again).
    rerun = await wake_raw(settings, photo)
    await run_burst(settings, model=model)
    assert (await result_of(settings, rerun))["status"] == "stored"
    [request] = model.requests
    assert _shown(request) == [("user", "[imagem]"), ("user", "tem no azul?")]
    assert [m["answered"] for m in await _inbound(db, org)] == [False, True]
