"""Webhook parsing and signatures (pure): Cloud API batches and WAHA events."""

from __future__ import annotations

from datetime import UTC, datetime

from core.channel_kind import ChannelKind
from inbox.contacts import ContactIds
from tests.whatsapp_payloads import (
    APP_SECRET,
    WAHA_HMAC_KEY,
    cloud_delivery,
    cloud_message,
    cloud_signature,
    cloud_status,
    cloud_text,
    cloud_value,
    encode,
    waha_ack,
    waha_event,
    waha_signature,
)
from webhook.cloud_api import parse_cloud_api
from webhook.non_text import expects_reply
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
    assert delivery.skipped == []
    assert [(s.address, s.provider_message_id, s.status) for s in delivery.statuses] == [
        ("111", "wamid.out", "delivered")
    ]


def test_cloud_api_non_text_messages_are_described() -> None:
    messages = [
        cloud_message("m1", "image", {"id": "media1", "caption": "esse modelo tem no azul?"}),
        cloud_message("m2", "audio", {"id": "media2", "voice": True}),
        cloud_message("m3", "document", {"id": "media3", "filename": "boleto.pdf"}),
        cloud_message(
            "m4",
            "location",
            {"latitude": -23.56, "longitude": -46.65, "name": "Casa", "address": "Av. Paulista"},
        ),
        cloud_message(
            "m5",
            "contacts",
            [{"name": {"formatted_name": "Ana Souza"}, "phones": [{"phone": "+55 11 98888-0000"}]}],
        ),
        cloud_message("m6", "reaction", {"message_id": "wamid.out", "emoji": "👍"}),
        cloud_message("m7", "sticker", {"id": "media7"}),
        cloud_message("m8", "poll"),  # a type this code has never heard of
    ]
    document = cloud_delivery(cloud_value("111", messages, statuses=[cloud_status("a")]))
    delivery = parse_cloud_api(document, NOW)
    assert [(t.message_id, t.message_kind, t.text) for t in delivery.texts] == [
        ("m1", "image", "[imagem] esse modelo tem no azul?"),
        ("m2", "audio", "[áudio]"),
        ("m3", "document", "[documento] boleto.pdf"),
        ("m4", "location", "[localização] -23.56, -46.65 Casa Av. Paulista"),
        ("m5", "contacts", "[contato] Ana Souza +55 11 98888-0000"),
        ("m7", "sticker", "[figurinha]"),
        ("m8", "unsupported", "[mensagem não suportada] poll"),
    ]
    assert delivery.skipped == [] and len(delivery.statuses) == 1
    # A reaction is never a message: kept on the message it reacts to.
    [reaction] = delivery.reactions
    assert (reaction.message_id, reaction.target_id, reaction.emoji) == ("m6", "wamid.out", "👍")


def test_cloud_api_statuses_keep_the_providers_reason_for_a_failure() -> None:
    failed = {
        "id": "wamid.out.2",
        "status": "failed",
        "timestamp": "1764000001",
        "recipient_id": "5511999990000",
        "errors": [
            {
                "code": 131026,
                "title": "Message undeliverable",
                "error_data": {"details": "Receiver is incapable of receiving this message"},
            }
        ],
    }
    statuses = [cloud_status("wamid.out.1", "read"), failed, cloud_status("x", "deleted")]
    delivery = parse_cloud_api(cloud_delivery(cloud_value("111", statuses=statuses)), NOW)
    assert [(s.provider_message_id, s.status, s.error) for s in delivery.statuses] == [
        ("wamid.out.1", "read", None),
        (
            "wamid.out.2",
            "failed",
            "131026 Message undeliverable: Receiver is incapable of receiving this message",
        ),
    ]
    assert [(s.reason, s.detail) for s in delivery.skipped] == [("status", "deleted")]


def test_cloud_api_tapped_buttons_and_list_rows_reach_the_model_as_the_choice() -> None:
    button = {"type": "button_reply", "button_reply": {"id": "b1", "title": "Quero agendar"}}
    row = {
        "type": "list_reply",
        "list_reply": {"id": "r1", "title": "Sábado 10h", "description": "com a Ana"},
    }
    messages = [
        cloud_message("m1", "interactive", button),
        cloud_message("m2", "interactive", row),
        cloud_message("m3", "button", {"payload": "SIM", "text": "Sim, confirmo"}),
    ]
    delivery = parse_cloud_api(cloud_delivery(cloud_value("111", messages)), NOW)
    assert [(t.message_kind, t.text) for t in delivery.texts] == [
        ("interactive", "[escolheu: «Quero agendar» (id: b1)]"),
        ("interactive", "[escolheu: «Sábado 10h» (id: r1)]"),
        ("button", "Sim, confirmo"),
    ]


