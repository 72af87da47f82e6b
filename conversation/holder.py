"""One conversation's waiting messages: each answered once, in arrival order, by one holder.

Postgres owns the conversation. A message's row is written when it arrives, before any job
exists (inbox.store: one statement, `skillet_receive_inbound` from the webhook,
`skillet_store_inbound` from `skillet enqueue`); a job only names the conversation (and the
message that woke it: jobs.payloads.ConversationPayload, run by jobs.inbound). Whoever takes
the conversation's lease (conversation.lease) answers every open message, oldest
first, one reply per burst (a burst: everything open when it is read), and lets go only
when nothing is open. A job that finds the lease taken leaves its message to the holder. A
sweeper re-wakes conversations whose messages wait with no live lease
(jobs.conversation_sweep), so a lost job or a wiped Redis delays a reply, never loses it.

One message, hop by hop (each hop is one module):
  1. webhook.app            the size cap, the signature (webhook.signatures), the JSON
  2. webhook.cloud_api      the delivery parsed (webhook.waha for WAHA): inbox.message.InboundText
  3. webhook.ingest         per message: inbox.store.store_received (one statement) and
                            jobs.queue.enqueue_wakeup (one Redis round trip, ids only)
  4. jobs.inbound           the arq job: jobs.payloads.ConversationPayload in, run_conversation
  5. conversation.holder    (here) the lease and the bursts: conversation.queries
  6. conversation.burst     one burst answered by the agent turn: turn.matcher, turn.prompt,
                            turn.agent_loop (turn.providers, turn.tools), then the fenced
                            commit; before it, a burst holding a voice note, image or file has
                            it read (conversation.media.reader: downloaded, stored,
                            transcribed), none of it for a text-only burst
  7. conversation.outbox    the send, at most once, through channels.dispatch (Cloud API, WAHA)
  8. turn.activations       the raw activation rows, batched, fire-and-forget

A turn is three statements, each a database function binding its org transaction-locally
(skillet_bind_org; no bind or reset of the pooled connection around them):
  take      the lease, the first burst with its agent, the catalog revision and the history
  commit    the fenced reply, its outbox row, the turn's counts and the delivery claim
            (a reply with skill files: a row per file after the text, each claimed, sent
            and marked after the text is marked: conversation.file_parts)
  continue  (after the send, no connection held) mark it sent, then let go if nothing is
            open, else read the next burst
What the holder does, per read of the open messages:
| open messages                    | the holder                                           |
|----------------------------------|------------------------------------------------------|
| none                             | continues: lets go if still none, else reads again    |
| only ones expecting no reply     | keeps them as context (history, never a later reply) |
| some expecting a reply           | one model turn, one fenced commit for the whole burst |
| same, while closed, `away` chosen | the away message, no model call: once per closed    |
|                                  | period (hours.opening); later bursts kept as context |
| commit refused: overtaken        | continues (an older message committed late)          |
| commit refused: answered         | continues (someone answered part of it first)        |
| commit refused: taken_over       | continues (a person took it: the read finds nothing)  |
| commit refused: lease_lost       | stops: its lease ran out and another holder answers  |
| continue: lease not held         | stops (the same, seen without a commit)               |
| `max_batches_per_job` bursts done | lets go; the next job or sweep goes on               |
Replies committed but never handed to a channel (a crash between commit and send, or a
person's reply written by the API) are delivered first, once, in the order they were
committed; while a person holds the conversation (mode 'waiting' or 'human') the reads find
nothing for the agent to answer and the holder lets go.

A customer's opt-out or opt-in word (PARAR, VOLTAR: conversation.opt_out) is never answered by the
agent: a burst's are recorded with their one confirmation before the model is asked
(conversation.burst), and the job's own, when no burst read it (a person holds the conversation, or
is asked for), after the holder lets go, then delivered by holding again
(conversation.opt_out_queries, once per message). Such a message with media has it read first
(stored; a voice note transcribed: conversation.media.reader.read_held), so a spoken PARAR counts
and the person sees the note's text and the photo in the console; the agent answers none.

The job's own message then reads: `replied` (answered by this job), `redelivered` (its
reply was delivered now), `queued` (the holder answers or answered it), `stored` (kept as
context).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import structlog

from conversation.burst import BatchResult, answer_batch, answer_fixed
from conversation.context import Conversation
from conversation.deps import MessageOutcome, TurnConfig, TurnDeps, TurnOutcome
from conversation.lease import Lease
from conversation.media.queries import fetch_held_media
from conversation.media.reader import might_hold_media
from conversation.opt_out import confirmation
from conversation.opt_out_queries import fetch_choice_candidate, record_choice
from conversation.outbox import SentReply, deliver_waiting
from conversation.queries import BurstRead, CommitOutcome, Continued, continue_conversation
from core.tenancy import org_connection, self_bound_connection
from delivery.contract import Recipient
from delivery.outbox_queries import update_outbox_sent
from inbox.queries import fetch_inbound_state
from turn.model import ImagePart

log = structlog.get_logger(__name__)

__all__ = [
    "ConversationWakeup",
    "TurnConfig",
    "TurnDeps",
    "TurnOutcome",
    "run_conversation",
]

# Messages one burst answers at most; a longer backlog takes several bursts.
MAX_BURST_MESSAGES = 50


@dataclass(frozen=True)
class ConversationWakeup:
    """What a job carries: ids only (the message row exists before the job)."""

    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    inbound_id: uuid.UUID | None = None  # the message that woke it (None: a sweep)
    message_id: str | None = None  # its external id


async def run_conversation(
    deps: TurnDeps, wakeup: ConversationWakeup, *, job_id: str
) -> TurnOutcome:
    """Answer what waits in the conversation if this job gets its lease; report on the
    job's own message."""
    structlog.contextvars.bind_contextvars(conversation_id=str(wakeup.conversation_id))
    outcomes = await _take_and_hold(deps, wakeup, job_id)
    if _left_unanswered(wakeup, outcomes) and await _record_opt_choice(deps, wakeup):
        outcomes += await _take_and_hold(deps, wakeup, job_id)  # deliver its confirmation
    return await _own_outcome(deps, wakeup, outcomes)


