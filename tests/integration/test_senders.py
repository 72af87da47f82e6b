"""Outbound delivery through conversation.outbox.deliver_reply and the real senders, against local
fakes of Meta's Graph API and WAHA: one row is sent at most once, failures keep their reason."""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import aiohttp
import asyncpg
import pytest

from channels.cloud_api import CloudApiConfig, CloudApiSender
from channels.dispatch import ChannelSender
from channels.http import RetryPolicy
from cli.status_queries import fetch_outbox_counts
from conversation.outbox import deliver_reply
from core.channel_kind import ChannelKind
from delivery.contract import LoggingSender, Recipient, Sender
from delivery.errors import SendError
from delivery.outbox_queries import OutboxRow
from dev.processes import free_port
from jobs.context import JobContext
from jobs.outbox_sweep import outbox_sweep
from tests.integration.support import create_org
from tests.integration.webhook_support import connect_number
from tests.integration.whatsapp_fakes import Answer, FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import ACCESS_TOKEN
from worker.channel_senders import build_sender, http_session
from worker.crons import abandoned_after_s
from worker.resources import Resources
from worker.settings import Settings

CONTACT = "5511999990000"


@pytest.fixture
async def http(whatsapp_settings: Settings) -> AsyncIterator[aiohttp.ClientSession]:
    async with http_session(whatsapp_settings) as session:
        yield session


async def _reply(
    db: asyncpg.Connection,
    org: uuid.UUID,
    body: str,
    *,
    contact: str = CONTACT,
    external_id: str | None = None,
    sent_at: datetime | None = None,
) -> tuple[OutboxRow, str]:
    """A conversation, the customer's message, our reply and its pending outbox row."""
    external_id = external_id or f"wamid.in.{uuid.uuid4().hex[:8]}"
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id)"
        " values ($1, 'whatsapp', $2) on conflict (organization_id, channel, contact_id)"
        " do update set channel = 'whatsapp' returning id",
        org,
        contact,
    )
    inbound = await db.fetchval(
        "insert into messages (organization_id, conversation_id, direction, channel, external_id,"
        " body, sent_at) values ($1, $2, 'inbound', 'whatsapp', $3, 'oi', $4) returning id",
        org,
        conversation,
        external_id,
        sent_at or datetime.now(UTC),
    )
    reply = await db.fetchval(
        "insert into messages (organization_id, conversation_id, direction, channel, body,"
        " reply_to_id) values ($1, $2, 'outbound', 'whatsapp', $3, $4) returning id",
        org,
        conversation,
        body,
        inbound,
    )
    columns = ", ".join(f.name for f in dataclasses.fields(OutboxRow))
    row = await db.fetchrow(
        "insert into outbox (organization_id, conversation_id, message_id, body)"
        f" values ($1, $2, $3, $4) returning {columns}",
        org,
        conversation,
        reply,
        body,
    )
    return OutboxRow(**dict(row)), external_id


async def _outbox(db: asyncpg.Connection, row: OutboxRow) -> asyncpg.Record:
    record: asyncpg.Record = await db.fetchrow(
        "select status, attempts, last_error, delivery_claimed_at from outbox where id = $1", row.id
    )
    return record


async def _cloud_org(db: asyncpg.Connection) -> uuid.UUID:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.CLOUD_API, "111")
    return org


