"""`read_skill_reference`: a matched skill's reference file, fetched from object storage."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from core.errors import StorageError
from skills.models import LoadedSkill
from skills.storage import ObjectNotFound, ObjectStore, object_key
from turn.tools.base import Tool, ToolContext, ToolResult

TRUNCATION_NOTICE = "\n\n[arquivo truncado em {max_bytes} bytes; o restante não foi incluído]"


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill_name: str = Field(description="Nome da skill ativada.", max_length=64)
    path: str = Field(description="Caminho do arquivo, ex.: references/tabela.md", max_length=255)


async def run(context: ToolContext, args: Args) -> ToolResult:
    result = await read_skill_reference(
        context.store,
        organization_id=context.organization_id,
        matched=context.matched,
        skill_name=args.skill_name,
        path=args.path,
        max_bytes=context.max_read_bytes,
    )
    if result.error_code is None:
        context.ledger.viewed.append(args.skill_name)  # a view, counted by the reply's commit
    return result


async def read_skill_reference(
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    matched: Sequence[LoadedSkill],
    skill_name: object,
    path: object,
    max_bytes: int,
) -> ToolResult:
    """Only skills matched in this turn, only reference paths in that version's manifest.

    The object key comes from the trusted org id and the matched version, never from the
    model's arguments beyond choosing among listed paths.
    """
    skill = next((s for s in matched if s.name == skill_name), None)
    if skill is None:
        active = ", ".join(s.name for s in matched) or "nenhuma"
        return ToolResult.error(
            "skill_not_active",
            f"A skill {skill_name!r} não foi ativada nesta mensagem. Skills ativas: {active}.",
        )
    if path not in skill.reference_paths:
        listed = ", ".join(skill.reference_paths) or "nenhuma"
        return ToolResult.error(
            "reference_not_found",
            f"{path!r} não é uma referência da skill {skill.name}. Referências: {listed}.",
        )
    key = object_key(organization_id, skill.name, skill.version_id, str(path))
    try:
        stored = await store.get(key, max_bytes=max_bytes)
    except ObjectNotFound:
        return ToolResult.error("reference_not_found", f"O arquivo {path} não está disponível.")
    except StorageError:
        return ToolResult.error(
            "storage_unavailable",
            "O armazenamento de arquivos não respondeu; responda sem essa referência.",
        )
    text = stored.data.decode("utf-8", errors="replace")
    if stored.truncated:
        # A multi-byte character may have been cut at the cap: 'replace' keeps it readable.
        text += TRUNCATION_NOTICE.format(max_bytes=max_bytes)
    return ToolResult(content=text)


TOOL = Tool(
    name="read_skill_reference",
    description=(
        "Lê um arquivo de referência (references/...) de uma skill ativada nesta conversa. "
        "Use apenas caminhos listados junto da skill."
    ),
    args=Args,
    run=run,
)
