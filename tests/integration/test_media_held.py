"""Media while a person holds the conversation: the agent answers nothing, but a voice note
is still transcribed (a spoken PARAR opts the customer out, confirmed once; any other note
waits for the person as text) and a photo is stored, so the person sees both in the thread;
and a spoken PARAR to the agent is confirmed without the model.
Real webhook, burst workers, Postgres, Redis and S3; fake Graph API and transcription server."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest_asyncio

from api.keys import Role
from conversation.opt_out import OPT_OUT_CONFIRMATION
from core.channel_kind import ChannelKind
from tests.integration.api_support import create_key, running_api
from tests.integration.mode_support import AGENT_REPLY, CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.transcription_fake import FakeTranscriber
from tests.integration.webhook_support import TEST_CONFIG, connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.media_fixtures import png, voice_note
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from webhook.server import start_site
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"
TRANSCRIBING = dataclasses.replace(TEST_CONFIG, transcribes_voice=True)


@pytest_asyncio.fixture(loop_scope="session")
async def transcriber() -> AsyncIterator[FakeTranscriber]:
    fake = FakeTranscriber(text="Parar.")
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}/v1"
    yield fake
    await runner.cleanup()


def _media(message_id: str, kind: str, media: dict[str, Any]) -> dict[str, Any]:
    at = str(int(time.time()))
    return {"from": CUSTOMER, "id": message_id, "timestamp": at, "type": kind, kind: media}


async def _send(settings: Settings, message: dict[str, Any]) -> None:
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))


async def test_a_spoken_parar_counts_and_media_waits_for_the_person_who_holds_it(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = whatsapp_settings.model_copy(
        update={"transcribe_base_url": transcriber.base_url, "transcribe_model": "whisper-1"}
    )
    org = await create_org(db, "Loja Atendida")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER, reply_to_non_text=True)
    editor = await create_key(db, org, Role.EDITOR)
    model = CountingModel()
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(
            cloud_delivery(
                cloud_value(
                    NUMBER,
                    [
                        cloud_text(
                            "wamid.oi", "Bom dia", sender=CUSTOMER, timestamp=int(time.time()) - 5
                        )
                    ],
                )
            )
        )
    await run_burst(settings, model=model)
    conversation: uuid.UUID = await db.fetchval(
        "select id from conversations where organization_id = $1", org
    )
    async with running_api(settings, resources.store) as api:
        path = f"/v1/conversations/{conversation}"
        assert (await api.call("POST", f"{path}/takeover", editor, json_body={})).status == 200

        fake_graph.media["m-parar"] = (voice_note(), "audio/ogg")
        await _send(settings, _media("wamid.parar", "audio", {"id": "m-parar", "voice": True}))
        await run_burst(settings, model=model)
        texts = [text for _, _, text in fake_graph.delivered]
        assert texts == [AGENT_REPLY, OPT_OUT_CONFIRMATION]  # confirmed; the agent is silent
        assert len(model.requests) == 1
        shown = (await api.get(path, editor)).body
        assert (shown["mode"], shown["opted_out"], shown["unanswered"]) == ("human", True, 0)

        transcriber.text = "Quero saber do meu pedido, por favor."
        fake_graph.media["m-pedido"] = (voice_note(), "audio/ogg")
        fake_graph.media["m-foto"] = (png(), "image/png")
        await _send(settings, _media("wamid.pedido", "audio", {"id": "m-pedido", "voice": True}))
        await _send(settings, _media("wamid.foto", "image", {"id": "m-foto", "caption": "esse"}))
        await run_burst(settings, model=model)
        assert len(fake_graph.delivered) == 2 and len(model.requests) == 1  # nothing sent
        assert (await api.get(path, editor)).body["unanswered"] == 2  # they wait for the person
        items = (await api.get(f"{path}/messages", editor)).body["items"]
    by_body = {m["body"]: m for m in items if m["direction"] == "inbound"}
    spoken = by_body["Quero saber do meu pedido, por favor."]  # the person reads the note
    assert (spoken["kind"], spoken["media"]) == ("audio", {"type": "audio/ogg", "stored": True})
    assert by_body["[imagem] esse"]["media"] == {"type": "image/png", "stored": True}
    assert by_body["Parar."]["media"]["stored"] is True


async def test_a_spoken_parar_to_the_agent_is_confirmed_and_not_answered(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = whatsapp_settings.model_copy(
        update={"transcribe_base_url": transcriber.base_url, "transcribe_model": "whisper-1"}
    )
    transcriber.text = "Parar!"
    org = await create_org(db, "Loja Falada")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    model = CountingModel()
    fake_graph.media["m-chega"] = (voice_note(), "audio/ogg")
    await _send(settings, _media("wamid.chega", "audio", {"id": "m-chega", "voice": True}))
    await run_burst(settings, model=model)
    assert [text for _, _, text in fake_graph.delivered] == [OPT_OUT_CONFIRMATION]
    assert model.requests == []
    assert (
        await db.fetchval("select choice from contact_opt_choices where organization_id = $1", org)
        == "out"
    )
