"""End to end: a signed webhook POST -> a job -> a real arq worker's turn -> the reply arrives
at the (fake) provider API exactly once, from the number the message was sent to."""

from __future__ import annotations

import time

import asyncpg

from cli.status_queries import fetch_outbox_counts
from core.channel_kind import ChannelKind
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import (
    ACCESS_TOKEN,
    cloud_delivery,
    cloud_text,
    cloud_value,
    waha_ack,
    waha_event,
)
from turn.agent_queries import insert_agent
from worker.settings import Settings


async def _outbox(db: asyncpg.Connection) -> list[tuple[str, int]]:
    rows = await db.fetch("select status, attempts from outbox order by created_at")
    return [(r["status"], r["attempts"]) for r in rows]


async def test_cloud_api_message_is_answered_at_the_graph_api_exactly_once(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_graph: FakeGraphApi
) -> None:
    org = await create_org(db, "Loja E2E")
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja E2E.")
    await connect_number(db, org, ChannelKind.CLOUD_API, "106540352242922")
    await connect_number(db, org, ChannelKind.CLOUD_API, "106540352242923")  # not this one
    message = cloud_text(
        "wamid.HBgNNTUxMTkxMjM0NTY3OBUCABIYFDNBMDI",
        "Oi! Qual o prazo de entrega?",
        sender="5511912345678",
        timestamp=int(time.time()),
    )
    document = cloud_delivery(cloud_value("106540352242922", [message]))
    async with running_webhook(whatsapp_settings) as hook:
        first = await hook.post_cloud(document)
        redelivered = await hook.post_cloud(document)  # Meta retries what it thinks was lost
    assert (first.status, first.body["enqueued"]) == (200, 1)
    assert (redelivered.status, redelivered.body["duplicates"]) == (200, 1)

    worker = await run_burst(whatsapp_settings)  # the real per-channel sender selection
    assert worker.jobs_complete == 1 and worker.jobs_failed == 0
    async with running_webhook(whatsapp_settings) as hook:  # and again after the turn ran
        late = await hook.post_cloud(document)
    assert late.body["enqueued"] == 0
    await run_burst(whatsapp_settings)

    [(phone_number_id, to, text)] = fake_graph.delivered
    assert (phone_number_id, to) == ("106540352242922", "5511912345678")
    assert text.strip()
    # The read mark (with the typing indicator) and the reply, each with the number's token.
    assert [r.headers["Authorization"] for r in fake_graph.received] == [
        f"Bearer {ACCESS_TOKEN}"
    ] * 2
    # (In either order here: the local model answers at once; the read goes in the background.)
    assert sorted(str(r.body.get("status")) for r in fake_graph.received) == ["None", "read"]
    assert await _outbox(db) == [("sent", 1)]
    stored = await db.fetchval(
        "select body from messages where direction = 'outbound' and organization_id = $1", org
    )
    assert stored == text