def test_a_tapped_title_cannot_close_the_marker_early() -> None:
    hostile = {"type": "button_reply", "button_reply": {"id": "x) ] [y", "title": "a» [b] «c"}}
    delivery = parse_cloud_api(
        cloud_delivery(cloud_value("111", [cloud_message("m1", "interactive", hostile)])), NOW
    )
    [text] = [t.text for t in delivery.texts]
    assert text == "[escolheu: «a› (b) ‹c» (id: x› › ‹y)]"


def test_cloud_api_skips_what_the_customer_did_not_say() -> None:
    messages = [
        cloud_message("m1", "reaction", {"message_id": "wamid.out", "emoji": ""}),  # taken back
        cloud_message("m2", "system", {"body": "Cliente mudou de número", "type": "user_changed"}),
        cloud_message("m3", "text", {"body": "   "}),
    ]
    delivery = parse_cloud_api(cloud_delivery(cloud_value("111", messages)), NOW)
    assert delivery.texts == []
    assert [s.reason for s in delivery.skipped] == ["not_a_message", "empty_text"]
    # Taken back: a reaction with no emoji, which removes the customer's one from the message.
    assert [(r.target_id, r.emoji) for r in delivery.reactions] == [("wamid.out", "")]


def test_a_non_text_description_is_clipped_to_fit_the_queue() -> None:
    huge = cloud_message("m1", "image", {"id": "x", "caption": "a" * 100_000})
    [text] = parse_cloud_api(cloud_delivery(cloud_value("111", [huge])), NOW).texts
    assert len(text.text) < 5_000 and text.text.startswith("[imagem] aaa")


def test_only_typed_messages_are_always_answered() -> None:
    assert expects_reply("text", False) and expects_reply("button", False)
    assert not expects_reply("audio", False)
    assert expects_reply("audio", True) and expects_reply("location", True)
    assert not expects_reply("reaction", True)


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


def test_waha_skips_own_group_empty_and_other_events() -> None:
    cases = {
        "from_me": waha_event("loja", "m1", "oi", from_me=True),
        "not_a_person": waha_event("loja", "m2", "oi", sender="120363025246125888@g.us"),
        "empty_text": waha_event("loja", "m3", ""),
        "event": waha_event("loja", "m4", "oi", event="message.any"),
    }
    for reason, event in cases.items():
        delivery = parse_waha(event, NOW)
        assert delivery.texts == [], reason
        assert [s.reason for s in delivery.skipped] == [reason]


def test_waha_non_text_messages_are_described() -> None:
    photo = {"media": {"url": "http://waha/f.jpg", "mimetype": "image/jpeg", "filename": None}}
    pdf = {"media": {"mimetype": "application/pdf", "filename": "orcamento.pdf"}}
    vcard = "BEGIN:VCARD\nVERSION:3.0\nFN:Ana Souza\nTEL:+5511988880000\nEND:VCARD"
    events = [
        waha_event("loja", "m1", "tem no azul?", has_media=True, extra=photo),
        waha_event("loja", "m2", "", has_media=True, extra=pdf),
        waha_event("loja", "m3", "", has_media=True, data={"type": "ptt"}),
        waha_event(
            "loja",
            "m4",
            "",
            extra={"location": {"latitude": -23.56, "longitude": -46.65, "description": "Casa"}},
        ),
        waha_event("loja", "m5", "", extra={"vCards": [vcard]}),
        waha_event("loja", "m6", "", data={"type": "poll_creation"}),
    ]
    got = [(t.message_kind, t.text) for e in events for t in parse_waha(e, NOW).texts]
    assert got == [
        ("image", "[imagem] tem no azul?"),
        ("document", "[documento] orcamento.pdf"),
        ("audio", "[áudio]"),
        ("location", "[localização] -23.56, -46.65 Casa"),
        ("contacts", "[contato] Ana Souza"),
        ("unsupported", "[mensagem não suportada] poll_creation"),
    ]


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


