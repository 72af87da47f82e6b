"""Media customers send, end to end on real Postgres, Redis and S3 with real burst workers: a
signed webhook delivery -> the job downloads the media from the (fake) provider with the
number's credentials -> the exact bytes go to a transcription server speaking OpenAI's wire ->
the transcript is answered like typed text; refusals get a clear pt-BR reply."""

from __future__ import annotations

import base64
import dataclasses
import re
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg
import pytest
import pytest_asyncio
from pydantic import SecretStr

from api.keys import Role
from channels.credential_queries import upsert_channel_secrets_as_owner
from conversation.handoff.texts import HANDOFF_ACK_DEFAULT
from conversation.media.reader import NOT_TRANSCRIBED, REPLIES, UNREADABLE_REPLY
from core.channel_kind import ChannelKind
from core.object_store import ObjectNotFound
from jobs.media_retention import MEDIA_RETENTION, delete_expired_media
from tests.integration.api_support import create_key, running_api
from tests.integration.support import create_org, publish, run_burst
from tests.integration.transcription_fake import FakeTranscriber
from tests.integration.webhook_support import TEST_CONFIG, connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.media_fixtures import pdf, png, voice_note
from tests.model_fakes import FakeOpenAI
from tests.whatsapp_payloads import (
    ACCESS_TOKEN,
    WAHA_API_KEY,
    cloud_delivery,
    cloud_value,
    waha_event,
)
from turn.agent_queries import create_agent, insert_agent, update_agent
from turn.model_input import CONTACT_NAME_LINE
from webhook.server import start_site
from worker.crons import periodic_jobs
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"
TRANSCRIPT = "Oi, qual o prazo de entrega para São Paulo?"
SKILL_REPLY = "Entregamos em São Paulo em até 2 dias úteis."
TRANSCRIBING = dataclasses.replace(TEST_CONFIG, transcribes_voice=True)


@pytest_asyncio.fixture(loop_scope="session")
async def transcriber() -> AsyncIterator[FakeTranscriber]:
    fake = FakeTranscriber(text=TRANSCRIPT)
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}/v1"
    yield fake
    await runner.cleanup()


def _media_settings(settings: Settings, transcriber: FakeTranscriber, **extra: Any) -> Settings:
    return settings.model_copy(
        update={
            "transcribe_base_url": transcriber.base_url,
            "transcribe_model": "whisper-large-v3",
            **extra,
        }
    )


async def _org_with_skill(db: asyncpg.Connection, resources: Resources) -> uuid.UUID:
    org = await create_org(db, "Loja Mídia")
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja Mídia.")
    await publish(
        db, resources.store, org, "entrega", keywords=["prazo de entrega"], body=SKILL_REPLY
    )
    return org


def _cloud_media(message_id: str, kind: str, media: dict[str, Any]) -> dict[str, Any]:
    return {
        "from": CUSTOMER,
        "id": message_id,
        "timestamp": str(int(time.time())),
        "type": kind,
        kind: media,
    }


async def _message(db: asyncpg.Connection, external_id: str) -> asyncpg.Record:
    row = await db.fetchrow(
        "select kind, body, media, media_state, media_key, media_type, media_bytes"
        " from messages where external_id = $1",
        external_id,
    )
    assert row is not None
    return row


async def _stored_bytes(resources: Resources, key: str) -> bytes:
    stored = await resources.store.get(key, max_bytes=32 * 1024 * 1024)
    return stored.data


async def test_a_cloud_api_voice_note_is_downloaded_transcribed_and_answered_by_its_skill(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)  # no reply to non-text
    audio = voice_note()
    fake_graph.media["1013859600285441"] = (audio, "audio/ogg; codecs=opus")
    message = _cloud_media(
        "wamid.voice.1",
        "audio",
        {
            "mime_type": "audio/ogg; codecs=opus",
            "sha256": "abc=",
            "id": "1013859600285441",
            "voice": True,
        },
    )
    async with running_webhook(settings, TRANSCRIBING) as hook:
        posted = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert posted.body["enqueued"] == 1
    stored = await _message(db, "wamid.voice.1")
    assert stored["media"]["id"] == "1013859600285441"
    assert stored["media"]["type"] == "audio/ogg; codecs=opus"
    assert stored["media_state"] == "pending"
    assert fake_graph.media_downloads == []  # the webhook never fetches

    worker = await run_burst(settings)
    assert worker.jobs_failed == 0
    assert fake_graph.media_downloads == [("1013859600285441", ACCESS_TOKEN)]
    [request] = transcriber.received
    assert request.data == audio  # the exact bytes
    assert request.fields["model"] == "whisper-large-v3"
    assert request.fields["language"] == "pt"
    [(_, to, text)] = fake_graph.delivered
    assert (to, text) == (CUSTOMER, SKILL_REPLY)
    stored = await _message(db, "wamid.voice.1")
    assert (stored["kind"], stored["body"], stored["media_state"]) == (
        "audio",
        TRANSCRIPT,
        "transcribed",
    )
    assert stored["media_key"].startswith(f"media/{org}/")
    assert await _stored_bytes(resources, stored["media_key"]) == audio


