"""`read_skill_reference`: a matched skill's reference file, fetched from object storage."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.object_store import object_key
from skills.models import FileKind
from turn.tools.base import Tool, ToolContext, ToolResult
from turn.tools.stored_text import read_stored_text


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill_name: str = Field(description="Nome da skill ativada.", max_length=64)
    path: str = Field(description="Caminho do arquivo, ex.: references/tabela.md", max_length=255)
    offset: int = Field(
        default=0, ge=0, description="Byte de onde continuar a leitura de um arquivo longo."
    )


async def run(context: ToolContext, args: Args) -> ToolResult:
    """Only skills matched in this turn, only reference paths in that version's manifest.

    The object key comes from the trusted org id and the matched version, never from the
    model's arguments beyond choosing among listed paths.
    """
    skill = next((s for s in context.matched if s.name == args.skill_name), None)
    if skill is None:
        active = ", ".join(s.name for s in context.matched) or "nenhuma"
        return ToolResult.error(
            "skill_not_active",
            f"A skill {args.skill_name!r} não foi ativada nesta mensagem. Skills ativas: {active}.",
        )
    entry = next(
        (e for e in skill.manifest if e.path == args.path and e.kind is FileKind.REFERENCE), None
    )
    if entry is None:
        listed = ", ".join(skill.reference_paths) or "nenhuma"
        return ToolResult.error(
            "reference_not_found",
            f"{args.path!r} não é uma referência da skill {skill.name}. Referências: {listed}.",
        )
    result = await read_stored_text(
        context,
        object_key(context.organization_id, skill.name, skill.version_id, entry.path),
        sha256=entry.sha256,
        path=entry.path,
        size=entry.size,
        offset=args.offset,
        missing_code="reference_not_found",
    )
    if result.error_code is None:
        context.ledger.viewed.append(skill.name)  # a view, counted by the reply's commit
        context.ledger.read_files.append((skill.name, entry.path))  # and the file's read
    return result


TOOL = Tool(
    name="read_skill_reference",
    description=(
        "Lê um arquivo de referência (references/... ou outro texto listado, como "
        "reference.md) de uma skill ativada nesta conversa. "
        "Use apenas caminhos listados junto da skill. Um arquivo longo vem em trechos: o "
        "fim de cada trecho diz o offset para continuar."
    ),
    args=Args,
    run=run,
)
