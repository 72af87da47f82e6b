"""A reply's delivery in the API and the console comes from its receipts (the provider's
statuses), not from the outbox row: Meta's `read` reads lida, a `failed` with 131026 carries
its code and a pt-BR sentence; a WAHA ack moves it the same way."""

from __future__ import annotations

import time
import uuid
from typing import Any

import asyncpg

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value, waha_ack, waha_event
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"


def _status(wamid: str, state: str, **extra: object) -> dict[str, object]:
    return {
        "id": wamid,
        "status": state,
        "timestamp": str(int(time.time())),
        "recipient_id": "5511912345678",
        **extra,
    }


async def _reply_delivery(api: ApiClient, key: str, db: asyncpg.Connection) -> Any:
    conversation = await db.fetchval("select id from conversations order by created_at desc")
    answer = await api.get(f"/v1/conversations/{conversation}/messages", key)
    assert answer.status == 200, answer.body
    [reply] = [m for m in answer.body["items"] if m["direction"] == "outbound"]
    return reply["delivery"]


async def _post_statuses(settings: Settings, *statuses: dict[str, object]) -> None:
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, statuses=[*statuses])))
    assert answer.status == 200


async def test_cloud_api_statuses_move_a_replys_delivery_up_to_read_or_failed_with_its_code(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    viewer = await create_key(db, org, Role.VIEWER)
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", "Oi!", sender="5511912345678", timestamp=int(time.time())
    )
    async with running_webhook(whatsapp_settings) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    await run_burst(whatsapp_settings)
    wamid = await db.fetchval("select provider_message_id from outbox_receipts")

    async with running_api(whatsapp_settings, resources.store) as api:
        # Accepted by the Graph API, no status yet: sent.
        assert await _reply_delivery(api, viewer, db) == {"status": "sent", "error": None}
        await _post_statuses(whatsapp_settings, _status(wamid, "delivered"))
        assert (await _reply_delivery(api, viewer, db))["status"] == "delivered"
        await _post_statuses(whatsapp_settings, _status(wamid, "read"))
        assert (await _reply_delivery(api, viewer, db))["status"] == "read"

        undeliverable = {
            "code": 131026,
            "title": "Message undeliverable",
            "error_data": {"details": "Message Undeliverable."},
        }
        await _post_statuses(whatsapp_settings, _status(wamid, "failed", errors=[undeliverable]))
        failed = await _reply_delivery(api, viewer, db)
    assert failed == {
        "status": "failed",
        "error": "131026 Message undeliverable: Message Undeliverable.",  # as it was stored
        "error_code": 131026,
    }


async def test_a_long_reply_sent_as_two_messages_reads_as_its_least_advanced_part(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    viewer = await create_key(db, org, Role.VIEWER)
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", "Oi!", sender="5511912345678", timestamp=int(time.time())
    )
    async with running_webhook(whatsapp_settings) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    await run_burst(whatsapp_settings)
    # A second part of the same text (as a split long reply records it).
    await db.execute(
        "insert into outbox_receipts (organization_id, provider_message_id, outbox_id)"
        " select organization_id, 'wamid.part.2', outbox_id from outbox_receipts"
    )
    first = await db.fetchval(
        "select provider_message_id from outbox_receipts"
        " where provider_message_id <> 'wamid.part.2'"
    )
    async with running_api(whatsapp_settings, resources.store) as api:
        await _post_statuses(
            whatsapp_settings, _status(first, "read"), _status("wamid.part.2", "delivered")
        )
        assert (await _reply_delivery(api, viewer, db))["status"] == "delivered"
        await _post_statuses(
            whatsapp_settings,
            _status("wamid.part.2", "failed", errors=[{"code": 131047, "title": "Re-engagement"}]),
        )
        failed = await _reply_delivery(api, viewer, db)
    assert (failed["status"], failed["error_code"]) == ("failed", 131047)


async def test_waha_acks_move_a_replys_delivery_and_an_error_ack_has_no_code(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_waha: FakeWaha,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja WAHA")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    viewer = await create_key(db, org, Role.VIEWER)
    event = waha_event(
        "loja", "false_5511912345678@c.us_AAA", "Oi!", sender="5511912345678@c.us",
        timestamp=int(time.time()),
    )  # fmt: skip
    async with running_webhook(whatsapp_settings) as hook:
        await hook.post_waha(event)
    await run_burst(whatsapp_settings)
    sent_id = await db.fetchval("select provider_message_id from outbox_receipts")
    async with running_api(whatsapp_settings, resources.store) as api:
        async with running_webhook(whatsapp_settings) as hook:
            await hook.post_waha(waha_ack("loja", sent_id, 2))
        assert (await _reply_delivery(api, viewer, db))["status"] == "delivered"
        async with running_webhook(whatsapp_settings) as hook:
            await hook.post_waha(waha_ack("loja", sent_id, -1))
        failed = await _reply_delivery(api, viewer, db)
    assert failed == {"status": "failed", "error": "WAHA ack -1 ERROR", "error_code": None}
