"""The values of a reply's file part: its stored JSON and the Cloud API message it becomes."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
import structlog

from channels.cloud_api import media_message
from channels.dispatch import file_bytes
from core.object_store import StoredObject
from delivery.contract import LoggingSender, Recipient
from delivery.errors import SendError
from delivery.outbound_file import FileMessage, OutboundFile, declared_type, message_kind
from delivery.outbox_queries import OutboxRow
from turn.model import InjectedSkill
from turn.prompt import render_skill_context


def _file(kind: FileMessage, caption: str | None = "Legenda") -> OutboundFile:
    return OutboundFile(
        "catalogo", "assets/a", "org/catalogo/v/assets/a", "x/y", kind, 9, "a.x", caption
    )


def test_a_file_part_survives_its_round_trip_through_outbox_file() -> None:
    file = _file(FileMessage.IMAGE)
    assert OutboundFile.from_json(file.as_json()) == file
    assert OutboundFile.from_json(_file(FileMessage.AUDIO, None).as_json()).caption is None


def test_a_document_keeps_its_name_an_image_its_caption_and_audio_neither() -> None:
    document = media_message("5511", _file(FileMessage.DOCUMENT), "m1")
    assert document == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "5511",
        "type": "document",
        "document": {"id": "m1", "caption": "Legenda", "filename": "a.x"},
    }
    assert media_message("5511", _file(FileMessage.IMAGE), "m2")["image"] == {
        "id": "m2",
        "caption": "Legenda",
    }
    assert media_message("5511", _file(FileMessage.AUDIO), "m3")["audio"] == {"id": "m3"}


def test_the_kind_is_the_sniffed_types_and_unknown_bytes_are_named_by_extension() -> None:
    assert message_kind("image/jpeg") is FileMessage.IMAGE
    assert message_kind("image/webp") is FileMessage.DOCUMENT  # a sticker on Meta
    assert message_kind("audio/amr-wb") is FileMessage.DOCUMENT  # not one of Meta's audio types
    assert message_kind("audio/mpeg") is FileMessage.AUDIO
    assert declared_type(None, "assets/tabela.csv") == "text/csv"
    assert declared_type(None, "assets/blob") == "application/octet-stream"
    assert declared_type("application/pdf", "assets/finge.png") == "application/pdf"


def test_a_matched_skill_lists_its_sendable_files_only_when_it_has_some() -> None:
    with_files = InjectedSkill("catalogo", "Envie o catálogo.", (), ("assets/catalogo.pdf",))
    rendered = render_skill_context([with_files])
    assert (
        "Arquivos para o cliente (use send_skill_file): assets/catalogo.pdf\n</skill>" in rendered
    )
    assert "send_skill_file" not in render_skill_context([InjectedSkill("frete", "Grátis.", ())])


async def test_without_a_channel_a_file_part_is_logged_never_its_bytes() -> None:
    ids = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    row = OutboxRow.pending(*ids, "Legenda", file=_file(FileMessage.DOCUMENT))
    with structlog.testing.capture_logs() as logs:
        assert await LoggingSender().send(row, Recipient("whatsapp", "5511")) is None
    [entry] = [e for e in logs if e["event"] == "outbox.delivered"]
    assert (entry["file_kind"], entry["file_bytes"]) == ("document", 9)


class OneObject:
    """A FileSource holding one key; remembers what was asked for."""

    def __init__(self, key: str, data: bytes) -> None:
        self.key, self.data = key, data
        self.asked: list[str] = []

    async def get(self, key: str, *, max_bytes: int, offset: int = 0) -> StoredObject:
        self.asked.append(key)
        return StoredObject(self.data[:max_bytes], truncated=len(self.data) > max_bytes)


def _stored_pdf(org: uuid.UUID) -> OutboundFile:
    """A 3-byte PDF part of the org's catalogo skill, version v1."""
    path = "assets/a.pdf"
    key = f"{org}/catalogo/v1/{path}"
    return OutboundFile("catalogo", path, key, "application/pdf", FileMessage.DOCUMENT, 3, "a.pdf")


async def test_a_file_parts_bytes_are_read_only_under_its_own_orgs_skill() -> None:
    org, other = uuid.uuid4(), uuid.uuid4()
    mine = _stored_pdf(org)
    store = OneObject(mine.key, b"PDF")
    assert await file_bytes(store, org, mine) == b"PDF"
    for key in (
        f"{other}/catalogo/v1/assets/a.pdf",
        f"{org}/outra/v1/assets/a.pdf",
        f"{org}/catalogo/v1/assets/b.pdf",
        f"media/{org}/c/m/a.pdf",
    ):
        with pytest.raises(SendError) as refused:
            await file_bytes(store, org, dataclasses.replace(mine, key=key))
        assert (refused.value.code, refused.value.retryable) == ("send_rejected", False)
    assert store.asked == [mine.key]


async def test_an_object_bigger_than_its_manifest_says_is_refused_not_sent() -> None:
    org = uuid.uuid4()
    file = _stored_pdf(org)
    with pytest.raises(SendError) as refused:
        await file_bytes(OneObject(file.key, b"PDF and more"), org, file)
    assert "not the size its manifest says" in refused.value.message


async def test_a_file_part_over_metas_limit_for_its_kind_is_refused_before_its_read() -> None:
    org = uuid.uuid4()
    image = dataclasses.replace(
        _stored_pdf(org), mime="image/png", kind=FileMessage.IMAGE, size=5 * 1024 * 1024 + 1
    )
    store = OneObject(image.key, b"")
    with pytest.raises(SendError) as refused:
        await file_bytes(store, org, image)
    assert (refused.value.code, refused.value.retryable) == ("send_rejected", False)
    assert store.asked == []  # nothing read, nothing uploaded
