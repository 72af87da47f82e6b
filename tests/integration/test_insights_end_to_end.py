"""The Painel counts what really happens, through the real paths: a Cloud API webhook stores
the customer's messages, a burst worker answers and hands off, a person replies through the
API; GET /v1/insights then shows the day's conversation, handoff and reply times."""

from __future__ import annotations

import time
import uuid

import asyncpg

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import create_key, running_api
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"


async def _customer_says(settings: Settings, text: str) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender=CUSTOMER, timestamp=int(time.time())
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


async def test_a_days_conversation_handoff_and_replies_reach_the_painel(
    whatsapp_settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    editor = await create_key(db, org, Role.EDITOR)
    model = CountingModel()
    await _customer_says(whatsapp_settings, "Oi, qual o prazo?")
    await run_burst(whatsapp_settings, model=model)
    await _customer_says(whatsapp_settings, "quero falar com um atendente")
    await run_burst(whatsapp_settings, model=model)

    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        assert item["mode"] == "waiting"
        path = f"/v1/conversations/{item['id']}/messages"
        sent = await api.call("POST", path, editor, json_body={"text": "Oi! Sou a Ana."})
        assert sent.status == 202, sent.body
        answer = await api.get("/v1/insights", editor)
    assert answer.status == 200, answer.body
    series = {name: values[-1] for name, values in answer.body["series"].items()}
    assert (series["conversations"], series["conversations_with_person"]) == (1, 1)
    assert (series["customer_messages"], series["handoffs_customer"]) == (2, 1)
    assert series["agent_reply_p50_s"] is not None  # the agent answered the first message
    assert series["person_first_reply_p50_s"] is not None
    assert answer.body["summary"]["person_first_replies"] == 1