def _own(chat: str | None, **overrides: object) -> dict[str, object]:
    event = waha_event("loja", "true_x_1", "Aqui é a dona", from_me=True, event="message.any")
    payload = event["payload"]
    payload["from"] = chat
    payload.update(overrides)
    return event


def test_waha_own_messages_on_message_any_are_echoes_to_the_chat() -> None:
    noweb = _own("5511912345678@c.us", to=None)  # NOWEB/GOWS: the chat in `from`
    webjs = _own("551140000000@c.us", to="5511912345678@c.us")  # WEBJS: from me, to the chat
    linked = _own(
        "98765432101234@lid",
        to=None,
        _data={"key": {"remoteJid": "98765432101234@lid", "remoteJidAlt": "5511912345678@c.us"}},
    )
    for event in (noweb, webjs, linked):
        delivery = parse_waha(event, NOW)
        assert delivery.texts == [] and delivery.skipped == []
        [echo] = delivery.echoes
        assert echo.sender.phone == "5511912345678"
        assert (echo.kind, echo.address, echo.message_id) == (ChannelKind.WAHA, "loja", "true_x_1")
        assert echo.text == "Aqui é a dona"
    assert parse_waha(linked, NOW).echoes[0].sender.lid == "98765432101234@lid"


def test_waha_own_messages_to_groups_broadcasts_channels_or_oneself_are_skipped() -> None:
    for chat in (
        "120363025246125888@g.us",
        "status@broadcast",
        "120363025246125999@newsletter",
        "551140000000@c.us",  # the owner's own chat
    ):
        delivery = parse_waha(_own(chat, to=None), NOW)
        assert delivery.echoes == [] and delivery.texts == [], chat
        assert [s.reason for s in delivery.skipped] == ["not_a_person"], chat


def test_cloud_api_smb_message_echoes_are_echoes_to_their_recipient() -> None:
    value = cloud_value("106540352242922")
    value["message_echoes"] = [
        {
            "from": "551140000000",
            "to": "+5511912345678",
            "id": "wamid.app.1",
            "timestamp": "1764000000",
            "type": "text",
            "text": {"body": "Pode deixar"},
        }
    ]
    document = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "1", "changes": [{"field": "smb_message_echoes", "value": value}]}],
    }
    delivery = parse_cloud_api(document, NOW)
    [echo] = delivery.echoes
    assert delivery.texts == [] and delivery.skipped == []
    assert (echo.kind, echo.address, echo.message_id, echo.text) == (
        ChannelKind.CLOUD_API,
        "106540352242922",
        "wamid.app.1",
        "Pode deixar",
    )
    assert echo.sender == ContactIds(phone="5511912345678", lid=None)


def test_waha_acks_are_delivery_statuses_of_our_messages() -> None:
    sent = "true_5511999990000@c.us_3EB0A1"
    statuses = [parse_waha(waha_ack("loja", sent, ack), NOW).statuses for ack in (-1, 1, 2, 3, 4)]
    assert [(s.kind, s.address, s.provider_message_id) for [s] in statuses] == [
        (ChannelKind.WAHA, "loja", sent)
    ] * 5
    assert [s.status for [s] in statuses] == ["failed", "sent", "delivered", "read", "read"]
    assert statuses[0][0].error == "WAHA ack -1 ERROR"
    by_name = waha_ack("loja", sent, 2)
    del by_name["payload"]["ack"]
    assert [s.status for s in parse_waha(by_name, NOW).statuses] == ["delivered"]


def test_waha_acks_that_record_nothing_are_skipped() -> None:
    sent = "true_5511999990000@c.us_3EB0A1"
    unknown = waha_ack("loja", sent, 3)
    unknown["payload"] |= {"ack": 9, "ackName": "SEEN"}
    boolean = waha_ack("loja", sent, 3)
    boolean["payload"] |= {"ack": True, "ackName": None}
    cases = [
        waha_ack("loja", sent, 0),  # PENDING: the send's answer recorded it already
        waha_ack("loja", "false_5511999990000@c.us_X", 3, from_me=False),
        unknown,
        boolean,
        {**waha_ack("loja", sent, 3), "payload": ["not", "an", "object"]},
        {**waha_ack("loja", sent, 3), "session": None},
    ]
    for event in cases:
        delivery = parse_waha(event, NOW)
        assert delivery.statuses == [] and len(delivery.skipped) == 1
