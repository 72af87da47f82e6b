"""Webhook parsing and signatures (pure): Cloud API batches and WAHA events."""

from __future__ import annotations

from datetime import UTC, datetime

from channels.contacts import ContactIds
from channels.models import ChannelKind
from tests.whatsapp_payloads import (
    APP_SECRET,
    WAHA_HMAC_KEY,
    cloud_delivery,
    cloud_signature,
    cloud_status,
    cloud_text,
    cloud_value,
    encode,
    waha_event,
    waha_signature,
)
from webhook.cloud_api import parse_cloud_api
from webhook.signatures import cloud_api_signature_ok, waha_signature_ok
from webhook.waha import parse_waha

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_cloud_api_batch_yields_every_text_of_every_entry_and_change() -> None:
    document = cloud_delivery(
        cloud_value("111", [cloud_text("wamid.1", "oi"), cloud_text("wamid.2", "tudo bem?")]),
        cloud_value("222", [cloud_text("wamid.3", "frete?", sender="5521988887777")]),
        cloud_value("111", statuses=[cloud_status("wamid.out")]),
        entries=2,
    )
    delivery = parse_cloud_api(document, NOW)
    got = [(t.address, t.message_id, t.text, t.sender.phone) for t in delivery.texts]
    assert got == [
        ("111", "wamid.1", "oi", "5511999990000"),
        ("111", "wamid.2", "tudo bem?", "5511999990000"),
        ("222", "wamid.3", "frete?", "5521988887777"),
    ]
    assert all(t.kind is ChannelKind.CLOUD_API for t in delivery.texts)
    assert delivery.texts[0].sent_at == datetime.fromtimestamp(1_764_000_000, UTC)
    assert [s.reason for s in delivery.skipped] == ["status"]


def test_cloud_api_statuses_and_non_text_types_never_become_texts() -> None:
    image = {"from": "5511999990000", "id": "wamid.img", "timestamp": "1", "type": "image"}
    reaction = {"from": "5511999990000", "id": "wamid.r", "timestamp": "1", "type": "reaction"}
    document = cloud_delivery(
        cloud_value("111", [image, reaction], statuses=[cloud_status("a"), cloud_status("b")])
    )
    delivery = parse_cloud_api(document, NOW)
    assert delivery.texts == []
    assert sorted(s.reason for s in delivery.skipped) == [
        "non_text",
        "non_text",
        "status",
        "status",
    ]


def test_cloud_api_other_objects_and_fields_are_skipped() -> None:
    assert parse_cloud_api({"object": "page", "entry": []}, NOW).texts == []
    other_field = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "1", "changes": [{"field": "account_update", "value": {}}]}],
    }
    delivery = parse_cloud_api(other_field, NOW)
    assert delivery.texts == [] and delivery.skipped[0].reason == "field"
    assert parse_cloud_api(["not", "a", "dict"], NOW).texts == []


def test_cloud_api_bad_timestamp_falls_back_to_arrival() -> None:
    message = cloud_text("wamid.1", "oi")
    message["timestamp"] = "ontem"
    [text] = parse_cloud_api(cloud_delivery(cloud_value("111", [message])), NOW).texts
    assert text.sent_at == NOW


def test_waha_message_event() -> None:
    delivery = parse_waha(waha_event("loja", "false_5511999990000@c.us_AAA", "oi"), NOW)
    [text] = delivery.texts
    assert (text.kind, text.address, text.message_id, text.text) == (
        ChannelKind.WAHA,
        "loja",
        "false_5511999990000@c.us_AAA",
        "oi",
    )
    assert text.sender == ContactIds(phone="5511999990000", lid=None)


def test_waha_lid_sender_carries_its_phone_from_the_engine_data() -> None:
    noweb = waha_event(
        "loja",
        "m1",
        "oi",
        sender="98765432101234@lid",
        data={
            "key": {
                "remoteJid": "98765432101234@lid",
                "remoteJidAlt": "5511999990000@s.whatsapp.net",
            }
        },
    )
    gows = waha_event(
        "loja",
        "m2",
        "oi",
        sender="98765432101234@lid",
        data={
            "Info": {"Sender": "98765432101234@lid", "SenderAlt": "5511999990000@s.whatsapp.net"}
        },
    )
    for event in (noweb, gows):
        [text] = parse_waha(event, NOW).texts
        assert text.sender == ContactIds(phone="5511999990000", lid="98765432101234@lid")


def test_waha_skips_own_group_media_and_other_events() -> None:
    cases = {
        "from_me": waha_event("loja", "m1", "oi", from_me=True),
        "not_a_person": waha_event("loja", "m2", "oi", sender="120363025246125888@g.us"),
        "non_text": waha_event("loja", "m3", "", has_media=True),
        "event": waha_event("loja", "m4", "oi", event="message.any"),
    }
    for reason, event in cases.items():
        delivery = parse_waha(event, NOW)
        assert delivery.texts == [], reason
        assert [s.reason for s in delivery.skipped] == [reason]


def test_cloud_api_signature() -> None:
    body = encode(cloud_delivery())
    assert cloud_api_signature_ok(APP_SECRET, body, cloud_signature(body))
    assert cloud_api_signature_ok(
        APP_SECRET, body, cloud_signature(body).upper().replace("SHA256", "sha256")
    )
    assert not cloud_api_signature_ok(APP_SECRET, body + b" ", cloud_signature(body))
    assert not cloud_api_signature_ok(APP_SECRET, body, cloud_signature(body, "outro"))
    assert not cloud_api_signature_ok(APP_SECRET, body, cloud_signature(body)[len("sha256=") :])
    assert not cloud_api_signature_ok(APP_SECRET, body, None)


def test_waha_signature() -> None:
    body = encode(waha_event("loja", "m1", "oi"))
    assert waha_signature_ok(WAHA_HMAC_KEY, body, waha_signature(body), "sha512")
    assert waha_signature_ok(WAHA_HMAC_KEY, body, waha_signature(body), None)
    assert not waha_signature_ok(WAHA_HMAC_KEY, body, waha_signature(body), "sha256")
    assert not waha_signature_ok(WAHA_HMAC_KEY, body, waha_signature(body, "outra"), "sha512")
    assert not waha_signature_ok(WAHA_HMAC_KEY, body, "", "sha512")