async def test_a_waha_voice_note_is_fetched_with_the_key_on_its_server_and_answered(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_waha: FakeWaha,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    audio = voice_note()
    fake_waha.files["voz.oga"] = (audio, "audio/ogg")
    event = waha_event(
        "loja",
        "false_5511912345678@c.us_3EB0VOZ",
        "",
        sender=f"{CUSTOMER}@c.us",
        has_media=True,
        data={"type": "ptt"},
        timestamp=int(time.time()),
        extra={
            "media": {
                "url": f"{fake_waha.base_url}/api/files/loja/voz.oga",
                "mimetype": "audio/ogg; codecs=opus",
                "filename": None,
            }
        },
    )
    async with running_webhook(settings, TRANSCRIBING) as hook:
        assert (await hook.post_waha(event)).body["enqueued"] == 1
    await run_burst(settings)
    assert fake_waha.file_downloads == [("voz.oga", WAHA_API_KEY)]
    assert transcriber.received[-1].data == audio
    [(session, chat_id, text)] = fake_waha.delivered
    assert (session, chat_id, text) == ("loja", f"{CUSTOMER}@c.us", SKILL_REPLY)


async def test_bytes_of_no_supported_type_and_too_large_files_get_a_clear_reply(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber, media_max_bytes=4096)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER, reply_to_non_text=True)
    fake_graph.media["m-exe"] = (b"MZ\x90\x00" + b"\x00" * 200, "application/pdf")
    fake_graph.media["m-big"] = (pdf() + b"%" * 5000, "application/pdf")
    messages = [
        _cloud_media("wamid.doc.exe", "document", {"id": "m-exe", "filename": "../../a.pdf"}),
    ]
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, messages)))
    await run_burst(settings)
    big = [_cloud_media("wamid.doc.big", "document", {"id": "m-big", "filename": "tabela.pdf"})]
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, big)))
    await run_burst(settings)
    assert [text for _, _, text in fake_graph.delivered] == [
        UNREADABLE_REPLY,
        REPLIES["media_too_large"],
    ]
    refused = await _message(db, "wamid.doc.exe")
    assert refused["media_state"] == "refused"
    assert refused["media"]["file_name"] == "a.pdf"  # sanitized before it reached the row


async def test_an_image_and_a_pdf_are_stored_and_described_under_their_own_prefix(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER, reply_to_non_text=True)
    fake_graph.media["m-png"] = (png(), "image/jpeg")  # declared wrong: the bytes win
    fake_graph.media["m-pdf"] = (pdf(), "application/pdf")
    messages = [
        _cloud_media("wamid.img", "image", {"id": "m-png", "caption": "olha o produto"}),
        _cloud_media("wamid.pdf", "document", {"id": "m-pdf", "filename": "orçamento final.pdf"}),
    ]
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, messages)))
    await run_burst(settings)
    image, document = await _message(db, "wamid.img"), await _message(db, "wamid.pdf")
    assert (image["media_state"], image["media_type"]) == ("stored", "image/png")
    assert image["body"] == "[imagem] olha o produto"
    assert (
        document["body"] == f"[documento] orcamento_final.pdf ({round(len(pdf()) / 1024) or 1} KB)"
    )
    assert document["media_key"] == (
        f"media/{org}/{document['media_key'].split('/')[2]}/"
        f"{await db.fetchval('select id from messages where external_id = $1', 'wamid.pdf')}"
        "/orcamento_final.pdf"
    )
    assert await _stored_bytes(resources, document["media_key"]) == pdf()
    assert transcriber.received == []
    assert len(fake_graph.delivered) == 1  # one reply for the burst


