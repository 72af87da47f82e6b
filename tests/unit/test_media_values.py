"""The pure parts of reading media: sniffing, a voice note's length, safe file names, and
what the webhook parsers keep of a media message."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from conversation.media.reader import might_hold_media
from core.sniff import main_type, ogg_duration_s, sniff_type
from inbox.file_names import MAX_CHARS, safe_file_name
from tests.media_fixtures import pdf, png, voice_note
from tests.whatsapp_payloads import cloud_delivery, cloud_message, cloud_value, waha_event
from turn.model import ImagePart, ModelMessage, ModelRequest
from turn.providers import anthropic, openai_compat
from webhook.cloud_api import parse_cloud_api
from webhook.waha import parse_waha

NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (voice_note(), "audio/ogg"),
        (png(), "image/png"),
        (pdf(), "application/pdf"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"\x00\x00\x00\x20ftypM4A \x00\x00", "audio/mp4"),
        (b"\xff\xf1\x50\x80", "audio/aac"),
        (b"ID3\x04\x00", "audio/mpeg"),
        (b"\xff\xfb\x90\x64", "audio/mpeg"),
        (b"#!AMR\n\x3c", "audio/amr"),
        (b"MZ\x90\x00", None),
        (b"", None),
        (b"<html>", None),
    ],
)
def test_the_bytes_say_what_they_are(data: bytes, kind: str | None) -> None:
    assert sniff_type(data) == kind


def test_a_voice_notes_length_is_read_from_its_ogg_container() -> None:
    seconds = ogg_duration_s(voice_note())
    assert seconds is not None and 2.0 < seconds < 6.0  # espeak-ng's one sentence
    assert ogg_duration_s(png()) is None
    assert ogg_duration_s(b"OggS") is None


def test_declared_types_lose_their_parameters() -> None:
    assert main_type("audio/ogg; codecs=opus") == "audio/ogg"
    assert main_type(None) is None


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("orçamento final.pdf", "orcamento_final.pdf"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        (".bashrc", "bashrc"),
        ("<script>alert(1)</script>.png", "script_.png"),
        ("recibo\u202efdp.exe", "recibofdp.exe"),  # the right-to-left override is dropped
        ("nota\x00\x07\r\n\x1b[31m.pdf", "nota_31m.pdf"),  # control characters too
        ("a b\tc.pdf", "a_b_c.pdf"),
        ("日本語", None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_customer_file_names_are_made_safe(name: object, safe: str | None) -> None:
    assert safe_file_name(name) == safe


def test_a_long_file_name_keeps_its_extension() -> None:
    safe = safe_file_name("a" * 5000 + ".pdf")
    assert safe is not None and len(safe) == MAX_CHARS and safe.endswith(".pdf")


def test_a_cloud_api_voice_note_keeps_its_media_id_type_sha256_and_caption() -> None:
    audio = cloud_message(
        "wamid.1",
        "audio",
        {"id": "1013", "mime_type": "audio/ogg; codecs=opus", "sha256": "q1w2", "voice": True},
    )
    image = cloud_message("wamid.2", "image", {"id": "2024", "caption": "olha", "sha256": "x"})
    sticker = cloud_message("wamid.3", "sticker", {"id": "3035", "mime_type": "image/webp"})
    delivery = parse_cloud_api(cloud_delivery(cloud_value("1065", [audio, image, sticker])), NOW)
    voice, photo, figurinha = delivery.texts
    assert voice.media is not None and voice.media.as_json() == {
        "id": "1013",
        "type": "audio/ogg; codecs=opus",
        "sha256": "q1w2",
        "voice": True,
    }
    assert photo.media is not None and photo.media.caption == "olha"
    assert photo.text == "[imagem] olha"
    assert figurinha.media is None  # stickers are described, never fetched


def test_a_waha_voice_note_keeps_its_file_url_and_a_bad_url_is_dropped() -> None:
    media = {"url": "http://waha:3000/api/files/loja/x.oga", "mimetype": "audio/ogg"}
    event = waha_event(
        "loja", "m1", "", has_media=True, data={"type": "ptt"}, extra={"media": media}
    )
    [voice] = parse_waha(event, NOW).texts
    assert voice.media is not None and voice.media.url == media["url"] and voice.media.voice
    hostile = {"url": "file:///etc/passwd", "mimetype": "audio/ogg"}
    event = waha_event(
        "loja", "m2", "", has_media=True, data={"type": "ptt"}, extra={"media": hostile}
    )
    [dropped] = parse_waha(event, NOW).texts
    assert dropped.media is None and dropped.text == "[áudio]"


def test_only_a_media_description_is_looked_up() -> None:
    assert might_hold_media("[áudio]")
    assert might_hold_media("[documento] a.pdf")
    assert not might_hold_media("qual o prazo?")
    assert not might_hold_media("[localização] -23.5, -46.6")


def _image_request() -> ModelRequest:
    image = ImagePart("image/png", png())
    return ModelRequest(
        prefix="prefixo estável",
        skill_context="",
        messages=(ModelMessage("user", "[imagem] tem em azul?", images=(image,)),),
        tools=(),
    )


def test_an_image_is_an_anthropic_image_block_after_the_text() -> None:
    body = anthropic.build_request(_image_request(), model="claude-test", max_tokens=100)
    [turn] = body["messages"]
    assert turn["content"] == [
        {"type": "text", "text": "[imagem] tem em azul?"},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png()).decode(),
            },
        },
    ]
    assert body["system"][0]["text"] == "prefixo estável"  # the prefix is untouched


def test_an_image_is_an_openai_data_uri_after_the_text() -> None:
    body = openai_compat.build_request(_image_request(), model="gpt-test", max_tokens=100)
    user = body["messages"][-1]
    assert user["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(png()).decode()},
    }
    text_only = ModelRequest("p", "", (ModelMessage("user", "oi"),), ())
    plain = openai_compat.build_request(text_only, model="gpt-test", max_tokens=100)
    assert plain["messages"][-1] == {"role": "user", "content": "oi"}  # unchanged bytes
