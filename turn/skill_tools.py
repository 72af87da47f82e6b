"""skill_view and skill_manage: the agent reads skills in depth and writes its own.

Both answer with a ToolResult; every refusal is a teaching message naming the rule, never
an exception that ends the turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from core.errors import StorageError
from skills.authoring import SkillAuthor
from skills.authoring_rules import AuthoringError
from skills.models import FileKind, LoadedSkill
from skills.storage import ObjectNotFound, ObjectStore, object_key
from turn.model import ToolDefinition
from turn.reference_tool import TRUNCATION_NOTICE, ToolResult

log = structlog.get_logger(__name__)

SKILL_VIEW = ToolDefinition(
    name="skill_view",
    description=(
        "Mostra uma skill instalada: sem file_path, as instruções completas e a lista de "
        "arquivos de apoio; com file_path, o conteúdo daquele arquivo."
    ),
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Nome da skill."},
            "file_path": {"type": "string", "description": "Ex.: references/precos.md"},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)

SKILL_MANAGE = ToolDefinition(
    name="skill_manage",
    description=(
        "Cria ou melhora skills que você mesmo escreveu (memória de procedimentos). "
        "action=create (name, description, body, any_keywords, probe_keywords?); "
        "action=patch (name, old, new, file_path?): troca um trecho que aparece uma única vez; "
        "action=write_file (name, path, content) e action=remove_file (name, path) para "
        "arquivos em references/, templates/, scripts/ ou assets/. Skills da empresa são "
        "somente leitura; não há exclusão."
    ),
    parameters={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["create", "patch", "write_file", "remove_file"]},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "body": {"type": "string"},
            "any_keywords": {"type": "array", "items": {"type": "string"}},
            "probe_keywords": {"type": "array", "items": {"type": "string"}},
            "old": {"type": "string"},
            "new": {"type": "string"},
            "file_path": {"type": "string"},
            "path": {"type": "string"},
            "content": {"type": "string"},
        },
        "required": ["action", "name"],
        "additionalProperties": False,
    },
)

_TEXT_KINDS = frozenset({FileKind.REFERENCE, FileKind.TEMPLATE, FileKind.SCRIPT})


async def view_skill(
    store: ObjectStore,
    *,
    organization_id: uuid.UUID,
    installed: Sequence[LoadedSkill],
    arguments: Mapping[str, Any],
    max_bytes: int,
) -> tuple[ToolResult, LoadedSkill | None]:
    """The skill's body and file list, or one file; also the skill viewed (for usage)."""
    name = arguments.get("name")
    skill = next((s for s in installed if s.name == name), None)
    if skill is None:
        names = ", ".join(s.name for s in installed) or "nenhuma"
        return ToolResult.error(
            "skill_not_found", f"Não há skill instalada chamada {name!r}. Instaladas: {names}."
        ), None
    path = arguments.get("file_path")
    if path is None:
        return ToolResult(content=_overview(skill)), skill
    entry = next((e for e in skill.manifest if e.path == path), None)
    if entry is None:
        listed = ", ".join(e.path for e in skill.manifest) or "nenhum"
        return ToolResult.error(
            "skill_file_not_found", f"{path!r} não é um arquivo da skill. Arquivos: {listed}."
        ), None
    if entry.kind not in _TEXT_KINDS:
        return ToolResult(
            content=f"{entry.path}: arquivo binário ({entry.kind}, {entry.size} bytes), "
            "não exibido."
        ), skill
    key = object_key(organization_id, skill.name, skill.version_id, entry.path)
    try:
        stored = await store.get(key, max_bytes=max_bytes)
    except ObjectNotFound:
        return ToolResult.error(
            "skill_file_not_found", f"O arquivo {path} não está disponível."
        ), None
    except StorageError:
        return ToolResult.error(
            "storage_unavailable", "O armazenamento não respondeu; siga sem esse arquivo."
        ), None
    text = stored.data.decode("utf-8", errors="replace")
    if stored.truncated:
        text += TRUNCATION_NOTICE.format(max_bytes=max_bytes)
    return ToolResult(content=text), skill


def _overview(skill: LoadedSkill) -> str:
    files = "\n".join(f"- {e.path} ({e.kind}, {e.size} bytes)" for e in skill.manifest)
    return (
        f"# {skill.name}\n{skill.description}\n\n{skill.body.strip()}\n\n"
        f"Arquivos de apoio:\n{files or '(nenhum)'}"
    )


async def manage_skill(author: SkillAuthor, arguments: Mapping[str, Any]) -> ToolResult:
    """Run one skill_manage action; refusals come back as teaching messages."""
    action = arguments.get("action")
    args = dict(arguments)
    try:
        if action == "create":
            done = await author.create(
                args.get("name"),
                args.get("description"),
                args.get("body"),
                args.get("any_keywords"),
                args.get("probe_keywords"),
            )
        elif action == "patch":
            done = await author.patch(
                args.get("name"), args.get("old"), args.get("new"), args.get("file_path")
            )
        elif action == "write_file":
            done = await author.write_file(args.get("name"), args.get("path"), args.get("content"))
        elif action == "remove_file":
            done = await author.remove_file(args.get("name"), args.get("path"))
        else:
            return ToolResult.error(
                "action_invalid", "action precisa ser create, patch, write_file ou remove_file."
            )
    except AuthoringError as exc:
        return ToolResult.error(exc.code, exc.message)
    except StorageError:
        return ToolResult.error(
            "storage_unavailable", "O armazenamento não respondeu; nada foi alterado."
        )
    log.info("turn.skill_written", action=action, skill=done.name, version_id=str(done.version_id))
    return ToolResult(
        content=f"Feito: {done.name} agora está na versão {done.version_id}. "
        "Ela entra no índice de skills a partir da próxima mensagem."
    )
