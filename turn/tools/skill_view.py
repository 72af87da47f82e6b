"""`skill_view`: an installed skill in depth (instructions, file list, one file), or the
agent's own pending draft of it.

A draft is shown only here, marked as not in use: it is never in the index, the matcher or
`read_skill_reference` until a person approves it. Viewing an installed skill counts as a
view (written with the reply); viewing a draft does not (drafts are not curator activity).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from core.object_store import object_key
from core.tenancy import org_connection
from skills.draft_queries import fetch_pending_draft
from skills.models import FileKind, LoadedSkill, ManifestEntry
from turn.tools.base import Tool, ToolContext, ToolResult
from turn.tools.stored_text import read_stored_text

DRAFT_BANNER = (
    "[rascunho seu, aguardando aprovação da empresa: ainda não está em uso nas conversas]\n"
)
_TEXT_KINDS = frozenset({FileKind.REFERENCE, FileKind.TEMPLATE, FileKind.SCRIPT})


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Nome da skill.", max_length=64)
    file_path: str | None = Field(
        default=None, description="Ex.: references/precos.md", max_length=255
    )
    draft: bool = Field(
        default=False, description="true: mostra o seu rascunho pendente desta skill."
    )
    offset: int = Field(
        default=0, ge=0, description="Byte de onde continuar a leitura de um arquivo longo."
    )


class Viewable(Protocol):
    @property
    def version_id(self) -> uuid.UUID: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def manifest(self) -> tuple[ManifestEntry, ...]: ...


async def run(context: ToolContext, args: Args) -> ToolResult:
    installed = next((s for s in context.installed if s.name == args.name), None)
    if args.draft or installed is None:
        async with org_connection(context.pool, context.organization_id) as conn:
            draft = await fetch_pending_draft(conn, context.organization_id, args.name)
        if draft is not None:
            result = await view_skill(context, draft.version, args.file_path, args.offset)
            return ToolResult(DRAFT_BANNER + result.content, result.error_code)
        if installed is None:
            return _not_installed(args.name, context.installed)
    assert installed is not None
    result = await view_skill(context, installed, args.file_path, args.offset)
    if result.error_code is None:
        context.ledger.viewed.append(installed.name)  # a view, counted by the reply's commit
    return result


async def view_skill(
    context: ToolContext, skill: Viewable, path: str | None, offset: int = 0
) -> ToolResult:
    """The skill's body and file list, or one of its files (text only, capped)."""
    if path is None:
        return ToolResult(content=_overview(skill))
    entry = next((e for e in skill.manifest if e.path == path), None)
    if entry is None:
        listed = ", ".join(e.path for e in skill.manifest) or "nenhum"
        return ToolResult.error(
            "skill_file_not_found", f"{path!r} não é um arquivo da skill. Arquivos: {listed}."
        )
    if entry.kind not in _TEXT_KINDS:
        return ToolResult(
            content=f"{entry.path}: arquivo binário ({entry.kind}, {entry.size} bytes), "
            "não exibido."
        )
    return await read_stored_text(
        context,
        object_key(context.organization_id, skill.name, skill.version_id, entry.path),
        sha256=entry.sha256,
        path=entry.path,
        size=entry.size,
        offset=offset,
        missing_code="skill_file_not_found",
    )


def _not_installed(name: str, installed: Sequence[LoadedSkill]) -> ToolResult:
    names = ", ".join(s.name for s in installed) or "nenhuma"
    return ToolResult.error(
        "skill_not_found", f"Não há skill instalada chamada {name!r}. Instaladas: {names}."
    )


def _overview(skill: Viewable) -> str:
    files = "\n".join(f"- {e.path} ({e.kind}, {e.size} bytes)" for e in skill.manifest)
    return (
        f"# {skill.name}\n{skill.description}\n\n{skill.body.strip()}\n\n"
        f"Arquivos de apoio:\n{files or '(nenhum)'}"
    )


TOOL = Tool(
    name="skill_view",
    description=(
        "Mostra uma skill instalada: sem file_path, as instruções completas e a lista de "
        "arquivos de apoio; com file_path, o conteúdo daquele arquivo. Com draft=true, o seu "
        "rascunho pendente dessa skill."
    ),
    args=Args,
    run=run,
)
