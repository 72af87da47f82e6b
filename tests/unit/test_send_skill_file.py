"""send_skill_file: only a matched or viewed skill's listed file, typed by its bytes, within
Meta's size per kind, at most three a turn; every refusal a tool error the model can read, and
nothing recorded for a refused call."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from core.errors import StorageError
from delivery.outbound_file import FileMessage, safe_filename
from skills.models import FileKind, LoadedSkill, ManifestEntry
from tests.media_fixtures import pdf, png, voice_note
from tests.tool_support import reference_context
from tests.unit.test_reference_tool import MemoryStore, key
from turn.model import ToolCall
from turn.tools.base import ToolContext, ToolResult
from turn.tools.registry import default_registry

ORG = uuid.UUID("11111111-1111-4111-8111-111111111111")
PDF, PNG, OGG = pdf(), png(), voice_note()
MB = 1024 * 1024


def catalogo(sizes: dict[str, int] | None = None) -> LoadedSkill:
    sizes = sizes or {}
    files = {
        "assets/catalogo.pdf": len(PDF),
        "assets/foto.png": len(PNG),
        "assets/audio.ogg": len(OGG),
        "assets/foto.webp": 30,
        "references/precos.md": 12,
        "assets/fotos.zip": 26,
        "assets/contrato.docx": 26,
    }
    return LoadedSkill(
        name="catalogo",
        body="Mande o catálogo.",
        manifest=tuple(
            ManifestEntry(path, sizes.get(path, size), "0" * 64, FileKind.ASSET)
            for path, size in files.items()
        ),
        version_id=uuid.uuid4(),
    )


def store_for(skill: LoadedSkill) -> MemoryStore:
    webp = b"RIFF\x16\x00\x00\x00WEBPVP8 " + b"\x00" * 14
    data = {
        "assets/catalogo.pdf": PDF,
        "assets/foto.png": PNG,
        "assets/audio.ogg": OGG,
        "assets/foto.webp": webp,
        "references/precos.md": b"Camisa: R$ 9",
        "assets/fotos.zip": b"PK\x03\x04" + b"\x00" * 22,
        "assets/contrato.docx": b"PK\x03\x04" + b"\x00" * 22,
    }
    return MemoryStore({key(ORG, skill, path): value for path, value in data.items()})


def context(
    store: MemoryStore, matched: list[LoadedSkill], installed: list[LoadedSkill] | None = None
) -> ToolContext:
    base = reference_context(store, ORG, matched)
    return dataclasses.replace(base, installed=installed if installed is not None else matched)


async def send(ctx: ToolContext, skill: Any, path: Any, caption: Any = None) -> ToolResult:
    arguments: dict[str, Any] = {"skill": skill, "path": path}
    if caption is not None:
        arguments["caption"] = caption
    return await default_registry().execute(ctx, ToolCall("c1", "send_skill_file", arguments))


async def test_a_matched_skills_pdf_is_recorded_as_a_document_with_its_key_and_caption() -> None:
    skill = catalogo()
    ctx = context(store_for(skill), [skill])
    result = await send(ctx, "catalogo", "assets/catalogo.pdf", "Nosso catálogo")
    assert result.error_code is None
    assert "catalogo.pdf" in result.content and "document" in result.content
    [chosen] = ctx.ledger.files
    assert chosen.kind is FileMessage.DOCUMENT
    assert (chosen.mime, chosen.size, chosen.filename) == (
        "application/pdf",
        len(PDF),
        "catalogo.pdf",
    )
    assert chosen.key == key(ORG, skill, "assets/catalogo.pdf")
    assert chosen.caption == "Nosso catálogo"


async def test_the_kind_follows_the_bytes_png_image_ogg_audio_and_office_documents() -> None:
    skill = catalogo()
    ctx = context(store_for(skill), [skill])
    for path in ("assets/foto.png", "assets/audio.ogg", "assets/contrato.docx"):
        assert (await send(ctx, "catalogo", path, "legenda")).error_code is None
    image, audio, docx = ctx.ledger.files
    assert (image.kind, image.mime, image.caption) == (FileMessage.IMAGE, "image/png", "legenda")
    assert (audio.kind, audio.caption) == (FileMessage.AUDIO, None)  # Meta: no audio caption
    assert docx.kind is FileMessage.DOCUMENT and docx.mime.endswith("wordprocessingml.document")
    other = catalogo()
    ctx = context(store_for(other), [other])
    assert (await send(ctx, "catalogo", "references/precos.md")).error_code is None
    [text] = ctx.ledger.files
    assert (text.kind, text.mime) == (FileMessage.DOCUMENT, "text/markdown")


async def test_a_skill_neither_matched_nor_viewed_is_refused_and_a_viewed_one_allowed() -> None:
    skill = catalogo()
    ctx = context(store_for(skill), [], installed=[skill])
    refused = await send(ctx, "catalogo", "assets/catalogo.pdf")
    assert refused.error_code == "skill_not_active"
    assert "nenhuma" in refused.content
    ctx.ledger.viewed.append("catalogo")  # skill_view or read_skill_reference this turn
    assert (await send(ctx, "catalogo", "assets/catalogo.pdf")).error_code is None
    assert len(ctx.ledger.files) == 1


async def test_a_path_not_exactly_in_the_manifest_is_refused_without_a_read() -> None:
    skill = catalogo()
    store = store_for(skill)
    ctx = context(store, [skill])
    for path in ("assets/../assets/catalogo.pdf", "/assets/catalogo.pdf", "ASSETS/catalogo.pdf"):
        result = await send(ctx, "catalogo", path)
        assert result.error_code == "skill_file_not_found", path
        assert "assets/catalogo.pdf" in result.content  # the listed paths teach the model
    assert store.gets == [] and ctx.ledger.files == []


async def test_a_file_over_metas_limit_for_its_kind_is_refused() -> None:
    skill = catalogo({"assets/foto.png": 5 * MB + 1, "assets/catalogo.pdf": 100 * MB + 1})
    ctx = context(store_for(skill), [skill])
    image = await send(ctx, "catalogo", "assets/foto.png")
    assert image.error_code == "file_too_large" and "5 MB" in image.content
    document = await send(ctx, "catalogo", "assets/catalogo.pdf")
    assert document.error_code == "file_too_large" and "100 MB" in document.content
    assert ctx.ledger.files == []


async def test_a_fourth_file_and_a_repeated_one_are_refused() -> None:
    skill = catalogo()
    ctx = context(store_for(skill), [skill])
    assert (await send(ctx, "catalogo", "assets/catalogo.pdf")).error_code is None
    repeated = await send(ctx, "catalogo", "assets/catalogo.pdf")
    assert repeated.error_code == "file_already_chosen"
    for path in ("assets/foto.png", "assets/audio.ogg"):
        assert (await send(ctx, "catalogo", path)).error_code is None
    fourth = await send(ctx, "catalogo", "assets/foto.webp")
    assert fourth.error_code == "too_many_files" and "3" in fourth.content
    assert len(ctx.ledger.files) == 3


async def test_a_caption_over_metas_1024_chars_is_refused_by_its_schema() -> None:
    skill = catalogo()
    ctx = context(store_for(skill), [skill])
    result = await send(ctx, "catalogo", "assets/catalogo.pdf", "x" * 1025)
    assert result.error_code == "tool_arguments_invalid"
    assert "caption" in result.content
    assert ctx.ledger.files == []


async def test_a_missing_object_or_a_storage_outage_is_a_readable_refusal() -> None:
    skill = catalogo()
    ctx = context(MemoryStore({}), [skill])
    assert (await send(ctx, "catalogo", "assets/catalogo.pdf")).error_code == "skill_file_not_found"
    down = context(MemoryStore({}, fail=StorageError("down")), [skill])
    assert (await send(down, "catalogo", "assets/catalogo.pdf")).error_code == "storage_unavailable"
    assert ctx.ledger.files == [] and down.ledger.files == []


async def test_the_sniff_reads_only_the_first_bytes() -> None:
    skill = catalogo()
    store = store_for(skill)
    ctx = context(store, [skill])
    await send(ctx, "catalogo", "assets/catalogo.pdf")
    assert [max_bytes for _, max_bytes in store.gets] == [64]  # an Ogg names its codec by 28


async def test_a_webp_or_a_zip_is_refused_before_the_customer_is_promised_it() -> None:
    skill = catalogo()
    ctx = context(store_for(skill), [skill])
    for path, mime in (("assets/foto.webp", "image/webp"), ("assets/fotos.zip", "zip")):
        result = await send(ctx, "catalogo", path)
        assert result.error_code == "unsupported_file_type", path
        assert mime in result.content and "PDF" in result.content
    assert ctx.ledger.files == []


async def test_an_ogg_that_is_not_opus_is_refused_as_whatsapp_would() -> None:
    vorbis = b"OggS\x00\x02" + b"\x00" * 20 + b"\x01\x1e\x01vorbis" + b"\x00" * 40
    skill = catalogo({"assets/audio.ogg": len(vorbis)})
    store = store_for(skill)
    store.objects[key(ORG, skill, "assets/audio.ogg")] = vorbis
    ctx = context(store, [skill])
    result = await send(ctx, "catalogo", "assets/audio.ogg")
    assert result.error_code == "unsupported_audio" and "Opus" in result.content
    assert ctx.ledger.files == []


def test_the_file_name_is_the_paths_last_segment_made_safe_and_bounded() -> None:
    assert safe_filename("assets/Tabela de preços (2026).pdf", "application/pdf") == (
        "Tabela_de_precos_2026_.pdf"  # accents folded, as a customer's file name is
    )
    assert safe_filename("assets/foto", "image/png") == "foto.png"
    assert safe_filename("assets/...", "application/pdf") == "arquivo.pdf"
    long = safe_filename("assets/" + "a" * 300 + ".pdf", "application/pdf")
    assert len(long) == 80 and long.endswith(".pdf")
    assert safe_filename("assets/" + "b" * 300, "image/png").endswith(".png")
