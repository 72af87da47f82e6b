"""One inbound WhatsApp message -> at most one reply, with skills matched and recorded."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import structlog

from skills.models import LoadedSkill
from skills.storage import ObjectStore
from turn.activations import ActivationRecorder
from turn.agent_loop import LoopOutcome, ToolCallRecord, run_agent_loop
from turn.errors import UnknownOrganization
from turn.matcher import MatchResult
from turn.model import InjectedSkill, Model, ModelMessage, ModelRequest, ToolCall
from turn.outbox import Recipient, Sender, deliver_reply
from turn.prompt import build_prefix, prefix_sha256, render_skill_context
from turn.queries import (
    ActivationRow,
    fetch_org_agent,
    fetch_reply_outbox,
    insert_inbound_message,
    insert_reply,
    list_recent_messages,
    set_local_async_commit,
    upsert_conversation,
)
from turn.reference_tool import ToolResult, read_skill_reference
from turn.skill_catalog import CatalogSnapshot, SkillCatalogCache
from turn.tool_definitions import turn_tools

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class InboundMessage:
    organization_id: uuid.UUID
    channel: str
    contact_id: str
    message_id: str
    text: str
    sent_at: datetime


@dataclass(frozen=True)
class TurnConfig:
    default_persona: str
    max_steps: int = 4
    max_injected_skills: int = 3
    reference_max_bytes: int = 16_384
    history_limit: int = 10


@dataclass
class TurnDeps:
    pool: Any  # asyncpg.Pool
    store: ObjectStore
    model: Model
    sender: Sender
    recorder: ActivationRecorder
    catalog: SkillCatalogCache
    config: TurnConfig


@dataclass(frozen=True)
class TurnOutcome:
    """What happened, for logs, the demo transcript and tests."""

    status: Literal["replied", "duplicate", "redelivered"]
    inbound_id: uuid.UUID
    reply: str | None = None
    matched: tuple[tuple[str, uuid.UUID], ...] = ()
    probes: tuple[str, ...] = ()
    capped: tuple[str, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    prefix_sha256: str | None = None
    steps: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Prepared:
    inbound_id: uuid.UUID
    conversation_id: uuid.UUID
    persona: str
    snapshot: CatalogSnapshot
    history: list[tuple[str, str]]


async def run_inbound_turn(deps: TurnDeps, message: InboundMessage, *, job_id: str) -> TurnOutcome:
    """Persist, dedupe, match, ask the model, reply once, record activations."""
    prepared = await _prepare(deps, message)
    if isinstance(prepared, TurnOutcome):
        return prepared
    match = prepared.snapshot.matcher.match(
        message.text, max_matched=deps.config.max_injected_skills
    )
    prefix = build_prefix(prepared.persona, turn_tools(), prepared.snapshot.index_text)
    loop = await _ask_model(deps, message, prepared, match, prefix)
    replied = await _commit_reply(deps, message, prepared, loop.text)
    if replied is not None:
        return replied
    deps.recorder.record(_activation_rows(message.organization_id, match, job_id))
    return TurnOutcome(
        status="replied",
        inbound_id=prepared.inbound_id,
        reply=loop.text,
        matched=tuple((s.name, s.version_id) for s in match.matched),
        probes=tuple(match.probes),
        capped=tuple(match.capped),
        tool_calls=loop.tool_calls,
        prefix_sha256=prefix_sha256(prefix),
        steps=loop.steps,
    )


async def _prepare(deps: TurnDeps, message: InboundMessage) -> _Prepared | TurnOutcome:
    recipient = Recipient(message.channel, message.contact_id)
    async with deps.pool.acquire() as conn:
        org = await fetch_org_agent(conn, message.organization_id)
        if org is None:
            raise UnknownOrganization(f"organization {message.organization_id} does not exist")
        async with conn.transaction():
            # The reply's synchronous commit later makes this durable too; a crash before
            # that re-runs the job, which inserts the message again.
            await set_local_async_commit(conn)
            conversation_id = await upsert_conversation(
                conn, message.organization_id, message.channel, message.contact_id
            )
            inbound_id, _ = await insert_inbound_message(
                conn,
                organization_id=message.organization_id,
                conversation_id=conversation_id,
                channel=message.channel,
                external_id=message.message_id,
                body=message.text,
                sent_at=message.sent_at,
            )
        structlog.contextvars.bind_contextvars(conversation_id=str(conversation_id))
        existing = await fetch_reply_outbox(conn, inbound_id)
        if existing is not None:
            # Already answered: a crash between commit and send leaves the row pending.
            if existing.status == "pending":
                await deliver_reply(conn, deps.sender, existing, recipient)
                return TurnOutcome(status="redelivered", inbound_id=inbound_id, reply=existing.body)
            return TurnOutcome(status="duplicate", inbound_id=inbound_id)
        snapshot = await deps.catalog.get(conn, message.organization_id)
        history = await list_recent_messages(
            conn, conversation_id, inbound_id, deps.config.history_limit
        )
    persona = org.system_prompt or deps.config.default_persona
    return _Prepared(inbound_id, conversation_id, persona, snapshot, history)


async def _ask_model(
    deps: TurnDeps,
    message: InboundMessage,
    prepared: _Prepared,
    match: MatchResult,
    prefix: str,
) -> LoopOutcome:
    injected = tuple(InjectedSkill(s.name, s.body, s.reference_paths) for s in match.matched)
    history = tuple(
        ModelMessage(role="user" if d == "inbound" else "assistant", content=body)
        for d, body in prepared.history
    )
    request = ModelRequest(
        prefix=prefix,
        skill_context=render_skill_context(injected),
        messages=(*history, ModelMessage(role="user", content=message.text)),
        tools=turn_tools(),
        injected_skills=injected,
    )

    async def execute(call: ToolCall) -> ToolResult:
        return await _execute_tool(deps, message.organization_id, match.matched, call)

    return await run_agent_loop(deps.model, request, execute, max_steps=deps.config.max_steps)


async def _execute_tool(
    deps: TurnDeps, organization_id: uuid.UUID, matched: Sequence[LoadedSkill], call: ToolCall
) -> ToolResult:
    if call.name != "read_skill_reference":
        return ToolResult.error("unknown_tool", f"A ferramenta {call.name!r} não existe.")
    result = await read_skill_reference(
        deps.store,
        organization_id=organization_id,
        matched=matched,
        skill_name=call.arguments.get("skill_name"),
        path=call.arguments.get("path"),
        max_bytes=deps.config.reference_max_bytes,
    )
    log.info("turn.tool_called", tool=call.name, error_code=result.error_code)
    return result


async def _commit_reply(
    deps: TurnDeps, message: InboundMessage, prepared: _Prepared, text: str
) -> TurnOutcome | None:
    """Write the reply and its outbox row atomically, then deliver; an outcome if we lost a race."""
    async with deps.pool.acquire() as conn:
        async with conn.transaction():
            row = await insert_reply(
                conn,
                organization_id=message.organization_id,
                conversation_id=prepared.conversation_id,
                channel=message.channel,
                inbound_id=prepared.inbound_id,
                body=text,
            )
        if row is None:
            # Another run of the same message committed first: its reply is the only one.
            return TurnOutcome(status="duplicate", inbound_id=prepared.inbound_id)
        await deliver_reply(conn, deps.sender, row, Recipient(message.channel, message.contact_id))
    return None


def _activation_rows(
    organization_id: uuid.UUID, match: MatchResult, job_id: str
) -> list[ActivationRow]:
    hard = [
        ActivationRow(organization_id, s.name, s.version_id, "hard", job_id) for s in match.matched
    ]
    probes = [ActivationRow(organization_id, name, None, "probe", job_id) for name in match.probes]
    return hard + probes
