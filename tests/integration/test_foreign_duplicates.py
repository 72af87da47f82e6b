"""A message id already stored for one contact, arriving again from another contact, is a
refused duplicate: never answered into, nor re-delivered to, that other contact."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import asyncpg
from structlog.testing import capture_logs

from core.channel_kind import ChannelKind
from delivery.contract import Recipient
from delivery.outbox_queries import OutboxRow
from tests.integration.support import (
    create_org,
    enqueue,
    payload,
    run_burst,
)
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.settings import Settings

ALICE = "5511911110000"
BRUNO = "5511922220000"
SHARED_ID = "wamid.MESMO-ID-DE-DOIS-CONTATOS"


class RecordingSender:
    """Every reply handed to the channel: (contact, body, external id it answers)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str | None]] = []

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        self.sent.append((recipient.contact_id, row.body, recipient.reply_to_external_id))
        return None


async def _inbound(db: asyncpg.Connection, org: uuid.UUID) -> list[tuple[str, str, bool]]:
    """(contact of the conversation, external id, answered) of every inbound message."""
    rows = await db.fetch(
        "select c.contact_id, m.external_id, m.answered_by is not null as answered "
        "from messages m join conversations c on c.id = m.conversation_id "
        "where m.organization_id = $1 and m.direction = 'inbound' "
        "order by c.contact_id, m.external_id",
        org,
    )
    return [(r["contact_id"], r["external_id"], r["answered"]) for r in rows]


async def test_a_pending_reply_is_never_redelivered_to_another_contact(
    settings: Settings, db: asyncpg.Connection
) -> None:
    # Results are not kept, so the second delivery's job id is free again (as an hour later).
    settings = settings.model_copy(update={"keep_result_s": 0})
    org = await create_org(db)
    sender = RecordingSender()
    await enqueue(settings, payload(org, SHARED_ID, "Qual o prazo de entrega?", ALICE))
    await run_burst(settings, sender=sender)
    assert [(to, answered) for to, _, answered in sender.sent] == [(ALICE, SHARED_ID)]
    # A crash between the reply's commit and its delivery: the outbox row is pending again.
    await db.execute("update outbox set status = 'pending', delivery_claimed_at = null")

    sender.sent.clear()
    with capture_logs() as logs:
        await enqueue(
            settings,
            payload(org, SHARED_ID, "Oi", BRUNO),
            payload(org, "wamid.BRUNO-2", "Vocês abrem sábado?", BRUNO),
        )
        await run_burst(settings, sender=sender)
    assert [(to, answered) for to, _, answered in sender.sent] == [(BRUNO, "wamid.BRUNO-2")]
    assert await _inbound(db, org) == [
        (ALICE, SHARED_ID, True),
        (BRUNO, "wamid.BRUNO-2", True),
    ]
    refused = [e for e in logs if e["event"] == "queue.duplicate_foreign_contact"]
    assert refused and refused[0]["log_level"] == "warning"


async def test_an_unanswered_message_is_never_answered_into_another_contacts_conversation(
    settings: Settings, db: asyncpg.Connection
) -> None:
    settings = settings.model_copy(update={"keep_result_s": 0})
    org = await create_org(db)
    # Alice's message is stored and waits for its turn (its job has not run yet).
    conversation_id = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        ALICE,
    )
    now = datetime.now(UTC)
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel,"
        " external_id, body, sent_at, received_at)"
        " values ($1, $2, 'inbound', 'whatsapp', $3, $4, $5, $5)",
        org,
        conversation_id,
        SHARED_ID,
        "Quero cancelar meu pedido 4512",
        now,
    )

    # Bruno's next message: only it is answered, in his conversation (a holder reads its
    # own conversation's rows, never a message id).
    sender = RecordingSender()
    await enqueue(settings, payload(org, "wamid.BRUNO-2", "Vocês abrem sábado?", BRUNO))
    await run_burst(settings, sender=sender)
    assert [(to, answered) for to, _, answered in sender.sent] == [(BRUNO, "wamid.BRUNO-2")]

    # The same id for Bruno is refused where it would be stored (skillet_store_inbound):
    # nothing stored, no job.
    assert await enqueue(settings, payload(org, SHARED_ID, "Oi", BRUNO)) == [None]
    await run_burst(settings, sender=sender)
    assert len(sender.sent) == 1
    assert await _inbound(db, org) == [
        (ALICE, SHARED_ID, False),
        (BRUNO, "wamid.BRUNO-2", True),
    ]
    history = await db.fetch(
        "select m.body from messages m join conversations c on c.id = m.conversation_id "
        "where c.contact_id = $1",
        BRUNO,
    )
    assert "Quero cancelar meu pedido 4512" not in [r["body"] for r in history]


async def test_the_webhook_refuses_a_stored_message_id_from_another_contact(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_graph: FakeGraphApi
) -> None:
    settings = whatsapp_settings.model_copy(update={"keep_result_s": 0})
    org = await create_org(db, "Loja E2E")
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja E2E.")
    await connect_number(db, org, ChannelKind.CLOUD_API, "106540352242922")

    def delivery(sender: str, text: str) -> object:
        message = cloud_text(SHARED_ID, text, sender=sender, timestamp=int(time.time()))
        return cloud_delivery(cloud_value("106540352242922", [message]))

    async with running_webhook(settings) as hook:
        first = await hook.post_cloud(delivery(ALICE, "Qual o prazo de entrega?"))
    assert first.body["enqueued"] == 1
    await run_burst(settings)
    assert [to for _, to, _ in fake_graph.delivered] == [ALICE]
    await db.execute("update outbox set status = 'pending', delivery_claimed_at = null")

    with capture_logs() as logs:
        async with running_webhook(settings) as hook:
            foreign = await hook.post_cloud(delivery(BRUNO, "Oi"))
            same = await hook.post_cloud(delivery(ALICE, "Qual o prazo de entrega?"))
    assert (foreign.status, foreign.body["enqueued"], foreign.body["duplicates"]) == (200, 0, 1)
    refused = [e for e in logs if e["event"] == "webhook.duplicate_foreign_contact"]
    assert [(e["log_level"], e["message_id"]) for e in refused] == [("warning", SHARED_ID)]
    # Alice's own redelivery is still hers: it re-sends her pending reply, to her only.
    assert same.body["enqueued"] == 1

    await run_burst(settings)
    assert [to for _, to, _ in fake_graph.delivered] == [ALICE, ALICE]
    assert await _inbound(db, org) == [(ALICE, SHARED_ID, True)]
    contacts = await db.fetch(
        "select contact_id from conversations where organization_id = $1", org
    )
    assert [r["contact_id"] for r in contacts] == [ALICE]