class OneConnection:
    """The test's connection where a pool is expected (deliver_reply holds none across the
    send: it acquires, lets go, and acquires again)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[asyncpg.Connection]:
        yield self._conn


async def _deliver(
    db: asyncpg.Connection, sender: Sender, row: OutboxRow, contact: str = CONTACT
) -> bool:
    return await deliver_reply(OneConnection(db), sender, row, Recipient("whatsapp", contact))


async def test_a_reply_reaches_the_graph_api_once_and_is_marked_sent(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "Olá! O frete é grátis acima de R$ 199.")
    sender = build_sender(whatsapp_settings, http)
    assert await _deliver(db, sender, row) is True
    assert await _deliver(db, sender, row) is False  # a second run never sends it again
    assert fake_graph.delivered == [("111", CONTACT, "Olá! O frete é grátis acima de R$ 199.")]
    [request] = fake_graph.received
    assert request.path == "/v23.0/111/messages"
    assert request.headers["Authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert request.body["messaging_product"] == "whatsapp"
    assert request.body["recipient_type"] == "individual"
    assert "context" not in request.body
    outbox = await _outbox(db, row)
    assert (outbox["status"], outbox["attempts"], outbox["last_error"]) == ("sent", 1, None)


async def test_429_is_retried_after_retry_after_then_succeeds(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    fake_graph.script = [
        Answer(429, {"error": {"code": 130429, "message": "Rate limit hit"}}, {"Retry-After": "2"}),
        Answer(503, {"error": {"code": 131016, "message": "Service unavailable"}}),
    ]
    slept: list[float] = []

    async def sleep(delay_s: float) -> None:
        slept.append(delay_s)

    cloud = CloudApiSender(
        http,
        CloudApiConfig(base_url=fake_graph.base_url, access_token=ACCESS_TOKEN),
        RetryPolicy(max_attempts=4, backoff_base_s=0.5, backoff_max_s=8, retry_after_max_s=10),
        sleep=sleep,
    )
    sender = ChannelSender({"cloud_api": cloud}, unrouted=None)
    assert await _deliver(db, sender, row) is True
    assert len(fake_graph.received) == 3
    assert slept == [2.0, 1.0]  # Retry-After honoured, then the backoff's second step
    assert fake_graph.delivered == [("111", CONTACT, "resposta")]
    assert (await _outbox(db, row))["status"] == "sent"


async def test_retry_after_is_really_waited_with_the_default_sleep(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    fake_graph.script = [Answer(429, {}, {"Retry-After": "1"})]
    started = time.monotonic()
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is True
    assert time.monotonic() - started >= 1.0
    assert len(fake_graph.delivered) == 1


async def test_a_permanent_refusal_marks_the_row_failed_with_the_reason(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    fake_graph.script = [Answer(400, {"error": {"code": 131026, "message": "Undeliverable"}})]
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is False
    assert len(fake_graph.received) == 1  # not retried
    outbox = await _outbox(db, row)
    assert outbox["status"] == "failed"
    assert outbox["last_error"].startswith("send_rejected: HTTP 400, Graph error 131026")
    assert "Undeliverable" in outbox["last_error"]
    # A failed row is never picked up again.
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is False
    assert len(fake_graph.received) == 1


async def test_retries_are_bounded_then_the_row_fails(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    fake_graph.script = [Answer(500, {"error": {"code": 1}}) for _ in range(10)]
    settings = whatsapp_settings.model_copy(update={"send_max_attempts": 3})
    assert await _deliver(db, build_sender(settings, http), row) is False
    assert len(fake_graph.received) == 3
    outbox = await _outbox(db, row)
    assert outbox["status"] == "failed"
    assert outbox["last_error"].startswith("send_retries_exhausted: gave up after 3 attempt(s)")


async def test_a_lost_answer_is_not_resent(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    fake_graph.script = [Answer(200, {}, delay_s=2.0)]  # it may well have been delivered
    settings = whatsapp_settings.model_copy(update={"send_timeout_s": 0.3})
    async with http_session(settings) as short:
        assert await _deliver(db, build_sender(settings, short), row) is False
    assert len(fake_graph.received) == 1
    outbox = await _outbox(db, row)
    assert (outbox["status"], outbox["last_error"][:16]) == ("failed", "delivery_unknown")


async def test_an_unreachable_api_is_retried_then_fails(
    whatsapp_settings: Settings, http: aiohttp.ClientSession, db: asyncpg.Connection
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    nowhere = f"http://127.0.0.1:{free_port()}/v23.0"
    settings = whatsapp_settings.model_copy(
        update={"graph_api_base_url": nowhere, "send_max_attempts": 2}
    )
    assert await _deliver(db, build_sender(settings, http), row) is False
    outbox = await _outbox(db, row)
    assert outbox["status"] == "failed"
    assert outbox["last_error"].startswith("send_retries_exhausted: gave up after 2 attempt(s)")
    assert "unreachable" in outbox["last_error"]


async def test_a_long_reply_is_split_under_4096_and_quotes_only_in_the_first_part(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    paragraphs = [f"Parágrafo {n}. " + "Texto de exemplo com acentuação. " * 60 for n in range(5)]
    body = "\n\n".join(paragraphs)
    assert len(body) > 2 * 4096
    row, external_id = await _reply(db, org, body)
    settings = whatsapp_settings.model_copy(update={"reply_with_context": True})
    assert await _deliver(db, build_sender(settings, http), row) is True
    texts = [text for _, _, text in fake_graph.delivered]
    assert len(texts) == 3 and all(len(t) <= 4096 for t in texts)
    assert " ".join(" ".join(texts).split()) == " ".join(body.split())
    assert texts[0].startswith("Parágrafo 0.") and texts[-1].endswith("acentuação.")
    contexts = [r.body.get("context") for r in fake_graph.received]
    assert contexts == [{"message_id": external_id}, None, None]
    assert (await _outbox(db, row))["status"] == "sent"


async def test_outside_the_24_hour_window_no_free_form_reply_is_attempted(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    stale, _ = await _reply(
        db, org, "tarde demais", sent_at=datetime.now(UTC) - timedelta(hours=24, minutes=1)
    )
    assert await _deliver(db, build_sender(whatsapp_settings, http), stale) is False
    assert fake_graph.received == []
    outbox = await _outbox(db, stale)
    assert outbox["status"] == "failed"
    assert outbox["last_error"].startswith("outside_service_window:")


async def test_meta_refusing_a_reengagement_message_is_the_same_failure(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    fake_graph.script = [
        Answer(400, {"error": {"code": 131047, "message": "Re-engagement message"}})
    ]
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is False
    assert (await _outbox(db, row))["last_error"].startswith("outside_service_window:")


async def test_a_row_claimed_by_a_crashed_run_is_never_sent_again(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")
    # A run claimed it and died inside the HTTP call: it may have reached the customer.
    await db.execute("update outbox set delivery_claimed_at = now() where id = $1", row.id)
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is False
    assert fake_graph.received == []
    assert (await _outbox(db, row))["status"] == "pending"


async def test_the_sweep_fails_claims_older_than_any_send_and_status_counts_them(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _cloud_org(db)
    abandoned, _ = await _reply(db, org, "resposta 1")
    in_flight, _ = await _reply(db, org, "resposta 2")
    waiting, _ = await _reply(db, org, "resposta 3")
    age_s = abandoned_after_s(settings) + 5
    await db.execute(
        "update outbox set delivery_claimed_at = now() - make_interval(secs => $2) where id = $1",
        abandoned.id,
        age_s,
    )
    await db.execute("update outbox set delivery_claimed_at = now() where id = $1", in_flight.id)
    before = await fetch_outbox_counts(db, codes=5)
    assert (before.pending, before.sending, before.failed_24h) == (3, 2, {})

    ctx: JobContext = {  # the worker's RLS-bound pool
        "pool": resources.pool,
        "outbox_abandoned_after_s": abandoned_after_s(settings),
    }
    assert await outbox_sweep(ctx) == {"status": "ok", "failed": 1}
    swept = await _outbox(db, abandoned)
    assert swept["status"] == "failed"
    assert swept["last_error"].startswith("delivery_unknown: the send was interrupted")
    assert (await _outbox(db, in_flight))["status"] == "pending"  # may still be sending
    assert (await _outbox(db, waiting))["status"] == "pending"
    assert await outbox_sweep(ctx) == {"status": "ok", "failed": 0}  # idempotent
    after = await fetch_outbox_counts(db, codes=5)
    assert (after.pending, after.sending, after.failed_24h) == (2, 1, {"delivery_unknown": 1})


async def test_a_retryable_send_error_releases_the_claim(db: asyncpg.Connection) -> None:
    org = await _cloud_org(db)
    row, _ = await _reply(db, org, "resposta")

    class Flaky:
        calls = 0

        async def send(self, row: OutboxRow, recipient: Recipient) -> None:
            self.calls += 1
            assert recipient.route is not None
            if self.calls == 1:
                assert (await _outbox(db, row))["delivery_claimed_at"] is not None
                raise SendError("connection refused before sending", retryable=True)

    flaky = Flaky()
    with pytest.raises(SendError):
        await _deliver(db, flaky, row)
    assert (await _outbox(db, row))["delivery_claimed_at"] is None
    assert await _deliver(db, flaky, row) is True
    assert flaky.calls == 2


async def test_a_row_with_no_channel_is_not_claimed_so_a_rerun_still_delivers_it(
    db: asyncpg.Connection,
) -> None:
    org = await create_org(db)  # no channel: the reply reaches no one, nothing to protect
    row, _ = await _reply(db, org, "resposta")

    class DiesMidSend:
        async def send(self, row: OutboxRow, recipient: Recipient) -> None:
            raise RuntimeError("worker killed")

    with pytest.raises(RuntimeError):
        await _deliver(db, DiesMidSend(), row)
    outbox = await _outbox(db, row)
    assert (outbox["status"], outbox["delivery_claimed_at"]) == ("pending", None)
    assert await _deliver(db, LoggingSender(), row) is True


async def test_the_reply_leaves_from_the_number_its_message_came_to(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.CLOUD_API, "111")
    second = await connect_number(db, org, ChannelKind.CLOUD_API, "222")
    row, external_id = await _reply(db, org, "pelo segundo número")
    await db.execute(
        "insert into inbound_routes (organization_id, external_id, channel_id) values ($1, $2, $3)",
        org,
        external_id,
        second.id,
    )
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is True
    assert fake_graph.delivered == [("222", CONTACT, "pelo segundo número")]


async def test_waha_replies_use_send_text_with_the_api_key(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_waha: FakeWaha,
) -> None:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    by_phone, _ = await _reply(db, org, "oi pelo WAHA")
    by_lid, _ = await _reply(db, org, "oi, lid", contact="98765432101234@lid")
    sender = build_sender(whatsapp_settings, http)
    assert await _deliver(db, sender, by_phone) is True
    assert await _deliver(db, sender, by_lid, contact="98765432101234@lid") is True
    assert fake_waha.delivered == [
        ("loja", f"{CONTACT}@c.us", "oi pelo WAHA"),
        ("loja", "98765432101234@lid", "oi, lid"),
    ]
    assert fake_waha.received[0].path == "/api/sendText"
    assert fake_waha.received[0].body["linkPreview"] is False


async def test_a_waha_server_answering_without_end_is_read_no_further_and_the_reply_sent(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_waha: FakeWaha,
) -> None:
    # The session's WAHA server is the business's own: an answer that never ends was read
    # until the send's timeout, then the accepted reply failed as delivery_unknown.
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    row, _ = await _reply(db, org, "oi pelo WAHA")
    fake_waha.endless_answers = True
    assert await _deliver(db, build_sender(whatsapp_settings, http), row) is True
    assert fake_waha.delivered == [("loja", f"{CONTACT}@c.us", "oi pelo WAHA")]
    assert (await _outbox(db, row))["status"] == "sent"


async def test_waha_refusing_the_api_key_fails_the_row(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_waha: FakeWaha,
) -> None:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    row, _ = await _reply(db, org, "oi")
    settings = whatsapp_settings.model_copy(update={"waha_api_key": None})
    assert await _deliver(db, build_sender(settings, http), row) is False
    assert (await _outbox(db, row))["last_error"].startswith("channel_unauthorized: HTTP 401")


@pytest.mark.parametrize(("policy", "status"), [("log", "sent"), ("fail", "failed")])
async def test_a_reply_with_no_channel_follows_the_unrouted_policy(
    whatsapp_settings: Settings,
    http: aiohttp.ClientSession,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    policy: str,
    status: str,
) -> None:
    org = await create_org(db)  # no channel at all (e.g. messages from `skillet enqueue`)
    row, _ = await _reply(db, org, "resposta")
    settings = whatsapp_settings.model_copy(update={"unrouted_replies": policy})
    assert await _deliver(db, build_sender(settings, http), row) is (policy == "log")
    outbox = await _outbox(db, row)
    assert outbox["status"] == status
    assert fake_graph.received == []
    if policy == "fail":
        assert outbox["last_error"].startswith("no_channel:")