async def _take_and_hold(
    deps: TurnDeps, wakeup: ConversationWakeup, job_id: str
) -> list[TurnOutcome]:
    taken = await deps.leases.take(
        wakeup.organization_id,
        wakeup.conversation_id,
        limit=MAX_BURST_MESSAGES,
        history_limit=deps.config.history_limit,
    )
    if taken is None:
        return []
    lease, first = taken
    async with deps.leases.kept_alive(lease):
        return await _hold(deps, lease, first, job_id)


def _left_unanswered(wakeup: ConversationWakeup, outcomes: list[TurnOutcome]) -> bool:
    if wakeup.inbound_id is None:
        return False
    return not any(wakeup.message_id in o.answered for o in outcomes)


async def _record_opt_choice(deps: TurnDeps, wakeup: ConversationWakeup) -> bool:
    """The job's own message, when no holder's burst read it (a person holds the
    conversation, or is asked for: the agent reads nothing): an opt-out or opt-in word is
    still recorded and confirmed, a spoken one too (its media read first, never answered).
    True when this call committed a confirmation."""
    assert wakeup.inbound_id is not None
    async with org_connection(deps.pool, wakeup.organization_id) as conn:
        candidate = await fetch_choice_candidate(conn, wakeup.inbound_id)
    spoken = candidate is not None and might_hold_media(candidate.head)
    if spoken and await _read_held_media(deps, wakeup):  # no connection held across it
        async with org_connection(deps.pool, wakeup.organization_id) as conn:
            candidate = await fetch_choice_candidate(conn, wakeup.inbound_id)
    if candidate is None or candidate.recorded:
        return False
    choice = deps.config.opt_words.choice_of(candidate.head)
    if choice is None:
        return False
    async with org_connection(deps.pool, wakeup.organization_id) as conn:
        recorded = await record_choice(
            conn, wakeup.organization_id, wakeup.inbound_id, choice, confirmation(choice)
        )
    if recorded:
        log.info("turn.opt_choice", choice=choice)
        deps.metrics.opt_chosen(choice)
    return recorded


async def _read_held_media(deps: TurnDeps, wakeup: ConversationWakeup) -> bool:
    """The job's own media message while a person holds the conversation: stored, a voice
    note transcribed (conversation.media.reader.read_held). True when it was read now."""
    assert wakeup.inbound_id is not None
    if deps.media is None:
        return False
    async with org_connection(deps.pool, wakeup.organization_id) as conn:
        row = await fetch_held_media(conn, wakeup.inbound_id)
    if row is None:
        return False
    await deps.media.read_held(deps.pool, wakeup.organization_id, wakeup.conversation_id, row)
    return True


