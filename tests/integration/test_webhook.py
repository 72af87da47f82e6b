"""The webhook over real HTTP on 127.0.0.1, with real Postgres and Redis behind it."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest

from core.channel_kind import ChannelKind
from jobs.queue import open_queue
from tests.integration.support import create_org
from tests.integration.webhook_support import (
    TEST_CONFIG,
    RunningWebhook,
    connect_number,
    queued_payloads,
    running_webhook,
)
from tests.integration.whatsapp_fakes import FakeWaha
from tests.whatsapp_payloads import (
    VERIFY_TOKEN,
    WAHA_API_KEY,
    cloud_delivery,
    cloud_signature,
    cloud_status,
    cloud_text,
    cloud_value,
    encode,
    waha_event,
    waha_signature,
)
from webhook.app import CLOUD_API_PATH, build_app
from webhook.server import start_site
from worker.settings import Settings


@pytest.fixture
async def orgs(db: asyncpg.Connection) -> AsyncIterator[dict[str, object]]:
    """Two orgs: A owns Cloud API number 111 and WAHA session `loja-a`, B owns number 222."""
    a, b = await create_org(db, "Loja A"), await create_org(db, "Loja B")
    await connect_number(db, a, ChannelKind.CLOUD_API, "111")
    await connect_number(db, b, ChannelKind.CLOUD_API, "222")
    await connect_number(db, a, ChannelKind.WAHA, "loja-a")
    yield {"a": a, "b": b}


async def test_handshake_echoes_the_challenge_only_for_our_token(settings: Settings) -> None:
    async with running_webhook(settings) as hook:
        ok = await hook.get(
            CLOUD_API_PATH,
            {
                "hub.mode": "subscribe",
                "hub.verify_token": VERIFY_TOKEN,
                "hub.challenge": "1158201444",
            },
        )
        wrong = await hook.get(
            CLOUD_API_PATH,
            {"hub.mode": "subscribe", "hub.verify_token": "nope", "hub.challenge": "1"},
        )
    assert (ok.status, ok.body) == (200, "1158201444")
    assert wrong.status == 403


async def test_a_signed_batch_enqueues_every_text_for_the_org_owning_each_number(
    settings: Settings, db: asyncpg.Connection, orgs: dict[str, object]
) -> None:
    document = cloud_delivery(
        cloud_value("111", [cloud_text("wamid.a1", "oi"), cloud_text("wamid.a2", "frete?")]),
        cloud_value("222", [cloud_text("wamid.b1", "boleto", sender="5521988887777")]),
        cloud_value("111", statuses=[cloud_status("wamid.out.1")]),
        entries=2,
    )
    # Nothing in the body decides the org, whatever it claims.
    document["entry"][0]["changes"][0]["value"]["messages"][0]["organization_id"] = str(orgs["b"])
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(document)
    assert answer.status == 200
    assert answer.body == {
        "enqueued": 3,
        "duplicates": 0,
        "unknown_channel": 0,
        "invalid": 0,
        "skipped": 0,
        "unparseable": 0,
        "statuses": 0,  # a status of a message that is not one of our replies: nothing moves
    }
    queued = {p["message_id"]: p for p in await queued_payloads(settings)}
    assert set(queued) == {"wamid.a1", "wamid.a2", "wamid.b1"}
    assert queued["wamid.a1"]["organization_id"] == str(orgs["a"])
    assert queued["wamid.a2"]["organization_id"] == str(orgs["a"])
    assert queued["wamid.b1"]["organization_id"] == str(orgs["b"])
    assert queued["wamid.b1"]["contact_id"] == "5521988887777"
    assert queued["wamid.a1"]["text"] == "oi"
    routes = await db.fetch(
        "select r.external_id, c.address from inbound_routes r "
        "join channels c on c.id = r.channel_id order by r.external_id"
    )
    assert [(r["external_id"], r["address"]) for r in routes] == [
        ("wamid.a1", "111"),
        ("wamid.a2", "111"),
        ("wamid.b1", "222"),
    ]


@pytest.mark.parametrize("case", ["missing", "wrong_secret", "tampered", "bare_hex"])
async def test_a_bad_signature_is_401_and_enqueues_nothing(
    settings: Settings, orgs: dict[str, object], case: str
) -> None:
    body = encode(cloud_delivery(cloud_value("111", [cloud_text("wamid.x", "oi")])))
    signature = {
        "missing": "",
        "wrong_secret": cloud_signature(body, "not-the-secret"),
        "tampered": cloud_signature(body.replace(b"oi", b"io")),
        "bare_hex": cloud_signature(body).removeprefix("sha256="),
    }[case]
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(raw=body, signature=signature)
    assert answer.status == 401
    assert answer.body["error"] == "bad_signature"
    assert await queued_payloads(settings) == []


async def test_statuses_start_no_turn_and_non_text_is_queued_expecting_no_reply(
    settings: Settings, orgs: dict[str, object]
) -> None:
    image = {"from": "5511999990000", "id": "wamid.img", "timestamp": "1", "type": "image"}
    document = cloud_delivery(
        cloud_value("111", [image], statuses=[cloud_status("a"), cloud_status("b", "read")])
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(document)
    assert answer.status == 200
    assert answer.body["enqueued"] == 1 and answer.body["statuses"] == 0
    [queued] = await queued_payloads(settings)
    assert (queued["kind"], queued["text"], queued["expects_reply"]) == ("image", "[imagem]", False)


async def test_a_redelivered_batch_is_enqueued_once(
    settings: Settings, orgs: dict[str, object]
) -> None:
    document = cloud_delivery(cloud_value("111", [cloud_text("wamid.dup", "oi")]))
    async with running_webhook(settings) as hook:
        first = await hook.post_cloud(document)
        again = await hook.post_cloud(document)
    assert (first.body["enqueued"], first.body["duplicates"]) == (1, 0)
    assert (again.body["enqueued"], again.body["duplicates"]) == (0, 1)
    assert [p["message_id"] for p in await queued_payloads(settings)] == ["wamid.dup"]


async def test_an_unknown_number_is_acknowledged_and_not_enqueued(
    settings: Settings, orgs: dict[str, object]
) -> None:
    document = cloud_delivery(
        cloud_value("999", [cloud_text("wamid.stranger", "oi")]),
        cloud_value("111", [cloud_text("wamid.known", "oi")]),
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(document)
        waha = await hook.post_waha(waha_event("sessao-de-ninguem", "w1", "oi"))
    assert answer.status == 200 and waha.status == 200
    assert (answer.body["enqueued"], answer.body["unknown_channel"]) == (1, 1)
    assert waha.body["unknown_channel"] == 1
    assert [p["message_id"] for p in await queued_payloads(settings)] == ["wamid.known"]


async def test_an_oversize_body_is_413(settings: Settings, orgs: dict[str, object]) -> None:
    config = dataclasses.replace(TEST_CONFIG, max_body_bytes=2048)
    big = encode(cloud_delivery(cloud_value("111", [cloud_text("wamid.big", "x" * 4000)])))

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the cap holds while reading
        for start in range(0, len(big), 512):
            yield big[start : start + 512]

    async with running_webhook(settings, config) as hook:
        sized = await hook.post_cloud(raw=big)
        chunked = await hook.post(
            CLOUD_API_PATH, chunks(), {"X-Hub-Signature-256": cloud_signature(big)}
        )
        small = await hook.post_cloud(cloud_delivery(cloud_value("111", [cloud_text("ok", "oi")])))
    assert sized.status == 413 and chunked.status == 413
    assert small.status == 200
    assert [p["message_id"] for p in await queued_payloads(settings)] == ["ok"]


async def test_malformed_json_is_400(settings: Settings) -> None:
    raw = b'{"object": "whatsapp_business_account", "entry": ['
    async with running_webhook(settings) as hook:
        cloud = await hook.post_cloud(raw=raw)
        waha = await hook.post_waha(raw=raw)
        unsigned = await hook.post_cloud(raw=raw, signature="sha256=00")
    assert cloud.status == 400 and waha.status == 400
    assert unsigned.status == 401  # nothing unauthenticated is parsed
    assert await queued_payloads(settings) == []


async def test_an_endpoint_without_its_secret_refuses(settings: Settings) -> None:
    config = dataclasses.replace(TEST_CONFIG, app_secret=None, waha_hmac_key=None)
    async with running_webhook(settings, config) as hook:
        cloud = await hook.post_cloud(cloud_delivery())
        waha = await hook.post_waha(waha_event("loja-a", "w1", "oi"))
    assert cloud.status == 503 and waha.status == 503


async def test_postgres_unavailable_is_503_so_the_provider_retries(
    settings: Settings, orgs: dict[str, object]
) -> None:
    pool = await asyncpg.create_pool(settings.database_url, min_size=1, max_size=1)
    await pool.close()  # every acquire now fails, as with Postgres down
    queue = await open_queue(settings.redis_url, settings.queue_name)
    runner, port = await start_site(build_app(TEST_CONFIG, pool=pool, queue=queue), "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as http:
            hook = RunningWebhook(f"http://127.0.0.1:{port}", http)
            answer = await hook.post_cloud(
                cloud_delivery(cloud_value("111", [cloud_text("wamid.later", "oi")]))
            )
    finally:
        await runner.cleanup()
        await queue.aclose()
    assert answer.status == 503
    assert await queued_payloads(settings) == []


async def test_waha_message_is_enqueued_and_own_messages_dropped(
    settings: Settings, orgs: dict[str, object]
) -> None:
    async with running_webhook(settings) as hook:
        mine = await hook.post_waha(waha_event("loja-a", "true_5511@c.us_1", "oi", from_me=True))
        theirs = await hook.post_waha(waha_event("loja-a", "false_5511@c.us_2", "oi, tudo bem?"))
        bad = await hook.post_waha(
            waha_event("loja-a", "false_5511@c.us_3", "oi"), signature=waha_signature(b"x")
        )
    assert (mine.status, mine.body["enqueued"], mine.body["skipped"]) == (200, 0, 1)
    assert (theirs.status, theirs.body["enqueued"]) == (200, 1)
    assert bad.status == 401
    [queued] = await queued_payloads(settings)
    assert queued["organization_id"] == str(orgs["a"])
    assert queued["contact_id"] == "5511999990000"
    assert queued["message_id"] == "false_5511@c.us_2"


async def test_waha_c_us_and_lid_of_one_person_are_one_conversation(
    settings: Settings, db: asyncpg.Connection, orgs: dict[str, object]
) -> None:
    lid, phone = "98765432101234@lid", "5511999990000"
    linked = {"key": {"remoteJid": lid, "remoteJidAlt": f"{phone}@s.whatsapp.net"}}
    async with running_webhook(settings) as hook:
        # First seen by phone; then under the lid with the phone alongside; then the lid alone.
        await hook.post_waha(waha_event("loja-a", "m1", "oi", sender=f"{phone}@c.us"))
        await hook.post_waha(waha_event("loja-a", "m2", "oi de novo", sender=lid, data=linked))
        await hook.post_waha(waha_event("loja-a", "m3", "e agora?", sender=lid))
        # Someone seen only under a lid keeps it, and their phone joins it later.
        await hook.post_waha(waha_event("loja-a", "n1", "olá", sender="11112222333344@lid"))
        await hook.post_waha(
            waha_event(
                "loja-a",
                "n2",
                "olá",
                sender="11112222333344@lid",
                data={"Info": {"SenderAlt": "5521977776666@s.whatsapp.net"}},
            )
        )
        await hook.post_waha(waha_event("loja-a", "n3", "olá", sender="5521977776666@c.us"))
    contacts = {p["message_id"]: p["contact_id"] for p in await queued_payloads(settings)}
    assert contacts == {
        "m1": phone,
        "m2": phone,
        "m3": phone,
        "n1": "11112222333344@lid",
        "n2": "11112222333344@lid",
        "n3": "11112222333344@lid",
    }
    aliases = await db.fetch("select alias, contact_id from contact_aliases order by alias")
    assert {(r["alias"], r["contact_id"]) for r in aliases} == {
        (phone, phone),
        (lid, phone),
        ("11112222333344@lid", "11112222333344@lid"),
        ("5521977776666", "11112222333344@lid"),
    }


async def test_a_new_linked_id_is_looked_up_so_the_customer_keeps_their_conversation(
    settings: Settings, orgs: dict[str, object], fake_waha: FakeWaha
) -> None:
    config = dataclasses.replace(
        TEST_CONFIG, waha_base_url=fake_waha.base_url, waha_api_key=WAHA_API_KEY
    )
    lid, hidden, stranger = "98765432101234@lid", "11122233344455@lid", "55544433322211@lid"
    fake_waha.phones_by_lid[lid] = "5511999990000@c.us"
    async with running_webhook(settings, config) as hook:
        await hook.post_waha(waha_event("loja-a", "w1", "oi", sender="5511999990000@c.us"))
        await hook.post_waha(waha_event("loja-a", "w2", "sou eu de novo", sender=lid))
        await hook.post_waha(waha_event("loja-a", "w3", "e agora?", sender=lid))
        await hook.post_waha(waha_event("loja-a", "w4", "oi", sender=hidden))  # WAHA: pn null
        fake_waha.lid_status = 500
        failed = await hook.post_waha(waha_event("loja-a", "w5", "oi", sender=stranger))
    assert failed.status == 200 and failed.body["enqueued"] == 1  # a failed lookup holds nothing
    contacts = {p["message_id"]: p["contact_id"] for p in await queued_payloads(settings)}
    assert contacts == {
        "w1": "5511999990000",
        "w2": "5511999990000",
        "w3": "5511999990000",
        "w4": hidden,
        "w5": stranger,
    }
    # Asked once per linked id never seen before, on the session the message came in on.
    assert fake_waha.lid_lookups == [("loja-a", lid), ("loja-a", hidden), ("loja-a", stranger)]