async def test_a_transcription_outage_is_retried_then_dead_lettered_and_answered_on(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber, max_tries=3)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-voz"] = (voice_note(), "audio/ogg; codecs=opus")
    transcriber.statuses = [503, 503, 503]
    voice = _cloud_media("wamid.voz.outage", "audio", {"id": "m-voz", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert len(transcriber.received) == 3  # tried, retried, then given up
    [(_, _, text)] = fake_graph.delivered
    assert text == REPLIES["transcription_rejected"]
    dead = await db.fetch("select function, error_code from dead_letters")
    assert [(d["function"], d["error_code"]) for d in dead] == [
        ("media_refused", "transcription_unavailable")
    ]
    typed = {
        "from": CUSTOMER,
        "id": "wamid.typed.after",
        "timestamp": str(int(time.time())),
        "type": "text",
        "text": {"body": "e o prazo de entrega?"},
    }
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [typed])))
    await run_burst(settings)
    assert fake_graph.delivered[-1][2] == SKILL_REPLY  # the conversation goes on


async def test_the_numbers_own_token_fetches_and_no_token_goes_to_an_untrusted_host(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    channel = await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    own_token = "token-proprio-do-numero-0001"
    await upsert_channel_secrets_as_owner(db, channel, access_token=own_token)
    fake_graph.own(own_token, NUMBER)
    fake_graph.media["m-own"] = (voice_note(), "audio/ogg")
    voice = _cloud_media("wamid.own", "audio", {"id": "m-own", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert fake_graph.media_downloads == [("m-own", own_token)]
    assert fake_graph.delivered[-1][2] == SKILL_REPLY

    # The Graph API names a download URL on a host it does not own: nothing is sent there.
    fake_graph.media_host = "localhost:9"
    fake_graph.media["m-elsewhere"] = (voice_note(), "audio/ogg")
    voice = _cloud_media("wamid.elsewhere", "audio", {"id": "m-elsewhere", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert fake_graph.media_downloads == [("m-own", own_token)]  # no second download
    assert fake_graph.delivered[-1][2] == UNREADABLE_REPLY
    dead = await db.fetch("select error_code from dead_letters")
    assert [d["error_code"] for d in dead] == ["media_unavailable"]


async def test_a_burst_of_text_and_voice_keeps_arrival_order(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    """Text, then a voice note that cannot be heard, then text: the first text is answered
    first, then the voice note, then the last text; each in its place."""
    settings = _media_settings(whatsapp_settings, transcriber)
    transcriber.text = "   "  # heard nothing
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-mudo"] = (voice_note(), "audio/ogg")
    now = int(time.time())

    def typed(message_id: str, text: str, at: int) -> dict[str, Any]:
        return {
            "from": CUSTOMER,
            "id": message_id,
            "timestamp": str(at),
            "type": "text",
            "text": {"body": text},
        }

    voice = _cloud_media("wamid.mudo", "audio", {"id": "m-mudo", "voice": True})
    messages = [
        typed("wamid.t1", "qual o prazo de entrega?", now),
        voice,
        typed("wamid.t2", "obrigado", now),
    ]
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, messages)))
    await run_burst(settings)
    texts = [text for _, _, text in fake_graph.delivered]
    assert texts[:2] == [SKILL_REPLY, REPLIES["transcript_empty"]]
    assert len(texts) == 3
    answered = await db.fetch(
        "select external_id, answered_by is not null as answered from messages"
        " where direction = 'inbound' order by received_at, id"
    )
    assert all(r["answered"] for r in answered)


async def test_a_spoken_request_for_a_person_hands_the_conversation_off(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    transcriber.text = "Quero falar com um atendente, por favor."
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-humano"] = (voice_note(), "audio/ogg")
    voice = _cloud_media("wamid.humano", "audio", {"id": "m-humano", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert fake_graph.delivered[-1][2] == HANDOFF_ACK_DEFAULT
    assert await db.fetchval("select mode from conversations where organization_id = $1", org) == (
        "waiting"
    )


async def test_a_voice_note_over_the_length_cap_is_not_transcribed(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber, voice_max_seconds=1)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-longo"] = (voice_note(), "audio/ogg")  # about 3 s
    voice = _cloud_media("wamid.longo", "audio", {"id": "m-longo", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert transcriber.received == []
    assert fake_graph.delivered[-1][2] == REPLIES["voice_too_long"]


async def test_without_a_transcription_server_a_voice_note_is_described_as_before(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-sem"] = (voice_note(), "audio/ogg")
    voice = _cloud_media("wamid.sem", "audio", {"id": "m-sem", "voice": True})
    async with running_webhook(whatsapp_settings) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(whatsapp_settings)
    assert fake_graph.media_downloads == [] and fake_graph.delivered == []
    stored = await _message(db, "wamid.sem")
    assert (stored["body"], stored["media_state"]) == ("[áudio]", "pending")


async def test_media_past_its_retention_is_deleted_and_the_transcript_stays(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-velho"] = (voice_note(), "audio/ogg")
    voice = _cloud_media("wamid.velho", "audio", {"id": "m-velho", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    key = (await _message(db, "wamid.velho"))["media_key"]
    now = datetime.now(UTC)
    kept = await delete_expired_media(
        resources.pool, resources.store, retention=timedelta(days=30), now=now
    )
    assert kept == 0  # stored today
    cleared = await delete_expired_media(
        resources.pool, resources.store, retention=timedelta(days=30), now=now + timedelta(days=31)
    )
    assert cleared == 1
    with pytest.raises(ObjectNotFound):
        await resources.store.get(key, max_bytes=10)
    stored = await _message(db, "wamid.velho")
    assert (stored["body"], stored["media_state"], stored["media_key"]) == (
        TRANSCRIPT,
        "deleted",
        None,
    )
    crons, _ = periodic_jobs(settings, burst=False)
    assert MEDIA_RETENTION in {job.name for job in crons}


async def test_an_image_goes_to_a_vision_agents_openai_compatible_model_as_a_data_uri(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    fake_model = FakeOpenAI("sk-openai-de-teste")
    await fake_model.start()
    try:
        settings = _media_settings(
            whatsapp_settings,
            transcriber,
            openai_base_url=f"{fake_model.base_url}/v1",
            openai_api_key=SecretStr("sk-openai-de-teste"),
        )
        org = await create_org(db, "Loja Visão")
        agent = await create_agent(
            db,
            org,
            name="Vê",
            system_prompt="Você vê fotos.",
            model_provider="openai",
            model_name="gpt-test",
        )
        await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER, reply_to_non_text=True)
        image = png()
        fake_graph.media["m-foto"] = (image, "image/png")
        photo = _cloud_media("wamid.foto", "image", {"id": "m-foto", "caption": "tem em azul?"})
        async with running_webhook(settings, TRANSCRIBING) as hook:
            await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [photo])))
        await run_burst(settings)  # vision off: the caption only
        first = fake_model.received[-1].body["messages"][-1]
        # The customer's profile name ("Cliente", from the delivery) opens their message.
        named = CONTACT_NAME_LINE.format(name="Cliente")
        assert first == {"role": "user", "content": f"{named}\n[imagem] tem em azul?"}

        await update_agent(db, dataclasses.replace(agent, vision=True))
        fake_graph.media["m-foto2"] = (image, "image/png")
        photo = _cloud_media("wamid.foto2", "image", {"id": "m-foto2", "caption": "e em verde?"})
        async with running_webhook(settings, TRANSCRIBING) as hook:
            await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [photo])))
        await run_burst(settings)
        last = fake_model.received[-1].body["messages"][-1]
        data_uri = "data:image/png;base64," + base64.b64encode(image).decode()
        assert last == {
            "role": "user",
            "content": [
                {"type": "text", "text": f"{named}\n[imagem] e em verde?"},
                {"type": "image_url", "image_url": {"url": data_uri}},
            ],
        }
        assert len(fake_graph.delivered) == 2
    finally:
        await fake_model.close()


async def _console_session(base_url: str, key: str) -> aiohttp.ClientSession:
    """A browser-like session signed in to the console (cookies kept, on 127.0.0.1)."""
    http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    async with http.get(f"{base_url}/console/entrar") as form:
        page = await form.text()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    async with http.post(
        f"{base_url}/console/entrar", data={"csrf": csrf.group(1), "key": key}
    ) as signed:
        assert signed.status == 200
    return http


async def test_the_console_plays_a_voice_note_to_its_org_only(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    other = await create_org(db, "Outra Loja")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    audio = voice_note()
    fake_graph.media["m-console"] = (audio, "audio/ogg")
    voice = _cloud_media("wamid.console", "audio", {"id": "m-console", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    conversation = await db.fetchval(
        "select conversation_id from messages where external_id = 'wamid.console'"
    )
    mine, theirs = await create_key(db, org, Role.VIEWER), await create_key(db, other, Role.VIEWER)
    async with running_api(settings, resources.store) as api:
        http = await _console_session(api.base_url, mine)
        try:
            async with http.get(f"{api.base_url}/console/conversas/{conversation}") as page:
                assert "media-src 'self'" in page.headers["Content-Security-Policy"]
                assert "<audio" in await page.text()
            async with http.get(f"{api.base_url}/console/conversas/{conversation}/dados") as d:
                thread = (await d.json())["messages"]
            [media] = [m["media"] for m in thread if m["media"]]
            assert media["kind"] == "audio"
            async with http.get(api.base_url + media["url"]) as served:
                assert served.status == 200
                assert served.headers["Content-Type"] == "audio/ogg"
                assert served.headers["X-Content-Type-Options"] == "nosniff"
                assert await served.read() == audio
        finally:
            await http.close()
        stranger = await _console_session(api.base_url, theirs)
        try:
            async with stranger.get(api.base_url + media["url"]) as refused:
                assert refused.status == 404  # another org's session sees nothing
        finally:
            await stranger.close()
        async with (
            aiohttp.ClientSession() as anonymous,
            anonymous.get(api.base_url + media["url"], allow_redirects=False) as unsigned,
        ):
            assert unsigned.status == 303  # to the sign-in page: no bytes without a session


async def test_a_download_outage_is_retried_and_the_voice_note_answered(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.media["m-blink"] = (voice_note(), "audio/ogg")
    fake_graph.media_outages = 1
    voice = _cloud_media("wamid.blink", "audio", {"id": "m-blink", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert [d[0] for d in fake_graph.media_downloads] == ["m-blink", "m-blink"]
    assert [text for _, _, text in fake_graph.delivered] == [SKILL_REPLY]
    assert (await _message(db, "wamid.blink"))["media_state"] == "transcribed"


async def test_the_waha_key_never_leaves_for_another_host(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_waha: FakeWaha,
    transcriber: FakeTranscriber,
) -> None:
    settings = _media_settings(whatsapp_settings, transcriber)
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    # Another server on loopback (not the WAHA server's port): a URL there is refused before
    # any connection (no fetch from inside our network), and never gets the key.
    elsewhere = FakeWaha(WAHA_API_KEY)
    runner, port = await start_site(elsewhere.app(), "127.0.0.1", 0)
    try:
        elsewhere.files["voz.oga"] = (voice_note(), "audio/ogg")
        event = waha_event(
            "loja",
            "false_5511912345678@c.us_3EB0LONGE",
            "",
            sender=f"{CUSTOMER}@c.us",
            has_media=True,
            data={"type": "ptt"},
            timestamp=int(time.time()),
            extra={"media": {"url": f"http://127.0.0.1:{port}/api/files/loja/voz.oga"}},
        )
        async with running_webhook(settings, TRANSCRIBING) as hook:
            assert (await hook.post_waha(event)).body["enqueued"] == 1
        await run_burst(settings)
    finally:
        await runner.cleanup()
    assert elsewhere.file_downloads == []
    assert fake_waha.delivered[-1][2] == UNREADABLE_REPLY
    row = await _message(db, "false_5511912345678@c.us_3EB0LONGE")
    assert (row["media_state"], row["kind"]) == ("refused", "audio")  # kept, not lost


async def test_without_a_transcription_server_a_voice_note_can_get_a_reply_asking_to_type(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    settings = whatsapp_settings.model_copy(update={"voice_ask_to_type": True})
    org = await _org_with_skill(db, resources)
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)  # no reply to non-text
    fake_graph.media["m-pedir"] = (voice_note(), "audio/ogg")
    voice = _cloud_media("wamid.pedir", "audio", {"id": "m-pedir", "voice": True})
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [voice])))
    await run_burst(settings)
    assert fake_graph.media_downloads == []  # nothing to do with the bytes
    assert [text for _, _, text in fake_graph.delivered] == [REPLIES[NOT_TRANSCRIBED]]
