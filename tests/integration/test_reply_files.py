"""A skill's files sent to the customer (send_skill_file), end to end on real Postgres, Redis
and S3 with real burst workers: a signed webhook delivery -> the model (scripted) chooses a
file -> the reply's text goes out, then each file: uploaded to the (fake) Graph API and sent by
its media id, or sent with its bytes through WAHA; a receipt per part; at most once across a
crash, in order."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import asyncpg

from api.keys import Role
from channels.credential_queries import upsert_channel_secrets_as_owner
from channels.models import Channel
from core.channel_kind import ChannelKind
from delivery.contract import Recipient, Sender
from delivery.errors import SendParked
from delivery.outbox_queries import OutboxRow, fail_abandoned_claims
from skills.models import FileKind, SkillMatcher
from skills.publisher import SkillDraft, SkillFile, publish_skill_version
from tests.integration.api_support import create_key, running_api
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.media_fixtures import pdf, png
from tests.whatsapp_payloads import (
    cloud_delivery,
    cloud_status,
    cloud_text,
    cloud_value,
    waha_event,
)
from turn.agent_queries import insert_agent
from turn.model import ModelRequest, ModelResponse, ToolCall
from worker.channel_senders import build_sender
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242977"
SESSION = "loja-arquivos"
CUSTOMER = "5511912340077"
REPLY = "Segue o nosso catálogo."
PDF = pdf("Catalogo 2026")
PNG = png(4, 3)
PRICES = "produto;preço\ncamisa;R$ 59,90\n".encode()
OWN_TOKEN = "EAAG-token-da-loja-arquivos-1"
NEW_TOKEN = "EAAG-token-da-loja-arquivos-2"
CHANNELS: dict[uuid.UUID, Channel] = {}  # each test's org -> its number
CATALOG = {"skill": "catalogo", "path": "assets/catalogo.pdf", "caption": "Catálogo 2026"}
PHOTO = {"skill": "catalogo", "path": "assets/vitrine.png", "caption": "Nossa vitrine"}


@dataclass
class FileModel:
    """Asked about the catálogo: calls send_skill_file once per `calls`, then answers REPLY
    (keeping what each tool call answered); anything else: "Certo."."""

    calls: Sequence[dict[str, Any]]
    tool_answers: list[str] = field(default_factory=list)
    skill_contexts: list[str] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.skill_contexts.append(request.skill_context)
        tools = [m for m in request.messages if m.role == "tool"]
        if tools:
            self.tool_answers = [str(m.content) for m in tools]
            return ModelResponse(text=REPLY, provider="local", model="local")
        if "catálogo" not in str(request.messages[-1].content):
            return ModelResponse(text="Certo.", provider="local", model="local")
        calls = tuple(ToolCall(f"f{i}", "send_skill_file", a) for i, a in enumerate(self.calls))
        return ModelResponse(text=None, tool_calls=calls, provider="local", model="local")


async def _org(db: asyncpg.Connection, resources: Resources, kind: ChannelKind) -> uuid.UUID:
    org = await create_org(db, "Loja Arquivos")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    channel = await connect_number(
        db, org, kind, NUMBER if kind is ChannelKind.CLOUD_API else SESSION
    )
    CHANNELS[org] = channel
    big = PNG + b"\x00" * (5 * 1024 * 1024)  # a PNG over Meta's 5 MB for images
    draft = SkillDraft(
        name="catalogo",
        description="Catálogo da loja",
        body="Quando pedirem o catálogo, envie assets/catalogo.pdf.",
        matcher=SkillMatcher(any_keywords=["catálogo"]),
        files=(
            SkillFile("assets/catalogo.pdf", PDF, FileKind.ASSET),
            SkillFile("assets/vitrine.png", PNG, FileKind.ASSET),
            SkillFile("assets/poster.png", big, FileKind.ASSET),
            SkillFile("assets/precos.csv", PRICES, FileKind.ASSET),
        ),
    )
    await publish_skill_version(
        db, resources.store, organization_id=org, draft=draft, created_by="user"
    )
    return org


async def _cloud_says(settings: Settings, text: str, *, age_s: int = 0) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender=CUSTOMER, timestamp=int(time.time()) - age_s
    )
    async with running_webhook(settings) as hook:
        posted = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert posted.status == 200


async def _waha_says(settings: Settings, text: str) -> None:
    event = waha_event(
        SESSION,
        f"false_{CUSTOMER}@c.us_{uuid.uuid4().hex[:16].upper()}",
        text,
        sender=f"{CUSTOMER}@c.us",
        timestamp=int(time.time()),
    )
    async with running_webhook(settings) as hook:
        posted = await hook.post_waha(event)
    assert posted.status == 200


PARTS = """
select o.part, o.status, o.last_error, o.file ->> 'filename' as filename,
       array(select r.provider_message_id from outbox_receipts r where r.outbox_id = o.id
             order by r.provider_message_id) as receipts
