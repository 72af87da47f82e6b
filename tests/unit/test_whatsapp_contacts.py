"""inbox.contacts: WhatsApp id normalization and the one-contact-per-person rule."""

from __future__ import annotations

import pytest

from inbox.contacts import ContactIds, contact_ids, normalize_whatsapp_id, waha_chat_id


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("5511999990000", "5511999990000"),  # Cloud API wa_id
        ("+5511999990000", "5511999990000"),
        ("5511999990000@c.us", "5511999990000"),
        ("5511999990000@s.whatsapp.net", "5511999990000"),
        ("5511999990000:12@s.whatsapp.net", "5511999990000"),  # device 12
        ("123456789012345@lid", "123456789012345@lid"),
        ("123456789012345:3@lid", "123456789012345@lid"),
        ("120363025246125888@g.us", None),  # group
        ("status@broadcast", None),
        ("120363111111111111@newsletter", None),
        ("abc@c.us", None),
        ("", None),
        (None, None),
        (5511999990000, None),
    ],
)
def test_normalize(raw: object, expected: str | None) -> None:
    assert normalize_whatsapp_id(raw) == expected


def test_contact_ids_keep_the_first_phone_and_the_first_lid() -> None:
    ids = contact_ids(["98765432101234@lid", None, "5511999990000@s.whatsapp.net", "5511888@c.us"])
    assert ids == ContactIds(phone="5511999990000", lid="98765432101234@lid")
    assert ids.aliases == ("5511999990000", "98765432101234@lid")
    assert ids.preferred == "5511999990000"


def test_a_lid_alone_is_its_own_contact_until_linked() -> None:
    ids = contact_ids(["98765432101234@lid"])
    assert ids == ContactIds(phone=None, lid="98765432101234@lid")
    assert ids.preferred == "98765432101234@lid"


def test_no_person_no_ids() -> None:
    assert contact_ids(["120363025246125888@g.us", None]) is None


def test_waha_chat_ids() -> None:
    assert waha_chat_id("5511999990000") == "5511999990000@c.us"
    assert waha_chat_id("98765432101234@lid") == "98765432101234@lid"