async def _hold(
    deps: TurnDeps, lease: Lease, burst: BurstRead | None, job_id: str
) -> list[TurnOutcome]:
    outcomes = await _deliver_undelivered(deps, lease) if lease.undelivered else []
    sent: SentReply | None = None  # handed to its channel, marked by the next statement
    for _ in range(deps.config.max_batches_per_job):
        if lease.lost:
            break
        if burst is None or not burst.open.rows:
            step = await _continue(deps, lease, sent)
            sent = None
            if not step.held:
                lease.lost = True
            if step.released or not step.held:
                return outcomes
            burst = step.burst
            if not burst.open.rows:  # held with nothing to answer: a person's reply waits
                outcomes += await _deliver_undelivered(deps, lease)
            continue
        result = await _answer(deps, lease, burst, job_id)
        if result.outcome is not None:
            outcomes.append(result.outcome)
            sent = result.sent
        burst = None  # answered or refused: let go, or read again
    if sent is not None:
        async with org_connection(deps.pool, lease.organization_id) as conn:
            await update_outbox_sent(conn, *sent)
    if not lease.lost:
        await deps.leases.abandon(lease)  # the rest is the next job's (or the sweeper's)
    return outcomes


async def _continue(deps: TurnDeps, lease: Lease, sent: SentReply | None) -> Continued:
    async with self_bound_connection(deps.pool) as conn:
        return await continue_conversation(
            conn,
            lease.organization_id,
            lease.conversation_id,
            lease.token,
            sent=sent,
            limit=MAX_BURST_MESSAGES,
            history_limit=deps.config.history_limit,
        )


async def _answer(deps: TurnDeps, lease: Lease, burst: BurstRead, job_id: str) -> BatchResult:
    assert burst.catalog_revision is not None and burst.history is not None
    snapshot = deps.catalog.cached(lease.organization_id, burst.catalog_revision)
    if snapshot is None:  # the org's skills changed (or this worker never loaded them)
        async with org_connection(deps.pool, lease.organization_id) as conn:
            snapshot = await deps.catalog.get(conn, lease.organization_id)
    agent = burst.open.agent
    conversation = Conversation(
        lease.organization_id,
        lease.channel,
        lease.contact_id,
        lease.conversation_id,
        agent.system_prompt or deps.config.default_persona,
        agent_id=agent.id,
        model_provider=agent.model_provider,
        model_name=agent.model_name,
        lease_token=lease.token,
        contact_name=lease.contact_name,
    )
    rows = burst.open.rows
    images: dict[uuid.UUID, tuple[ImagePart, ...]] = {}
    if deps.media is not None and any(might_hold_media(row.body) for row in rows):
        read = await deps.media.read(
            deps.pool, lease.organization_id, lease.conversation_id, rows, agent_id=agent.id
        )
        images = read.images
        rows = read.rows
        if read.refused_at == 0:  # its own fixed reply, in its place in the conversation
            result = await answer_fixed(deps, conversation, rows[:1], read.refusal)
            if result.refused is CommitOutcome.LEASE_LOST:
                lease.lost = True
            return result
        if read.refused_at is not None:
            rows = rows[: read.refused_at]  # those before it first; it comes next
    result = await answer_batch(
        deps,
        conversation,
        snapshot,
        rows,
        burst.history,
        job_id=job_id,
        images=images,
        number=burst.number,
    )
    if result.refused is CommitOutcome.LEASE_LOST:
        lease.lost = True
    return result


async def _deliver_undelivered(deps: TurnDeps, lease: Lease) -> list[TurnOutcome]:
    """What waits in the conversation's outbox, in order (conversation.outbox.deliver_waiting)."""
    recipient = Recipient(lease.channel, lease.contact_id)
    delivered = await deliver_waiting(
        deps.pool, deps.sender, lease.organization_id, lease.conversation_id, recipient
    )
    outcomes: list[TurnOutcome] = []
    for reply in delivered:
        log.info("turn.redelivered", outbox_id=str(reply.id))
        if any(o.inbound_id == reply.message_id for o in outcomes):
            continue  # a file part of a reply already reported
        outcomes.append(
            TurnOutcome(
                status=MessageOutcome.REDELIVERED,
                inbound_id=reply.message_id,
                reply=reply.body,
                answered=reply.answered,
            )
        )
    return outcomes


async def _own_outcome(
    deps: TurnDeps, wakeup: ConversationWakeup, outcomes: list[TurnOutcome]
) -> TurnOutcome:
    if wakeup.inbound_id is None:  # a sweep: report what it answered, if anything
        if outcomes:
            return outcomes[-1]
        return TurnOutcome(status=MessageOutcome.QUEUED, inbound_id=wakeup.conversation_id)
    mine = next((o for o in outcomes if wakeup.message_id in o.answered), None)
    if mine is not None:
        return mine
    async with org_connection(deps.pool, wakeup.organization_id) as conn:
        state = await fetch_inbound_state(conn, wakeup.inbound_id)
    answered, expects_reply, context = state or (False, True, False)
    if not answered and (context or not expects_reply):
        return TurnOutcome(status=MessageOutcome.STORED, inbound_id=wakeup.inbound_id)
    return TurnOutcome(status=MessageOutcome.QUEUED, inbound_id=wakeup.inbound_id)