async def test_waha_message_is_answered_through_send_text_exactly_once(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    org = await create_org(db, "Loja WAHA")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    lid = "98765432101234@lid"
    event = waha_event(
        "loja",
        "false_98765432101234@lid_3EB0C767D26A1D4C5E",
        "Boa tarde, vocês abrem sábado?",
        sender=lid,
        data={"key": {"remoteJid": lid, "remoteJidAlt": "5511912345678@s.whatsapp.net"}},
        timestamp=int(time.time()),
    )
    async with running_webhook(whatsapp_settings) as hook:
        assert (await hook.post_waha(event)).body["enqueued"] == 1
        assert (await hook.post_waha(event)).body["duplicates"] == 1
    await run_burst(whatsapp_settings)
    [(session, chat_id, text)] = fake_waha.delivered
    assert (session, chat_id) == ("loja", "5511912345678@c.us")
    assert text.strip()
    assert await _outbox(db) == [("sent", 1)]


def _status(wamid: str, state: str, **extra: object) -> dict[str, object]:
    return {
        "id": wamid,
        "status": state,
        "timestamp": str(int(time.time())),
        "recipient_id": "5511912345678",
        **extra,
    }


async def test_a_replys_delivery_statuses_are_kept_for_its_org_and_never_move_back(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_graph: FakeGraphApi
) -> None:
    org, other = await create_org(db, "Loja"), await create_org(db, "Outra loja")
    await connect_number(db, org, ChannelKind.CLOUD_API, "106540352242922")
    await connect_number(db, other, ChannelKind.CLOUD_API, "106540352249999")
    message = cloud_text("wamid.in.1", "Oi!", sender="5511912345678", timestamp=int(time.time()))
    async with running_webhook(whatsapp_settings) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value("106540352242922", [message])))
    await run_burst(whatsapp_settings)
    [(wamid, state)] = await _receipts(db, org)
    assert state == "accepted"  # the Graph API's id for the reply, before any status

    undeliverable = {"code": 131026, "title": "Message undeliverable"}
    async with running_webhook(whatsapp_settings) as hook:
        # Another org's number cannot touch this org's receipts, whatever id it names.
        stranger = await hook.post_cloud(
            cloud_delivery(
                cloud_value(
                    "106540352249999", statuses=[_status(wamid, "failed", errors=[undeliverable])]
                )
            )
        )
        assert stranger.body["statuses"] == 0
        # Meta may post statuses out of order, several in one batch: the highest one wins.
        both = await hook.post_cloud(
            cloud_delivery(
                cloud_value(
                    "106540352242922", statuses=[_status(wamid, "read"), _status(wamid, "sent")]
                )
            )
        )
        assert both.body["statuses"] == 1
        late = await hook.post_cloud(
            cloud_delivery(cloud_value("106540352242922", statuses=[_status(wamid, "delivered")]))
        )
        assert late.body["statuses"] == 0
    assert await _receipts(db, org) == [(wamid, "read")]
    assert await _receipts(db, other) == []

    # A later failure is final and keeps Meta's reason; `skillet status` counts it.
    async with running_webhook(whatsapp_settings) as hook:
        await hook.post_cloud(
            cloud_delivery(
                cloud_value(
                    "106540352242922", statuses=[_status(wamid, "failed", errors=[undeliverable])]
                )
            )
        )
    error = await db.fetchval("select error from outbox_receipts where organization_id = $1", org)
    assert error == "131026 Message undeliverable"
    counts = await fetch_outbox_counts(db, codes=5)
    assert counts.undelivered_24h == {"131026": 1}


async def _receipts(db: asyncpg.Connection, org: object) -> list[tuple[str, str]]:
    rows = await db.fetch(
        "select provider_message_id, status from outbox_receipts where organization_id = $1",
        org,
    )
    return [(r["provider_message_id"], r["status"]) for r in rows]


async def test_waha_acks_move_a_replys_receipts_forward_only(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    org, other = await create_org(db, "Loja WAHA"), await create_org(db, "Outra loja")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    await connect_number(db, other, ChannelKind.WAHA, "outra")
    event = waha_event(
        "loja", "false_5511912345678@c.us_AAA", "Oi!", sender="5511912345678@c.us",
        timestamp=int(time.time()),
    )  # fmt: skip
    async with running_webhook(whatsapp_settings) as hook:
        assert (await hook.post_waha(event)).body["enqueued"] == 1
    await run_burst(whatsapp_settings)
    [(sent_id, state)] = await _receipts(db, org)
    assert state == "accepted" and sent_id.startswith("true_5511912345678@c.us_")

    async with running_webhook(whatsapp_settings) as hook:
        # Another org's session cannot touch this org's receipt, whatever id it names.
        stranger = await hook.post_waha(waha_ack("outra", sent_id, -1))
        assert stranger.body["statuses"] == 0
        moved = [
            (await hook.post_waha(waha_ack("loja", sent_id, ack))).body["statuses"]
            for ack in (0, 2, 1, 4, 3)  # PENDING, DEVICE, a late SERVER, PLAYED, READ
        ]
        assert await _receipts(db, org) == [(sent_id, "read")]
        assert moved == [0, 1, 0, 1, 0]
    assert await _receipts(db, other) == []

    async with running_webhook(whatsapp_settings) as hook:
        assert (await hook.post_waha(waha_ack("loja", sent_id, -1))).body["statuses"] == 1
    error = await db.fetchval("select error from outbox_receipts where organization_id = $1", org)
    assert error == "WAHA ack -1 ERROR"
    async with running_webhook(whatsapp_settings) as hook:  # failed is final
        assert (await hook.post_waha(waha_ack("loja", sent_id, 3))).body["statuses"] == 0
    assert await _receipts(db, org) == [(sent_id, "failed")]
