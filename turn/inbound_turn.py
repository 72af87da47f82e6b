"""One inbound WhatsApp message: persisted once, answered once, in its conversation's order.

Every job persists its message and adds it to the conversation's mailbox. Whoever holds the
conversation's lease drains the mailbox burst by burst (a burst = everything waiting, so
messages that arrived during a turn get one following reply); a job that cannot get the
lease leaves its message to the holder, which re-reads the mailbox after releasing.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime

import structlog

from turn.conversation_queries import InboundRow, UnansweredRow, list_inbound_by_external_ids
from turn.deps import TurnConfig, TurnDeps, TurnOutcome
from turn.errors import UnknownOrganization
from turn.mailbox import ConversationKey, MailboxEntry
from turn.outbox import Recipient, deliver_reply
from turn.queries import (
    fetch_org_agent,
    fetch_reply_outbox,
    insert_inbound_message,
    set_local_async_commit,
    upsert_conversation,
)
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


@dataclass(frozen=True)
class _Persisted:
    conversation: Conversation
    inbound_id: uuid.UUID


async def run_inbound_turn(deps: TurnDeps, message: InboundMessage, *, job_id: str) -> TurnOutcome:
    received_at = message.received_at or deps.clock()
    persisted = await _persist(deps, message, received_at)
    if isinstance(persisted, TurnOutcome):
        return persisted
    key = ConversationKey(message.organization_id, message.channel, message.contact_id)
    entry = MailboxEntry(message.message_id, message.text, message.sent_at, received_at)
    await deps.mailbox.add(key, entry)
    own: TurnOutcome | None = None
    for _ in range(deps.config.max_batches_per_job):
        lease = await deps.leases.acquire(key.lease_key)
        if lease is None:
            break  # the holder answers it: it re-reads the mailbox after releasing
        async with deps.leases.kept_alive(lease):
            outcomes = await _drain(deps, key, persisted.conversation, job_id)
        own = own or next((o for o in outcomes if message.message_id in o.answered), None)
        if await deps.mailbox.size(key) == 0:
            break
    return own or TurnOutcome(status="queued", inbound_id=persisted.inbound_id)


async def _persist(
    deps: TurnDeps, message: InboundMessage, received_at: datetime
) -> _Persisted | TurnOutcome:
    """Store the message once; an already answered one is a duplicate (re-sent if pending)."""
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
                received_at=received_at,
            )
        structlog.contextvars.bind_contextvars(conversation_id=str(conversation_id))
        existing = await fetch_reply_outbox(conn, inbound_id)
        if existing is not None:
            if existing.status == "pending":  # crashed between commit and send
                recipient = Recipient(message.channel, message.contact_id)
                await deliver_reply(conn, deps.sender, existing, recipient)
                return TurnOutcome(status="redelivered", inbound_id=inbound_id, reply=existing.body)
            return TurnOutcome(status="duplicate", inbound_id=inbound_id)
    persona = org.system_prompt or deps.config.default_persona
    conversation = Conversation(
        message.organization_id, message.channel, message.contact_id, conversation_id, persona
    )
    return _Persisted(conversation, inbound_id)


async def _drain(
    deps: TurnDeps, key: ConversationKey, conversation: Conversation, job_id: str
) -> list[TurnOutcome]:
    """Answer what waits in the mailbox, oldest first, one reply per burst."""
    outcomes: list[TurnOutcome] = []
    for _ in range(deps.config.max_batches_per_job):
        entries = await deps.mailbox.entries(key)
        if not entries:
            break
        if await _wait_for_burst_end(deps, entries[-1].received_at):
            continue  # something may have joined the burst meanwhile: read again
        pending = await _pending_rows(deps, key, conversation, entries)
        if not pending:
            continue
        async with deps.pool.acquire() as conn:
            snapshot = await deps.catalog.get(conn, conversation.organization_id)
        result = await answer_batch(deps, conversation, snapshot, pending, job_id=job_id)
        if result.earlier:
            await _readmit(deps, key, result.earlier)
            continue
        await deps.mailbox.remove(key, [row.external_id for row in pending])
        if result.outcome is not None:
            outcomes.append(result.outcome)
    return outcomes


async def _wait_for_burst_end(deps: TurnDeps, newest: datetime) -> bool:
    """Sleep until the newest message is `coalesce_ms` old; True if it had to wait."""
    wait_s = deps.config.coalesce_ms / 1000 - (deps.clock() - newest).total_seconds()
    if wait_s <= 0:
        return False
    await asyncio.sleep(wait_s)
    return True


async def _pending_rows(
    deps: TurnDeps, key: ConversationKey, conversation: Conversation, entries: list[MailboxEntry]
) -> list[InboundRow]:
    """Mailbox entries as unanswered DB rows in arrival order; persists entries whose job has
    not run yet and drops the ones already answered."""
    ids = [e.message_id for e in entries]
    async with deps.pool.acquire() as conn:
        rows = await list_inbound_by_external_ids(conn, key.organization_id, key.channel, ids)
        missing = [e for e in entries if e.message_id not in rows]
        if missing:
            async with conn.transaction():
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
                    )
            rows = await list_inbound_by_external_ids(conn, key.organization_id, key.channel, ids)
    answered = [i for i in ids if rows[i].answered_by is not None]
    await deps.mailbox.remove(key, answered)
    return [rows[i] for i in ids if rows[i].answered_by is None]


async def _readmit(deps: TurnDeps, key: ConversationKey, earlier: list[UnansweredRow]) -> None:
    """Messages persisted but missing from the mailbox (lost Redis state): put them back in
    order so the next burst starts with them."""
    log.warning("turn.order_fence", earlier=len(earlier))
    for row in earlier:
        entry = MailboxEntry(
            row.external_id, row.body, row.sent_at or row.received_at, row.received_at
        )
        await deps.mailbox.add(key, entry)
