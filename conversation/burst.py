"""Answer one burst of a conversation: match, prompt, model, then a fenced reply commit."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from channels.presence_queries import ReadNumber
from conversation.after_hours_queries import AwayCommit, commit_away, skip_wait_notice
from conversation.choice_reading import read_choices
from conversation.context import Conversation
from conversation.deps import MessageOutcome, TurnDeps, TurnOutcome
from conversation.file_parts import send_file_parts
from conversation.followups import ConversationFollowups
from conversation.handoff.texts import CUSTOMER_REASON, HANDOFF_ACK_DEFAULT, history_turn
from conversation.opt_out import confirmation
from conversation.opt_out_queries import record_choice
from conversation.outbox import SentReply, deliver_reply, deliver_waiting, send_claimed
from conversation.queries import (
    CommitOutcome,
    CommittedTurn,
    Handoff,
    InboundRow,
    ReplyCommit,
    TurnCounts,
    commit_turn,
)
from conversation.satisfaction_taps import without_satisfaction_taps
from conversation.turn_rows import activation_rows, sendable_files, usage_row
from core.errors import SkilletError
from core.tenancy import org_connection, self_bound_connection
from delivery.contract import Recipient
from delivery.outbound_choices import OutboundChoices
from delivery.outbound_file import OutboundFile
from delivery.outbox_queries import OutboxRow
from delivery.presence import Reading
from hours.texts import ClosedNow, after_hours_ack, away_message
from skills.models import LoadedSkill
from turn.agent_loop import LoopOutcome, run_agent_loop
from turn.agent_queries import fetch_handoff_ack
from turn.errors import ModelRequestRejected
from turn.matcher import MatchResult
from turn.model import (
    ImagePart,
    InjectedSkill,
    ModelMessage,
    ModelRequest,
    ModelUsage,
    ToolCall,
)
from turn.model_input import burst_text, cap_burst, cap_history, with_contact_name, with_quote
from turn.prompt import prompt_cache_key, render_skill_context
from turn.skill_catalog import CatalogSnapshot
from turn.tools.base import ToolContext, ToolResult, TurnLedger
from turn.tools.registry import default_registry, turn_tools

log = structlog.get_logger(__name__)

REJECTED_REPLY = (
    "Desculpe, não consegui processar sua mensagem. Um atendente vai continuar por aqui."
)


class _NotCommitted(Exception):
    """The fenced commit refused the reply: `outcome` says why."""

    def __init__(self, outcome: CommitOutcome) -> None:
        super().__init__(outcome)
        self.outcome = outcome


@dataclass(frozen=True)
class BatchResult:
    outcome: TurnOutcome | None  # None: not committed, see `refused`
    # Why not: OVERTAKEN, ANSWERED or TAKEN_OVER (read again), LEASE_LOST (stop).
    refused: CommitOutcome | None = None
    sent: SentReply | None = None  # to be marked sent by the holder's next statement


async def answer_batch(
    deps: TurnDeps,
    conversation: Conversation,
    snapshot: CatalogSnapshot,
    batch: Sequence[InboundRow],
    history: Sequence[tuple[str, str]],
    *,
    job_id: str,
    images: Mapping[uuid.UUID, tuple[ImagePart, ...]] | None = None,
    number: ReadNumber | None = None,
) -> BatchResult:
    """One model turn for `batch` (arrival order) and at most one reply for all of it;
    `history`: the conversation before it, oldest first (conversation.queries);
    `images`: a message's images for a model that takes them (conversation.media.reader);
    `number`: the number the burst came to, for its read mark (the burst's read returned it)."""
    batch = await _without_opt_choices(deps, conversation, batch)
    batch = read_choices(batch, history)
    batch = await without_satisfaction_taps(deps.pool, conversation, batch, history)
    if not batch:  # only PARAR / VOLTAR (confirmed, the holder delivers it and reads on) or a
        # satisfaction tap (kept as context, never answered)
        return BatchResult(outcome=None, refused=CommitOutcome.ANSWERED)
    text = burst_text([row.body for row in batch])
    closed = await deps.hours.closed_now(deps.pool, conversation.organization_id, deps.clock())
    if deps.asks_for_person(text):
        return await _hand_off_at_once(deps, conversation, batch, closed)
    if closed is not None and closed.away:
        return await _away(deps, conversation, batch, closed)
    # The model will answer: the customer sees their message read and the agent typing (once
    # per burst, in the background: delivery.presence), until the reply or the turn's end.
    typing = deps.presence.reading(
        Reading(
            conversation.organization_id,
            conversation.conversation_id,
            conversation.contact_id,
            batch[-1].external_id,
            number,
        )
    )
    try:
        return await _answer_by_model(
            deps, conversation, snapshot, batch, history, text, closed, job_id=job_id, images=images
        )
    finally:
        typing.stop()


async def _answer_by_model(
    deps: TurnDeps,
    conversation: Conversation,
    snapshot: CatalogSnapshot,
    batch: Sequence[InboundRow],
    history: Sequence[tuple[str, str]],
    text: str,
    closed: ClosedNow | None,
    *,
    job_id: str,
    images: Mapping[uuid.UUID, tuple[ImagePart, ...]] | None,
) -> BatchResult:
    match = snapshot.matcher.match(text, max_matched=deps.config.max_injected_skills)
    deps.metrics.skills_matched(len(match.matched), len(match.probes), len(match.by_intent))
    prefix = deps.prefixes.get(conversation.persona, snapshot.index_text)
    ledger = TurnLedger(max_writes=deps.config.max_skill_writes)
    try:
        loop = await _ask_model(
            deps,
            conversation,
            batch,
            history,
            match,
            prefix.text,
            snapshot.skills,
            ledger,
            images or {},
        )
    except ModelRequestRejected as exc:
        if exc.code != ModelRequestRejected.code:
            raise  # a key or account problem (model_unauthorized): every turn would fail
        loop = await _rejected(deps, conversation, batch, exc)
    activations = activation_rows(conversation.organization_id, match, job_id)
    counts = TurnCounts(
        used=tuple(s.name for s in match.matched),
        viewed=tuple(ledger.viewed),
        reads=tuple(ledger.read_files),
        activations=tuple((r.skill_name, r.trigger) for r in activations),
        usage=usage_row(conversation, loop) if loop.usage.calls else None,
    )
    handoff = None if ledger.handoff_reason is None else Handoff("tool", ledger.handoff_reason)
    skills = tuple((s.name, s.version_id) for s in match.matched)
    # Closed: the acknowledgement says when a person will be there, not the model's "já já".
    reply = loop.text if handoff is None or closed is None else after_hours_ack(closed.when)
    choices = ledger.choices
    if loop.silent and choices is not None and handoff is None:
        reply, choices = choices.spoken_first()  # the choices said it all: no apology first
    try:
        sent = await _commit_reply(
            deps,
            conversation,
            batch,
            reply,
            counts,
            handoff=handoff,
            skills=skills,
            files=ledger.files,
            choices=choices,
            read=deps.presence.marks_read,
        )
    except _NotCommitted as exc:
        log.info("turn.not_committed", outcome=exc.outcome)
        return BatchResult(outcome=None, refused=exc.outcome)
    if handoff is not None:
        await _handed_off(deps, conversation, handoff, closed)
    deps.recorder.record(activations)  # raw rows: telemetry, fire-and-forget
    outcome = TurnOutcome(
        status=MessageOutcome.REPLIED,
        inbound_id=batch[-1].id,
        reply=reply,
        matched=skills,
        probes=tuple(match.probes),
        capped=tuple(match.capped),
        tool_calls=loop.tool_calls,
        prefix_sha256=prefix.sha256,
        usage=loop.usage,
        steps=loop.steps,
        answered=tuple(row.external_id for row in batch),
    )
    return BatchResult(outcome=outcome, sent=sent)


async def _without_opt_choices(
    deps: TurnDeps, conversation: Conversation, batch: Sequence[InboundRow]
) -> Sequence[InboundRow]:
    """Record each opt-out / opt-in word of the burst with its confirmation (once per
    message, conversation.opt_out_queries); the rest of the burst, which the agent answers."""
    words = deps.config.opt_words
    chosen = [(row, choice) for row in batch if (choice := words.choice_of(row.body))]
    if not chosen:
        return batch
    async with org_connection(deps.pool, conversation.organization_id) as conn:
        for row, choice in chosen:
            if await record_choice(
                conn, conversation.organization_id, row.id, choice, confirmation(choice)
            ):
                log.info("turn.opt_choice", choice=choice)
                deps.metrics.opt_chosen(choice)
    ids = {row.id for row, _ in chosen}
    return [row for row in batch if row.id not in ids]


async def _hand_off_at_once(
    deps: TurnDeps,
    conversation: Conversation,
    batch: Sequence[InboundRow],
    closed: ClosedNow | None,
) -> BatchResult:
    """The customer asked for a person: the agent's fixed acknowledgement (while closed, the
    one saying when someone will be there) is the reply, and its commit puts the conversation
    in 'waiting' (no model call, no skills matched)."""
    if closed is not None:
        ack = after_hours_ack(closed.when)
    else:
        async with org_connection(deps.pool, conversation.organization_id) as conn:
            ack = await fetch_handoff_ack(conn, conversation.agent_id) or HANDOFF_ACK_DEFAULT
    handoff = Handoff("customer", CUSTOMER_REASON)
    try:
        sent = await _commit_reply(deps, conversation, batch, ack, TurnCounts(), handoff=handoff)
    except _NotCommitted as exc:
        log.info("turn.not_committed", outcome=exc.outcome)
        return BatchResult(outcome=None, refused=exc.outcome)
    await _handed_off(deps, conversation, handoff, closed)
    return _fixed_reply(batch, ack, sent, {"handoff": handoff.cause})


async def _handed_off(
    deps: TurnDeps, conversation: Conversation, handoff: Handoff, closed: ClosedNow | None
) -> None:
    log.info("turn.handed_off", cause=handoff.cause, after_hours=closed is not None)
    deps.metrics.handed_off(handoff.cause)
    if closed is not None:  # rare: one more statement, only after hours
        async with org_connection(deps.pool, conversation.organization_id) as conn:
            await skip_wait_notice(conn, conversation.conversation_id)


# The closed period of an org with no opening ahead (hours.opening.SEARCH_DAYS): one name.
NO_OPENING_PERIOD = datetime(9999, 12, 31, tzinfo=UTC)


async def _away(
    deps: TurnDeps, conversation: Conversation, batch: Sequence[InboundRow], closed: ClosedNow
) -> BatchResult:
    """Closed, and the org chose `away`: the period's first burst gets the away message (a
    fenced reply, no model call); later ones of the same period are kept as context."""
    text = away_message(closed.when)
    commit = AwayCommit(
        organization_id=conversation.organization_id,
        conversation_id=conversation.conversation_id,
        channel=conversation.channel,
        batch_ids=[row.id for row in batch],
        first_received_at=batch[0].received_at or deps.clock(),
        body=text,
        at=deps.clock(),
        lease_token=conversation.lease_token,
        period=closed.opening or NO_OPENING_PERIOD,
    )
    async with self_bound_connection(deps.pool) as conn:
        committed = await commit_away(conn, commit)
    if committed.reply.outcome is CommitOutcome.KEPT:
        log.info("turn.kept_after_hours", messages=len(batch))
        kept = TurnOutcome(status=MessageOutcome.STORED, inbound_id=batch[-1].id)
        return BatchResult(outcome=kept)
    try:
        sent = await _send_committed(deps, conversation, committed, text)
    except _NotCommitted as exc:
        log.info("turn.not_committed", outcome=exc.outcome)
        return BatchResult(outcome=None, refused=exc.outcome)
    log.info("turn.away_sent")
    return _fixed_reply(batch, text, sent, {"after_hours": "away"})


async def answer_fixed(
    deps: TurnDeps, conversation: Conversation, batch: Sequence[InboundRow], text: str
) -> BatchResult:
    """A fixed reply for `batch` (a media message refused: conversation.media.reader), no model."""
    try:
        sent = await _commit_reply(deps, conversation, batch, text, TurnCounts())
    except _NotCommitted as exc:
        log.info("turn.not_committed", outcome=exc.outcome)
        return BatchResult(outcome=None, refused=exc.outcome)
    return _fixed_reply(batch, text, sent, {"media_refused": True})


def _fixed_reply(
    batch: Sequence[InboundRow], text: str, sent: SentReply | None, extra: dict[str, Any]
) -> BatchResult:
    """A reply sent without the model (a handoff's acknowledgement, the away message, a media
    refusal): `batch` answered by `text`, `extra` saying which."""
    outcome = TurnOutcome(
        status=MessageOutcome.REPLIED,
        inbound_id=batch[-1].id,
        reply=text,
        answered=tuple(row.external_id for row in batch),
        extra=extra,
    )
    return BatchResult(outcome=outcome, sent=sent)


async def _ask_model(
    deps: TurnDeps,
    conversation: Conversation,
    batch: Sequence[InboundRow],
    history: Sequence[tuple[str, str]],
    match: MatchResult,
    prefix: str,
    installed: Sequence[LoadedSkill],
    ledger: TurnLedger,
    images: Mapping[uuid.UUID, tuple[ImagePart, ...]],
) -> LoopOutcome:
    model = deps.models.resolve(conversation.model_provider, conversation.model_name)
    caps = deps.config.input_caps
    injected = tuple(
        InjectedSkill(s.name, s.body, s.reference_paths, sendable_files(s)) for s in match.matched
    )
    request = ModelRequest(
        prefix=prefix,
        skill_context=render_skill_context(injected),
        messages=(
            *(
                ModelMessage(role=turn.role, content=turn.content)
                for turn in (history_turn(d, body) for d, body in cap_history(history, caps))
            ),
            # cap_burst keeps one text per message, in order: each keeps its images.
            *(
                ModelMessage(role="user", content=text, images=images.get(row.id, ()))
                for row, text in zip(
                    batch,
                    with_contact_name(
                        cap_burst([with_quote(r.quote, r.body) for r in batch], caps),
                        conversation.contact_name,
                    ),
                    strict=True,
                )
            ),
        ),
        tools=turn_tools(),
        injected_skills=injected,
        cache_key=prompt_cache_key(conversation.organization_id, conversation.agent_id),
    )

    context = ToolContext(
        organization_id=conversation.organization_id,
        pool=deps.pool,
        store=deps.store,
        usage=deps.usage,
        matched=match.matched,
        installed=installed,
        max_read_bytes=deps.config.reference_max_bytes,
        ledger=ledger,
        conversation_id=conversation.conversation_id,
        package_limits=deps.config.package_limits,
        page_cache=deps.page_cache,
        clock=deps.clock,
        max_followups=deps.config.followups_per_conversation,
        followups=ConversationFollowups(deps.pool),
    )

    async def execute(call: ToolCall) -> ToolResult:
        result = await default_registry().execute(context, call)
        log.info("turn.tool_called", tool=call.name, error_code=result.error_code)
        deps.metrics.tool_called(call.name, result.error_code)
        return result

    return await run_agent_loop(
        model,
        request,
        execute,
        max_steps=deps.config.max_steps,
        max_tool_calls=deps.config.max_tool_calls_per_answer,
    )


async def _rejected(
    deps: TurnDeps, conversation: Conversation, batch: Sequence[InboundRow], exc: SkilletError
) -> LoopOutcome:
    """The provider refuses this burst for good: retrying cannot help, and leaving it
    unanswered would hold back every later message of the conversation. It gets a handoff
    reply, and a dead letter tells an operator what was refused."""
    log.error("turn.model_rejected", code=exc.code, error=exc.message[:300], messages=len(batch))
    await deps.dead_letters.record(
        organization_id=conversation.organization_id,
        function="model_rejected",
        payload={
            "organization_id": str(conversation.organization_id),
            "conversation_id": str(conversation.conversation_id),
            "message_ids": [row.external_id for row in batch],
        },
        code=exc.code,
        error=exc.message,
    )
    return LoopOutcome(REJECTED_REPLY, 1, (), ModelUsage(), True)


async def _commit_reply(
    deps: TurnDeps,
    conversation: Conversation,
    batch: Sequence[InboundRow],
    text: str,
    counts: TurnCounts,
    *,
    handoff: Handoff | None = None,
    skills: Sequence[tuple[str, uuid.UUID]] = (),
    files: Sequence[OutboundFile] = (),
    choices: OutboundChoices | None = None,
    read: bool = False,
) -> SentReply | None:
    """Reply + outbox row (and a row per file after it) + 'answered' marks + the turn's
    counts + the delivery claim in one fenced statement, then the send with no connection
    held; what was sent, for the holder to mark (None: the channel refused it for good,
    marked failed, or the reply had files: each part is marked as it goes). `read`: the
    burst was shown read, the commit moves the conversation's read mark."""
    first_received = batch[0].received_at or deps.clock()
    async with self_bound_connection(deps.pool) as conn:
        commit = ReplyCommit(
            organization_id=conversation.organization_id,
            conversation_id=conversation.conversation_id,
            channel=conversation.channel,
            batch_ids=[row.id for row in batch],
            first_received_at=first_received,
            body=text,
            counts=counts,
            at=deps.clock(),
            lease_token=conversation.lease_token,
            handoff=handoff,
            skills=skills,
            files=files,
            choices=choices,
            read=read,
        )
        committed = await commit_turn(conn, commit)
    sent = await _send_committed(deps, conversation, committed, text)
    if not committed.file_ids:
        return sent
    await send_file_parts(deps, conversation, committed, files, sent, choices)
    return None


async def _send_committed(
    deps: TurnDeps, conversation: Conversation, committed: CommittedTurn, text: str
) -> SentReply | None:
    """After a commit: the send of its claimed outbox row (no connection held), or
    _NotCommitted with the outcome that refused it."""
    reply = committed.reply
    if (
        reply.outcome is not CommitOutcome.REPLIED
        or reply.outbox_id is None
        or reply.reply_id is None
    ):
        raise _NotCommitted(reply.outcome)
    row = OutboxRow.pending(
        conversation.organization_id,
        conversation.conversation_id,
        reply.outbox_id,
        reply.reply_id,
        text,
    )
    recipient = Recipient(conversation.channel, conversation.contact_id)
    if committed.claim is None:  # no route, or an earlier row of the conversation waits
        if not await deliver_reply(deps.pool, deps.sender, row, recipient):
            # Behind a row that waits (parked, its number's token replaced since): hand
            # over what waits, in commit order, this reply last.
            await deliver_waiting(
                deps.pool,
                deps.sender,
                conversation.organization_id,
                conversation.conversation_id,
                recipient,
            )
        return None
    provider_ids = await send_claimed(deps.pool, deps.sender, row, recipient, committed.claim)
    return None if provider_ids is None else (row.id, provider_ids)
