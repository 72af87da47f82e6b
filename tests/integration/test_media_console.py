"""A customer's media as people see it: the console's thread in a real headless Chromium (a
voice note's player, an image's thumbnail, a document's safe name and size, all from the
console's own origin behind the session), the API's download route, and a hostile file name
followed into the object key, the model's prompt and the page.

Everything real: a signed webhook delivery, a burst worker fetching from the fake Graph
API, the fake transcription server and the fake OpenAI-compatible model on 127.0.0.1,
Postgres, Redis and S3."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest_asyncio
from playwright.async_api import expect
from pydantic import SecretStr

from api.console.render import SECURITY_HEADERS
from api.keys import Role
from core.channel_kind import ChannelKind
from inbox.file_names import safe_file_name
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import launched_chromium, sign_in
from tests.integration.support import create_org, run_burst
from tests.integration.transcription_fake import FakeTranscriber
from tests.integration.webhook_support import TEST_CONFIG, connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.media_fixtures import pdf, png, voice_note
from tests.model_fakes import FakeOpenAI
from tests.whatsapp_payloads import cloud_delivery, cloud_value
from turn.agent_queries import create_agent
from webhook.server import start_site
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"
TRANSCRIPT = "Oi, quero saber se vocês entregam em Campinas."
SHOT = Path("/tmp/rest_thread.png")
# A name built to hurt: 10 kB, a path out of the prefix, a right-to-left override that
# would show "exe.PDF" as "FDP.exe" reversed, control characters and markup.
HOSTILE_NAME = (
    "A" * 10_000
    + "/../../etc/passwd\\..\\"
    + "<img src=x onerror=alert(1)>\u202eFDP.exe\x00\x07\r\n.pdf"
)
SAFE_NAME = "img_src_x_onerror_alert_1_FDP.exe_.pdf"
TRANSCRIBING = dataclasses.replace(TEST_CONFIG, transcribes_voice=True)


@pytest_asyncio.fixture(loop_scope="session")
async def transcriber() -> AsyncIterator[FakeTranscriber]:
    fake = FakeTranscriber(text=TRANSCRIPT)
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}/v1"
    yield fake
    await runner.cleanup()


def _media(message_id: str, kind: str, media: dict[str, Any], at: int) -> dict[str, Any]:
    return {"from": CUSTOMER, "id": message_id, "timestamp": str(at), "type": kind, kind: media}


async def _thread_of_three(
    settings: Settings, db: asyncpg.Connection, fake_graph: FakeGraphApi
) -> tuple[uuid.UUID, uuid.UUID]:
    """A voice note, a photo with a caption of markup, and a document with a hostile name,
    answered in one burst; (org, conversation)."""
    org = await create_org(db, "Loja Mídia Console")
    await create_agent(
        db,
        org,
        name="Bia",
        system_prompt="Você é a Bia.",
        model_provider="openai",
        model_name="gpt-test",
    )
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER, reply_to_non_text=True)
    fake_graph.media["m-voz"] = (voice_note(), "audio/ogg")
    fake_graph.media["m-foto"] = (png(160, 96), "image/png")
    fake_graph.media["m-doc"] = (pdf(), "application/pdf")
    now = int(time.time())
    messages = [
        _media("wamid.voz", "audio", {"id": "m-voz", "voice": True}, now - 2),
        _media("wamid.foto", "image", {"id": "m-foto", "caption": "<b>essa</b> cor?"}, now - 1),
        _media("wamid.doc", "document", {"id": "m-doc", "filename": HOSTILE_NAME}, now),
    ]
    async with running_webhook(settings, TRANSCRIBING) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, messages)))
    await run_burst(settings)
    conversation = await db.fetchval(
        "select conversation_id from messages where external_id = 'wamid.doc'"
    )
    return org, conversation


def _settings(settings: Settings, transcriber: FakeTranscriber, model: FakeOpenAI) -> Settings:
    return settings.model_copy(
        update={
            "transcribe_base_url": transcriber.base_url,
            "transcribe_model": "whisper-large-v3",
            "openai_base_url": f"{model.base_url}/v1",
            "openai_api_key": SecretStr("sk-openai-de-teste"),
        }
    )


async def test_the_thread_shows_a_player_a_thumbnail_and_a_documents_safe_name(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    transcriber: FakeTranscriber,
) -> None:
    model = FakeOpenAI("sk-openai-de-teste")
    await model.start()
    try:
        settings = _settings(whatsapp_settings, transcriber, model)
        org, conversation = await _thread_of_three(settings, db, fake_graph)
        prompt = json.dumps(model.received[-1].body, ensure_ascii=False)
    finally:
        await model.close()
    document = await db.fetchrow(
        "select id, body, media_key from messages where external_id = 'wamid.doc'"
    )
    assert safe_file_name(HOSTILE_NAME) == SAFE_NAME
    # The key: under the message's own prefix, the safe name as its last segment only.
    assert document["media_key"] == f"media/{org}/{conversation}/{document['id']}/{SAFE_NAME}"
    # The prompt: the transcript, and the document by its safe name and size.
    assert TRANSCRIPT in prompt
    assert f"[documento] {SAFE_NAME} (1 KB)" in prompt
    for hostile in ("<img", "\u202e", "../", "\\u0000", "\x07", "AAAAAAAAAA"):
        assert hostile not in prompt, hostile
    # The agent's reply sent a skill file after its text (send_skill_file): its part row.
    await db.execute(
        """insert into outbox (organization_id, conversation_id, message_id, body, part, file,
                               status)
           select organization_id, conversation_id, id, '', 1, $2::jsonb, 'sent'
           from messages where conversation_id = $1 and direction = 'outbound'""",
        conversation,
        {"filename": "tabela-precos.pdf", "kind": "document"},
    )
    key = await create_key(db, org, Role.VIEWER)
    async with running_api(settings, resources.store) as api:
        async with launched_chromium() as browser:
            page = await (await browser.new_context()).new_page()
            await sign_in(page, api.base_url, key)
            answer = await page.goto(f"{api.base_url}/console/conversas/{conversation}")
            assert answer is not None
            # The console's CSP: exactly its own, with img-src and media-src 'self'.
            assert (
                answer.headers["content-security-policy"]
                == (SECURITY_HEADERS["Content-Security-Policy"])
            )
            csp = answer.headers["content-security-policy"]
            assert "img-src 'self';" in csp and "media-src 'self';" in csp
            assert "*" not in csp and "data:" not in csp and "blob:" not in csp
            audio = page.locator("audio.midia")
            image = page.locator("img.midia")
            await expect(audio).to_have_count(1)
            await expect(image).to_have_count(1)
            await expect(page.locator(".balao", has_text=TRANSCRIPT)).to_have_text(
                f"[áudio] {TRANSCRIPT}"
            )
            await expect(page.locator(".balao", has_text="cor?")).to_have_text(
                "[imagem] <b>essa</b> cor?"
            )
            await expect(page.locator("a.midia")).to_have_count(1)
            sent_file = "arquivo enviado: tabela-precos.pdf (documento) · enviada"
            await expect(page.locator(".arquivos-enviados li")).to_have_text([sent_file])
            await expect(page.locator(".balao", has_text=f"{SAFE_NAME} (1 KB)")).to_have_count(1)
            await expect(page.locator(".balao", has_text="<b>essa</b> cor?")).to_have_count(1)
            # The thumbnail loaded from our origin through the session (CSP and cookie).
            await page.wait_for_function(
                "() => { const i = document.querySelector('img.midia');"
                " return i && i.complete && i.naturalWidth === 160; }"
            )
            served = await page.evaluate(
                "async (url) => { const r = await fetch(url);"
                " return [r.status, r.headers.get('content-type'), (await r.blob()).size]; }",
                await audio.get_attribute("src"),
            )
            assert served == [200, "audio/ogg", len(voice_note())]
            html = await page.content()
            assert "<img src=x" not in html and "\u202e" not in html
            assert "&lt;b&gt;essa&lt;/b&gt;" in html  # the caption is text, not markup
            # The page's script re-renders the thread from its JSON poll: the same again.
            await expect(page.locator("[data-status]")).to_contain_text(
                "Atualizado às", timeout=15_000
            )
            await expect(page.locator("audio.midia")).to_have_count(1)
            await expect(page.locator("a.midia")).to_have_count(1)
            await expect(page.locator(".arquivos-enviados li")).to_have_text([sent_file])
            await expect(page.locator(".balao", has_text=TRANSCRIPT)).to_have_text(
                f"[áudio] {TRANSCRIPT}"
            )
            await page.wait_for_function(
                "() => { const i = document.querySelector('img.midia');"
                " return i && i.complete && i.naturalWidth === 160; }"
            )
            await page.set_viewport_size({"width": 900, "height": 700})
            await page.locator("ol, ul").filter(has=audio).first.scroll_into_view_if_needed()
            await page.screenshot(path=str(SHOT), full_page=True)
        await _the_api_serves_the_document(api.base_url, key, conversation, document["id"])
        other = await create_key(db, await create_org(db, "Outra"), Role.ADMIN)
        path = f"/v1/conversations/{conversation}/messages/{document['id']}/media"
        async with (
            aiohttp.ClientSession() as http,
            http.get(api.base_url + path, headers={"Authorization": f"Bearer {other}"}) as no,
        ):
            assert no.status == 404  # another org's key: as if there were none
            assert (await no.json())["error"] == "media_not_found"


async def _the_api_serves_the_document(
    base_url: str, key: str, conversation: uuid.UUID, message: uuid.UUID
) -> None:
    path = f"/v1/conversations/{conversation}/messages/{message}/media"
    async with (
        aiohttp.ClientSession() as http,
        http.get(base_url + path, headers={"Authorization": f"Bearer {key}"}) as served,
    ):
        assert served.status == 200
        assert served.headers["Content-Type"] == "application/pdf"
        assert served.headers["Content-Disposition"] == f'attachment; filename="{SAFE_NAME}"'
        assert served.headers["X-Content-Type-Options"] == "nosniff"
        assert await served.read() == pdf()
