"""`skill_manage`: the agent writes skills of its own, as drafts a person approves.

What a write does depends on the org's `agent_authoring` mode (skills.authoring): a draft
(`review`, the default), published at once (`auto`) or refused (`off`). Each turn may write
at most `TurnLedger.max_writes` times; every refusal is a teaching message.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field

from core.errors import StorageError
from core.tenancy import org_connection
from skills.authoring import AuthoredVersion, AuthoringLimits, SkillAuthor
from skills.authoring_rules import AuthoringError
from skills.draft_queries import AuthoringMode, fetch_agent_authoring
from turn.tools.base import Tool, ToolContext, ToolResult

log = structlog.get_logger(__name__)

# Bounds on what one call may carry, before any rule runs (the rules then apply the
# package limits to the result).
MAX_TEXT_CHARS = 100_000
MAX_KEYWORDS = 50

Action = Literal["create", "patch", "write_file", "remove_file"]


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action
    name: str = Field(max_length=64)
    description: str | None = Field(default=None, max_length=1024)
    body: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    any_keywords: list[str] | None = Field(default=None, max_length=MAX_KEYWORDS)
    probe_keywords: list[str] | None = Field(default=None, max_length=MAX_KEYWORDS)
    old: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    new: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    file_path: str | None = Field(default=None, max_length=255)
    path: str | None = Field(default=None, max_length=255)
    content: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)


async def run(context: ToolContext, args: Args) -> ToolResult:
    if not context.ledger.take_write():
        return ToolResult.error(
            "write_limit_reached",
            f"Esta mensagem já fez {context.ledger.max_writes} alterações de skills, o limite "
            "por mensagem; não faça outras agora.",
        )
    try:
        async with org_connection(context.pool, context.organization_id) as conn:
            mode = await fetch_agent_authoring(conn, context.organization_id)
            author = SkillAuthor(
                conn,
                context.store,
                context.usage,
                context.organization_id,
                mode=mode or AuthoringMode.OFF,
                limits=AuthoringLimits.of(context.package_limits),
                conversation_id=context.conversation_id,
                read_whole=context.ledger.read_whole,
            )
            done = await _apply(author, args)
    except AuthoringError as exc:
        return ToolResult.error(exc.code, exc.message)
    except StorageError:
        return ToolResult.error(
            "storage_unavailable", "O armazenamento não respondeu; nada foi alterado."
        )
    if args.action == "write_file" and args.content is not None:
        written = args.content.encode("utf-8")  # the model knows what it just wrote
        context.ledger.record_read(hashlib.sha256(written).hexdigest(), 0, len(written))
    log.info(
        "turn.skill_written",
        action=args.action,
        skill=done.name,
        version_id=str(done.version_id),
        draft=done.draft_id is not None,
    )
    return ToolResult(content=_confirmation(done))


async def _apply(author: SkillAuthor, args: Args) -> AuthoredVersion:
    if args.action == "create":
        return await author.create(
            args.name, args.description, args.body, args.any_keywords, args.probe_keywords
        )
    if args.action == "patch":
        return await author.patch(args.name, args.old, args.new, args.file_path)
    if args.action == "write_file":
        return await author.write_file(args.name, args.path, args.content)
    return await author.remove_file(args.name, args.path)


def _confirmation(done: AuthoredVersion) -> str:
    if done.draft_id is not None:
        return (
            f"Rascunho salvo: {done.name} (versão {done.version_id}). Ele fica aguardando a "
            "aprovação da empresa e não entra em uso até ser aprovado; não diga ao cliente "
            "que algo mudou."
        )
    return (
        f"Feito: {done.name} agora está na versão {done.version_id}. "
        "Ela entra no índice de skills a partir da próxima mensagem."
    )


TOOL = Tool(
    name="skill_manage",
    description=(
        "Cria ou melhora skills que você mesmo escreveu (memória de procedimentos); cada "
        "mudança vira um rascunho que a empresa aprova antes de entrar em uso. "
        "action=create (name, description, body, any_keywords, probe_keywords?); "
        "action=patch (name, old, new, file_path?): troca um trecho que aparece uma única vez; "
        "action=write_file (name, path, content) e action=remove_file (name, path) para "
        "arquivos em references/, templates/, scripts/ ou assets/. Skills da empresa e do "
        "catálogo são somente leitura; não há exclusão."
    ),
    args=Args,
    run=run,
)
