"""`send_skill_file`: one of a skill's own files sent to the customer after the reply's text.

Only a skill matched in this turn or viewed in it (skill_view, read_skill_reference), only a
path exactly as its version's manifest lists it, at most MAX_FILES_PER_TURN a turn, within
Meta's size for the kind its bytes are. Nothing is sent here: the file is recorded in the
turn's ledger, committed with the reply (an outbox row after the text) and sent after it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.errors import StorageError
from core.object_store import ObjectNotFound, object_key
from core.sniff import sniff_type
from delivery.outbound_file import (
    CODEC_HEAD_BYTES,
    MAX_BYTES,
    MAX_CAPTION_CHARS,
    MAX_FILES_PER_TURN,
    FileMessage,
    OutboundFile,
    declared_type,
    message_kind,
    safe_filename,
    unsendable_audio,
    unsendable_document,
)
from skills.models import LoadedSkill
from turn.tools.base import Tool, ToolContext, ToolResult

SNIFF_BYTES = CODEC_HEAD_BYTES  # core.sniff looks at 16; an Ogg's codec is further in
MAX_LISTED = 20  # paths named back in a refusal


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill: str = Field(
        description="Nome da skill (ativada ou vista nesta mensagem).", max_length=64
    )
    path: str = Field(description="Caminho do arquivo, ex.: assets/catalogo.pdf", max_length=255)
    caption: str | None = Field(
        default=None,
        description="Legenda opcional (documento ou imagem).",
        max_length=MAX_CAPTION_CHARS,
    )


def _eligible(context: ToolContext) -> list[LoadedSkill]:
    """The skills matched this turn, then those viewed in it (installed ones only)."""
    skills = list(context.matched)
    names = {s.name for s in skills}
    for skill in context.installed:
        if skill.name in context.ledger.viewed and skill.name not in names:
            skills.append(skill)
            names.add(skill.name)
    return skills


async def run(context: ToolContext, args: Args) -> ToolResult:
    ledger = context.ledger
    if len(ledger.files) >= MAX_FILES_PER_TURN:
        return ToolResult.error(
            "too_many_files",
            f"Já são {MAX_FILES_PER_TURN} arquivos nesta resposta, o máximo; não envie mais.",
        )
    eligible = _eligible(context)
    skill = next((s for s in eligible if s.name == args.skill), None)
    if skill is None:
        names = ", ".join(s.name for s in eligible) or "nenhuma"
        return ToolResult.error(
            "skill_not_active",
            f"A skill {args.skill!r} não foi ativada nem vista nesta mensagem. "
            f"Skills disponíveis: {names}.",
        )
    entry = next((e for e in skill.manifest if e.path == args.path), None)
    if entry is None:
        listed = ", ".join(e.path for e in skill.manifest[:MAX_LISTED]) or "nenhum"
        return ToolResult.error(
            "skill_file_not_found",
            f"{args.path!r} não é um arquivo da skill {skill.name}. Arquivos: {listed}.",
        )
    if any(f.skill == skill.name and f.path == entry.path for f in ledger.files):
        return ToolResult.error(
            "file_already_chosen", f"{entry.path} já vai nesta resposta; não repita."
        )
    key = object_key(context.organization_id, skill.name, skill.version_id, entry.path)
    try:
        head = await context.store.get(key, max_bytes=SNIFF_BYTES)
    except ObjectNotFound:
        return ToolResult.error(
            "skill_file_not_found", f"O arquivo {entry.path} não está disponível."
        )
    except StorageError:
        return ToolResult.error(
            "storage_unavailable",
            "O armazenamento de arquivos não respondeu; siga sem enviar esse arquivo.",
        )
    mime = declared_type(sniff_type(head.data), entry.path)
    kind = message_kind(mime)
    refused = _unsendable(entry.path, entry.size, mime, head.data)
    if refused is not None:
        return refused
    caption = (args.caption or "").strip() or None
    note = ""
    if kind is FileMessage.AUDIO and caption is not None:
        caption, note = None, " Áudio não leva legenda: diga o que precisar na sua resposta."
    filename = safe_filename(entry.path, mime)
    ledger.files.append(
        OutboundFile(skill.name, entry.path, key, mime, kind, entry.size, filename, caption)
    )
    return ToolResult(
        content=f"{filename} ({kind.value}, {entry.size} bytes) será enviado logo depois da "
        f"sua resposta de texto.{note}"
    )


def _unsendable(path: str, size: int, mime: str, head: bytes) -> ToolResult | None:
    """Why WhatsApp would not take this file (a tool error), or None."""
    kind = message_kind(mime)
    if unsendable_audio(mime, head):
        return ToolResult.error(
            "unsupported_audio",
            f"{path} é um Ogg que não é Opus; o WhatsApp só aceita áudio Ogg com Opus. "
            "Não é possível enviá-lo.",
        )
    if unsendable_document(kind, mime):
        return ToolResult.error(
            "unsupported_file_type",
            f"{path} é {mime}; o WhatsApp só envia documentos PDF, Word, Excel, PowerPoint "
            "ou texto, e imagens JPEG ou PNG. Não é possível enviá-lo.",
        )
    if size > MAX_BYTES[kind]:
        limit_mb = MAX_BYTES[kind] // (1024 * 1024)
        return ToolResult.error(
            "file_too_large",
            f"{path} tem {size} bytes; o WhatsApp aceita até {limit_mb} MB "
            f"para {kind.value}. Não é possível enviá-lo.",
        )
    if size == 0:
        return ToolResult.error("file_empty", f"{path} está vazio; não é possível enviá-lo.")
    return None


TOOL = Tool(
    name="send_skill_file",
    description=(
        "Envia ao cliente um arquivo de uma skill ativada ou vista nesta mensagem (ex.: "
        "assets/catalogo.pdf): vai como documento, imagem ou áudio, depois da sua resposta "
        f"de texto. Use o caminho exato da lista de arquivos da skill. Até "
        f"{MAX_FILES_PER_TURN} por resposta."
    ),
    args=Args,
    run=run,
)