from outbox o join messages m on m.id = o.message_id
where m.body = $1
order by m.created_at, o.part
"""


async def _parts(db: asyncpg.Connection, body: str = REPLY) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in await db.fetch(PARTS, body)]


async def test_a_pdf_goes_after_the_text_by_upload_and_media_id_each_part_receipted(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _org(db, resources, ChannelKind.CLOUD_API)
    model = FileModel([CATALOG])
    await _cloud_says(whatsapp_settings, "Oi, pode mandar o catálogo?")
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    assert "catalogo.pdf" in model.tool_answers[0]
    [told] = [
        line.split(": ", 1)[1]
        for line in model.skill_contexts[0].splitlines()
        if line.startswith("Arquivos para o cliente (use send_skill_file)")
    ]
    assert set(told.split(", ")) == {
        "assets/catalogo.pdf",
        "assets/vitrine.png",
        "assets/poster.png",
        "assets/precos.csv",
    }

    [(kind, text), (upload, media_id), (message, document)] = fake_graph.sends
    assert (kind, text, upload, message) == ("text", REPLY, "upload", "document")
    assert fake_graph.uploads[media_id] == (NUMBER, "application/pdf", "catalogo.pdf", PDF)
    assert document == {"id": media_id, "caption": "Catálogo 2026", "filename": "catalogo.pdf"}
    assert await _parts(db) == [
        (0, "sent", None, None, ["wamid.out.1"]),
        (1, "sent", None, "catalogo.pdf", ["wamid.media.3"]),
    ]
    # The API's thread: the reply once, with its text's status and its file parts.
    key = await create_key(db, org, Role.VIEWER)
    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", key)).body["items"]
        messages = (await api.get(f"/v1/conversations/{item['id']}/messages", key)).body
    [reply] = [m for m in messages["items"] if m["direction"] == "outbound"]
    assert (reply["body"], reply["delivery"]["status"]) == (REPLY, "sent")
    assert reply["files"] == [{"filename": "catalogo.pdf", "kind": "document", "status": "sent"}]
    # Each file has its own receipt: Meta reading the PDF moves the file, not the text.
    async with running_webhook(whatsapp_settings) as hook:
        read = cloud_value(NUMBER, statuses=[cloud_status("wamid.media.3", "read")])
        assert (await hook.post_cloud(cloud_delivery(read))).body["statuses"] == 1
    async with running_api(whatsapp_settings, resources.store) as api:
        messages = (await api.get(f"/v1/conversations/{item['id']}/messages", key)).body
    [reply] = [m for m in messages["items"] if m["direction"] == "outbound"]
    assert reply["delivery"]["status"] == "sent"
    assert reply["files"] == [{"filename": "catalogo.pdf", "kind": "document", "status": "read"}]


async def test_an_image_is_sent_as_an_image_and_a_file_over_metas_limit_never_uploaded(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    await _org(db, resources, ChannelKind.CLOUD_API)
    poster = {"skill": "catalogo", "path": "assets/poster.png"}
    model = FileModel([PHOTO, poster])
    await _cloud_says(whatsapp_settings, "Tem foto do catálogo?")
    await run_burst(whatsapp_settings, model=model)
    assert "vitrine.png (image" in model.tool_answers[0]
    assert model.tool_answers[1].startswith("[erro file_too_large]")
    [(_, text), (_, media_id), (kind, image)] = fake_graph.sends
    assert (text, kind) == (REPLY, "image")
    assert image == {"id": media_id, "caption": "Nossa vitrine"}  # an image has no filename
    assert fake_graph.uploads[media_id][1:] == ("image/png", "vitrine.png", PNG)
    assert [p[:2] for p in await _parts(db)] == [(0, "sent"), (1, "sent")]


async def test_a_csv_price_list_is_uploaded_as_the_plain_text_meta_takes(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    # Meta's documents are a fixed list of types (text/csv is not one): its upload refused
    # the price list, and the customer, told it was coming, got nothing.
    await _org(db, resources, ChannelKind.CLOUD_API)
    model = FileModel([{"skill": "catalogo", "path": "assets/precos.csv"}])
    await _cloud_says(whatsapp_settings, "Qual o preço do catálogo?")
    await run_burst(whatsapp_settings, model=model)
    [(_, text), (_, media_id), (kind, document)] = fake_graph.sends
    assert (text, kind, document["filename"]) == (REPLY, "document", "precos.csv")
    assert fake_graph.uploads[media_id][1:] == ("text/plain", "precos.csv", PRICES)
    assert [p[:2] for p in await _parts(db)] == [(0, "sent"), (1, "sent")]


async def test_waha_sends_the_pdf_with_send_file_and_the_image_with_send_image(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_waha: FakeWaha,
) -> None:
    await _org(db, resources, ChannelKind.WAHA)
    model = FileModel([CATALOG, PHOTO])
    await _waha_says(whatsapp_settings, "Me manda o catálogo")
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    chat = f"{CUSTOMER}@c.us"
    assert fake_waha.sends == [
        ("sendText", REPLY),
        ("sendFile", (chat, "application/pdf", "catalogo.pdf", PDF, "Catálogo 2026")),
        ("sendImage", (chat, "image/png", "vitrine.png", PNG, "Nossa vitrine")),
    ]
    parts = await _parts(db)
    assert [p[:2] for p in parts] == [(0, "sent"), (1, "sent"), (2, "sent")]
    assert [p[4] for p in parts] == [
        [f"true_{chat}_1"],
        [f"true_{chat}_file2"],
        [f"true_{chat}_file3"],
    ]


async def test_an_upload_outage_is_retried_then_the_file_sent(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    await _org(db, resources, ChannelKind.CLOUD_API)
    model = FileModel([CATALOG])
    fake_graph.upload_outages = 1  # a 503 first: retried, nothing had reached the customer
    await _cloud_says(whatsapp_settings, "O catálogo, por favor")
    await run_burst(whatsapp_settings, model=model)
    assert [kind for kind, _ in fake_graph.sends] == ["text", "upload", "document"]
    assert [p[:2] for p in await _parts(db)] == [(0, "sent"), (1, "sent")]


async def test_outside_the_window_the_text_and_each_file_part_fail_none_uploaded(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    # The customer's last message is 25 h old: the text fails for good, and so does each file
    # part, judged on its own (never uploaded).
    await _org(db, resources, ChannelKind.CLOUD_API)
    model = FileModel([CATALOG])
    await _cloud_says(whatsapp_settings, "E o catálogo novo?", age_s=25 * 3600)
    await run_burst(whatsapp_settings, model=model)
    assert fake_graph.sends == []
    parts = await _parts(db)
    assert [(p[0], p[1], p[2].split(":")[0]) for p in parts] == [
        (0, "failed", "outside_service_window"),
        (1, "failed", "outside_service_window"),
    ]


async def test_file_parts_wait_with_the_text_for_a_new_token_then_go_in_order(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _org(db, resources, ChannelKind.CLOUD_API)
    channel = CHANNELS[org]
    await upsert_channel_secrets_as_owner(db, channel, access_token=OWN_TOKEN)
    fake_graph.own(OWN_TOKEN, NUMBER)
    fake_graph.revoke(OWN_TOKEN)  # Meta refuses it (190): the number's replies wait
    model = FileModel([CATALOG])
    await _cloud_says(whatsapp_settings, "O catálogo, por favor")
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    assert fake_graph.sends == [] and fake_graph.uploads == {}
    assert await db.fetchval("select status from channels") == "needs_token"
    waiting = await db.fetch("select part, status, delivery_claimed_at from outbox order by part")
    assert [tuple(r) for r in waiting] == [(0, "pending", None), (1, "pending", None)]

    fake_graph.own(NEW_TOKEN, NUMBER)
    await upsert_channel_secrets_as_owner(db, channel, access_token=NEW_TOKEN)
    await db.execute("update channels set status = 'active'")
    await _cloud_says(whatsapp_settings, "Oi?")  # the next holder delivers what waits first
    await run_burst(whatsapp_settings, model=model)
    assert [kind for kind, _ in fake_graph.sends] == ["text", "upload", "document", "text"]
    assert fake_graph.sends[0] == ("text", REPLY) and fake_graph.sends[-1] == ("text", "Certo.")
    assert fake_graph.sent_with == [NEW_TOKEN, NEW_TOKEN, NEW_TOKEN]
    assert [p[:2] for p in await _parts(db)] == [(0, "sent"), (1, "sent")]


@dataclass
class TokenReplacedWhenParked:
    """The real sender; the moment a part is parked (Meta refused the number's token), the
    operator's new token lands, before the reply's next part is tried."""

    inner: Sender
    replace_token: Callable[[], Awaitable[None]]

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        try:
            return await self.inner.send(row, recipient)
        except SendParked:
            await self.replace_token()
            raise


async def _refused_number(
    db: asyncpg.Connection, resources: Resources, fake_graph: FakeGraphApi
) -> Callable[[], Awaitable[None]]:
    """An org whose number's own token Meta refuses (190); how the operator's new one lands."""
    org = await _org(db, resources, ChannelKind.CLOUD_API)
    channel = CHANNELS[org]
    await upsert_channel_secrets_as_owner(db, channel, access_token=OWN_TOKEN)
    fake_graph.own(OWN_TOKEN, NUMBER)
    fake_graph.revoke(OWN_TOKEN)

    async def replace_token() -> None:
        fake_graph.own(NEW_TOKEN, NUMBER)
        await upsert_channel_secrets_as_owner(db, channel, access_token=NEW_TOKEN)
        await db.execute("update channels set status = 'active'")

    return replace_token


async def test_a_file_never_overtakes_its_parked_text_when_the_token_is_replaced_between(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    replace_token = await _refused_number(db, resources, fake_graph)
    model = FileModel([CATALOG])
    async with aiohttp.ClientSession() as http:
        real = build_sender(whatsapp_settings, http, resources.pool, resources.store)
        sender = TokenReplacedWhenParked(real, replace_token)
        await _cloud_says(whatsapp_settings, "O catálogo, por favor")
        await run_burst(whatsapp_settings, model=model, sender=sender)
        assert fake_graph.sends == []  # the catalog waits behind its text
        assert [p[:2] for p in await _parts(db)] == [(0, "pending"), (1, "pending")]
        await _cloud_says(whatsapp_settings, "Oi?")
        await run_burst(whatsapp_settings, model=model, sender=sender)
    assert [kind for kind, _ in fake_graph.sends] == ["text", "upload", "document", "text"]
    assert fake_graph.sends[0] == ("text", REPLY)
    assert [p[:2] for p in await _parts(db)] == [(0, "sent"), (1, "sent")]


@dataclass
class CustomerWritesMeanwhile:
    """The FileModel; while it thinks about the first message, the customer writes again (the
    holder reads it in the same job, right after the first reply)."""

    inner: FileModel
    meanwhile: Callable[[], Awaitable[None]]
    wrote: bool = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if not self.wrote:
            self.wrote = True
            await self.meanwhile()
        return await self.inner.complete(request)


async def test_the_next_reply_in_the_same_job_never_overtakes_a_parked_reply_and_its_file(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    replace_token = await _refused_number(db, resources, fake_graph)
    model = CustomerWritesMeanwhile(
        FileModel([CATALOG]), lambda: _cloud_says(whatsapp_settings, "Oi?")
    )
    async with aiohttp.ClientSession() as http:
        real = build_sender(whatsapp_settings, http, resources.pool, resources.store)
        sender = TokenReplacedWhenParked(real, replace_token)
        await _cloud_says(whatsapp_settings, "O catálogo, por favor")
        worker = await run_burst(whatsapp_settings, model=model, sender=sender)
    assert worker.jobs_failed == 0
    # "Certo." (the second message's reply) waited for the parked text and its file.
    assert [kind for kind, _ in fake_graph.sends] == ["text", "upload", "document", "text"]
    assert fake_graph.sends[0] == ("text", REPLY) and fake_graph.sends[-1] == ("text", "Certo.")
    assert [p[:2] for p in await _parts(db)] == [(0, "sent"), (1, "sent")]
    assert [p[:2] for p in await _parts(db, "Certo.")] == [(0, "sent")]


class WorkerDies(Exception):
    """What a killed worker looks like from the database: the send began, nothing marked."""


@dataclass
class DyingSender:
    """The real sender, except that the send of part `dies_at` (0: the text) never returns."""

    inner: Sender
    dies_at: int
    seen: list[int] = field(default_factory=list)

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        part = 0 if row.file is None else int(row.file.filename == "vitrine.png") + 1
        self.seen.append(part)
        if part == self.dies_at and self.seen.count(part) == 1:
            raise WorkerDies("killed mid-send")
        return await self.inner.send(row, recipient)


async def test_a_file_part_claimed_when_the_worker_died_is_failed_by_the_sweep_never_resent(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    await _org(db, resources, ChannelKind.CLOUD_API)
    model = FileModel([CATALOG, PHOTO])
    async with aiohttp.ClientSession() as http:
        real = build_sender(whatsapp_settings, http, resources.pool, resources.store)
        sender = DyingSender(real, dies_at=1)
        await _cloud_says(whatsapp_settings, "Quero o catálogo")
        await run_burst(whatsapp_settings, model=model, sender=sender)
        assert [p[:2] for p in await _parts(db)] == [
            (0, "sent"),
            (1, "pending"),  # claimed, its send never answered: never sent again
            (2, "sent"),  # never claimed: the job's retry (the next holder) sent it
        ]
        await _cloud_says(whatsapp_settings, "Obrigado")
        await run_burst(whatsapp_settings, model=model, sender=sender)
        assert await fail_abandoned_claims(db, 0.0) != []
    assert [kind for kind, _ in fake_graph.sends] == ["text", "upload", "image", "text"]
    assert fake_graph.sends[-1] == ("text", "Certo.")
    parts = await _parts(db)
    assert [p[:2] for p in parts] == [(0, "sent"), (1, "failed"), (2, "sent")]
    assert parts[1][2].startswith("delivery_unknown")


async def test_files_left_undelivered_by_a_crash_go_out_in_order_before_the_next_reply(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    await _org(db, resources, ChannelKind.CLOUD_API)
    model = FileModel([CATALOG, PHOTO])
    async with aiohttp.ClientSession() as http:
        real = build_sender(whatsapp_settings, http, resources.pool, resources.store)
        sender = DyingSender(real, dies_at=0)  # dies sending the text: no file claimed yet
        await _cloud_says(whatsapp_settings, "Quero o catálogo")
        await run_burst(whatsapp_settings, model=model, sender=sender)  # and the job's retry
        assert [kind for kind, _ in fake_graph.sends] == ["upload", "document", "upload", "image"]
        await _cloud_says(whatsapp_settings, "Oi?")
        await run_burst(whatsapp_settings, model=model, sender=sender)
    kinds = [kind for kind, _ in fake_graph.sends]
    assert kinds == ["upload", "document", "upload", "image", "text"]  # the text was claimed
    assert fake_graph.uploads[fake_graph.sends[0][1]][3] == PDF
    assert fake_graph.sends[-1] == ("text", "Certo.")
    assert [p[:2] for p in await _parts(db)] == [(0, "pending"), (1, "sent"), (2, "sent")]
