"""One inbound WhatsApp message: persisted once, answered once, in its conversation's order.

Every message enters its conversation's mailbox when it is enqueued (its job may be deferred
by the coalescing window). Whoever holds the conversation's lease drains the mailbox burst
by burst (a burst = everything waiting, so messages that arrived during a turn get one
following reply); a job that cannot get the lease leaves its message to the holder, which
re-reads the mailbox after releasing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import structlog

from core.tenancy import org_connection
from turn.conversation_queries import (
    InboundRow,
    PersistedInbound,
    UnansweredRow,
    list_history,
    list_inbound_by_external_ids,
    upsert_inbound,
)
from turn.deps import TurnConfig, TurnDeps, TurnOutcome
from turn.errors import UnknownOrganization
from turn.mailbox import ConversationKey, MailboxEntry
from turn.outbox import Recipient, deliver_reply
from turn.queries import OutboxRow, fetch_inbound_message_id, insert_inbound_message
from turn.reply_turn import Conversation, answer_batch

log = structlog.get_logger(__name__)

__all__ = ["InboundMessage", "TurnConfig", "TurnDeps", "TurnOutcome", "run_inbound_turn"]


@dataclass(frozen=True)
class InboundMessage:
    organization_id: uuid.UUID
    channel: str
    contact_id: str
    message_id: str
    text: str
    sent_at: datetime
    received_at: datetime | None = None  # when the queue got it; None = now
    kind: str = "text"
    expects_reply: bool = True  # False: stored as context, answered only inside a burst
    agent_id: uuid.UUID | None = None  # the receiving number's agent; None: the org's first


@dataclass(frozen=True)
class _Persisted:
    conversation: Conversation
    inbound_id: uuid.UUID
    # Set when this message already had its reply (a duplicate, or a re-run after a crash),
    # or when its id is stored in another contact's conversation (a refused duplicate).
    answered: TurnOutcome | None = None


async def run_inbound_turn(deps: TurnDeps, message: InboundMessage, *, job_id: str) -> TurnOutcome:
    key = ConversationKey(message.organization_id, message.channel, message.contact_id)
    stored = None if message.expects_reply else await _stored_id(deps, message)
    if stored is None:
        entry = MailboxEntry(
            message.message_id,
            message.text,
            message.sent_at,
            message.received_at or deps.clock(),
            kind=message.kind,
            expects_reply=message.expects_reply,
        )
        # The mailbox keeps the first arrival time (stamped at enqueue): persist that one, so
        # the database and the mailbox agree on the order.
        received_at = await deps.mailbox.add(key, entry)
    else:
        # Once stored, a message that expects no reply leaves the mailbox with nothing to
        # show for it: a redelivery must not put it back, or a later burst would answer it
        # as new. (Its row exists: this arrival time is not written.)
        received_at = message.received_at or deps.clock()
    persisted = await _persist(deps, message, received_at)
    own = persisted.answered
    if own is None and stored is not None:
        own = TurnOutcome(status="duplicate", inbound_id=stored)
    own_row: InboundRow | None = None
    if own is None:
        own_row = InboundRow(
            persisted.inbound_id,
            message.message_id,
            message.text,
            received_at,
            None,
            expects_reply=message.expects_reply,
        )
    else:
        await deps.mailbox.remove(key, [message.message_id])
        # A re-run of a holder killed mid-drain finds its own message answered (or stored),
        # but the messages it left waiting were handed to it: answer them now, or nobody will.
        if await deps.mailbox.size(key) == 0:
            return own
    for _ in range(deps.config.max_batches_per_job):
        lease = await deps.leases.acquire(key.lease_key)
        if lease is None:
            break  # the holder answers it: it re-reads the mailbox after releasing
        async with deps.leases.kept_alive(lease, key.order_key):
            outcomes = await _drain(deps, key, persisted.conversation, job_id, own_row)
        own_row = None  # answered or handed on: from now on read its state from the database
        own = own or next((o for o in outcomes if message.message_id in o.answered), None)
        if lease.waiting_after_release == 0:
            break
    if own is None and not message.expects_reply:
        return TurnOutcome(status="stored", inbound_id=persisted.inbound_id)
    return own or TurnOutcome(status="queued", inbound_id=persisted.inbound_id)


async def _stored_id(deps: TurnDeps, message: InboundMessage) -> uuid.UUID | None:
    async with org_connection(deps.pool, message.organization_id) as conn:
        return await fetch_inbound_message_id(
            conn, message.organization_id, message.channel, message.message_id
        )


async def _persist(deps: TurnDeps, message: InboundMessage, received_at: datetime) -> _Persisted:
    """Store the message once; an already answered one is a duplicate (re-sent if pending)."""
    async with org_connection(deps.pool, message.organization_id) as conn:
        try:
            persisted = await upsert_inbound(
                conn,
                organization_id=message.organization_id,
                channel=message.channel,
                contact_id=message.contact_id,
                external_id=message.message_id,
                body=message.text,
                sent_at=message.sent_at,
                received_at=received_at,
                kind=message.kind,
                expects_reply=message.expects_reply,
                agent_id=message.agent_id,
            )
        except asyncpg.ForeignKeyViolationError as exc:
            raise UnknownOrganization(
                f"organization {message.organization_id} does not exist"
            ) from exc
        structlog.contextvars.bind_contextvars(conversation_id=str(persisted.conversation_id))
        if message.agent_id is not None and persisted.agent_id != message.agent_id:
            # The number's agent was deleted or belongs elsewhere: answer with the org's.
            log.warning("turn.channel_agent_missing", agent_id=str(message.agent_id))
        answered = None
        if persisted.foreign:
            # Neither answered here nor its reply re-sent here: that is another contact's.
            log.warning("turn.duplicate_foreign_contact", message_id=message.message_id)
            answered = TurnOutcome(status="duplicate", inbound_id=persisted.inbound_id)
        elif persisted.outbox_id is not None:
            answered = await _already_answered(deps, conn, message, persisted)
    persona = persisted.system_prompt or deps.config.default_persona
    conversation = Conversation(
        message.organization_id,
        message.channel,
        message.contact_id,
        persisted.conversation_id,
        persona,
        agent_id=persisted.agent_id,
        model_provider=persisted.model_provider,
        model_name=persisted.model_name,
    )
    return _Persisted(conversation, persisted.inbound_id, answered)


async def _already_answered(
    deps: TurnDeps, conn: asyncpg.Connection, message: InboundMessage, persisted: PersistedInbound
) -> TurnOutcome:
    if persisted.outbox_status != "pending":
        return TurnOutcome(status="duplicate", inbound_id=persisted.inbound_id)
    # Committed but never delivered (a crash between the two): deliver it now.
    assert persisted.outbox_id and persisted.reply_id and persisted.reply_body is not None
    row = OutboxRow(
        id=persisted.outbox_id,
        message_id=persisted.reply_id,
        organization_id=message.organization_id,
        conversation_id=persisted.conversation_id,
        body=persisted.reply_body,
        status="pending",
    )
    await deliver_reply(conn, deps.sender, row, Recipient(message.channel, message.contact_id))
    return TurnOutcome(status="redelivered", inbound_id=persisted.inbound_id, reply=row.body)


async def _drain(
    deps: TurnDeps,
    key: ConversationKey,
    conversation: Conversation,
    job_id: str,
    own_row: InboundRow | None,
) -> list[TurnOutcome]:
    """Answer what waits in the mailbox, oldest first, one reply per burst."""
    outcomes: list[TurnOutcome] = []
    for _ in range(deps.config.max_batches_per_job):
        entries = await deps.mailbox.entries(key)
        if not entries:
            break
        if own_row is not None and [e.message_id for e in entries] == [own_row.external_id]:
            pending = [own_row]  # the common case: just persisted by this job, unanswered
        else:
            pending = await _pending_rows(deps, key, conversation, entries)
        own_row = None  # only the first read may trust it; later ones ask the database
        if not pending:
            continue
        if not any(row.expects_reply for row in pending):
            # Only messages that wait for no answer (an audio on a number that does not
            # reply to those): stored, they are context for the next turn.
            await deps.mailbox.remove(key, [row.external_id for row in pending])
            continue
        # One connection for both reads: each org_connection costs a bind and a reset.
        async with org_connection(deps.pool, conversation.organization_id) as conn:
            snapshot = await deps.catalog.get(conn, conversation.organization_id)
            history = await list_history(
                conn,
                conversation.conversation_id,
                deps.config.history_limit,
                [row.id for row in pending],
            )
        result = await answer_batch(deps, conversation, snapshot, pending, history, job_id=job_id)
        if result.earlier:
            await _readmit(deps, key, result.earlier)
            continue
        if result.outcome is None:
            # Part of the burst was answered elsewhere first (a holder whose lease had run
            # out): read again; the answered messages leave the mailbox, the rest stay.
            continue
        await deps.mailbox.remove(key, [row.external_id for row in pending])
        outcomes.append(result.outcome)
    return outcomes


async def _pending_rows(
    deps: TurnDeps, key: ConversationKey, conversation: Conversation, entries: list[MailboxEntry]
) -> list[InboundRow]:
    """Mailbox entries as unanswered DB rows in arrival order; persists entries whose job has
    not run yet and drops the ones already answered."""
    ids = [e.message_id for e in entries]
    async with org_connection(deps.pool, key.organization_id) as conn:
        rows = await list_inbound_by_external_ids(conn, key.organization_id, key.channel, ids)
        missing = [e for e in entries if e.message_id not in rows]
        if missing:
            # One autocommit insert each: idempotent, and no transaction holding locks that
            # a concurrent job's insert of the same message would wait on.
            for entry in missing:
                await insert_inbound_message(
                    conn,
                    organization_id=key.organization_id,
                    conversation_id=conversation.conversation_id,
                    channel=key.channel,
                    external_id=entry.message_id,
                    body=entry.text,
                    sent_at=entry.sent_at,
                    received_at=entry.received_at,
                    kind=entry.kind,
                    expects_reply=entry.expects_reply,
                )
            rows = await list_inbound_by_external_ids(conn, key.organization_id, key.channel, ids)
    # An id stored in another contact's conversation is theirs: it leaves this mailbox.
    foreign = [i for i in ids if rows[i].conversation_id != conversation.conversation_id]
    if foreign:
        log.warning("turn.duplicate_foreign_contact", message_ids=foreign)
    done = set(foreign).union(i for i in ids if rows[i].answered_by is not None)
    await deps.mailbox.remove(key, [i for i in ids if i in done])
    return [rows[i] for i in ids if i not in done]


async def _readmit(deps: TurnDeps, key: ConversationKey, earlier: list[UnansweredRow]) -> None:
    """Messages persisted but missing from the mailbox (lost Redis state): put them back in
    order so the next burst starts with them."""
    log.warning("turn.order_fence", earlier=len(earlier))
    for row in earlier:
        entry = MailboxEntry(
            row.external_id, row.body, row.sent_at or row.received_at, row.received_at
        )
        await deps.mailbox.add(key, entry)
