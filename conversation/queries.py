"""SQL of a conversation's turn, one statement per step: take (skillet_take_conversation),
commit (skillet_commit_turn), continue (skillet_continue_conversation), and their rows.

Each is a database function that binds its org transaction-locally, with the org's proof
(core.tenancy.org_proof) as its second argument, so it runs on a
`core.tenancy.self_bound_connection` (no bind before it, no reset after it) under row-level
security like every other statement.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import asyncpg

from channels.presence_queries import ReadNumber, read_number
from core.tenancy import org_proof
from delivery.outbound_choices import OutboundChoices, history_note
from delivery.outbound_file import OutboundFile
from delivery.outbox_queries import DeliveryClaim
from inbox.message import QUOTE_MARK


@dataclass(frozen=True)
class InboundRow:
    id: uuid.UUID
    external_id: str
    body: str
    received_at: datetime | None
    answered_by: uuid.UUID | None
    expects_reply: bool = True
    agent_id: uuid.UUID | None = None  # the agent of the number it came in on
    # What the message quotes (the customer swiped to reply): the quoted message's first
    # 200 characters, ours or the provider's; "" when neither is known; None: no quote.
    quote: str | None = None


@dataclass(frozen=True)
class AnsweringAgent:
    id: uuid.UUID | None
    system_prompt: str | None
    model_provider: str | None
    model_name: str | None


@dataclass(frozen=True)
class OpenBurst:
    """What waits in the conversation, oldest first, and who answers it."""

    rows: list[InboundRow]
    agent: AnsweringAgent


@dataclass(frozen=True)
class TurnCounts:
    """A turn's durable counts, written by its reply's commit (skillet_commit_turn): a use per
    injected skill, a view per file read, and the day's activations by trigger."""

    used: tuple[str, ...] = ()
    viewed: tuple[str, ...] = ()
    # (skill, 'hard' | 'intent' | 'probe' | 'capped')
    activations: tuple[tuple[str, str], ...] = ()
    # What the turn's model calls cost: {agent_id, provider, model, calls, *_tokens} (a
    # count None: unreported), added to the day's token usage.
    usage: dict[str, Any] | None = None
    # (skill, path) per read_skill_reference read: the file's read count and last read.
    reads: tuple[tuple[str, str], ...] = ()


class CommitOutcome(StrEnum):
    """What a reply commit returns (skillet_commit_turn's outcome text)."""

    REPLIED = "replied"  # written: the reply, its outbox row, the marks and counts
    OVERTAKEN = "overtaken"  # an older message expecting a reply is still open: read again
    ANSWERED = "answered"  # someone answered part of the burst first: read again
    LEASE_LOST = "lease_lost"  # the lease is another holder's now: stop
    # The conversation left mode 'agent' (a person took it, or was asked for): nothing the
    # agent wrote is committed; read again (the read then returns nothing to answer).
    TAKEN_OVER = "taken_over"
    # After hours, an away message already sent this closed period: the burst is kept as
    # context (skillet_commit_away), nothing sent; read again (the read finds nothing).
    KEPT = "kept"


@dataclass(frozen=True)
class CommittedReply:
    outcome: CommitOutcome
    outbox_id: uuid.UUID | None
    reply_id: uuid.UUID | None


@dataclass(frozen=True)
class Handoff:
    """The turn hands the conversation to a person with its reply (mode 'waiting')."""

    cause: str  # 'tool' (the model's handoff_to_human) | 'customer' (asked for a person)
    reason: str


@dataclass(frozen=True)
class ReplyCommit:
    """What a reply commit writes (skillet_commit_turn's arguments after the proof,
    `args()` in order)."""

    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    channel: str
    batch_ids: Sequence[uuid.UUID]
    first_received_at: datetime
    body: str
    counts: TurnCounts
    at: datetime
    lease_token: uuid.UUID | None
    handoff: Handoff | None = None
    # The injected skills, (name, version id): recorded on the reply (the API lists them).
    skills: Sequence[tuple[str, uuid.UUID]] = ()
    # The skill files the turn sends after the text (send_skill_file), in order.
    files: Sequence[OutboundFile] = ()
    # The choices the turn sends last (send_choices), or None.
    choices: OutboundChoices | None = None
    # The burst was shown read (the model was asked): the commit moves the read mark.
    read: bool = False

    def parts(self) -> list[dict[str, Any]] | None:
        """skillet_commit_turn's p_files: each file, then the choices as {"choices", "note"}
        (one outbox row each after the text, in this order; the note ends the reply's stored
        body, never its sent text: delivery.outbound_choices.history_note); None for none."""
        parts: list[dict[str, Any]] = [f.as_json() for f in self.files]
        if self.choices is not None:
            note = history_note(self.choices)
            parts.append({"choices": self.choices.as_json(), "note": note})
        return parts or None

    def args(self) -> tuple[Any, ...]:
        counts = self.counts
        handoff = self.handoff
        return (
            self.organization_id,
            self.conversation_id,
            self.channel,
            list(self.batch_ids),
            self.first_received_at,
            self.body,
            list(counts.used),
            list(counts.viewed),
            [name for name, _ in counts.activations],
            [trigger for _, trigger in counts.activations],
            self.at,
            self.lease_token,
            counts.usage,
            True,  # claim the outbox row for the send in the same statement
            None if handoff is None else handoff.cause,
            None if handoff is None else handoff.reason,
            [{"name": name, "version_id": str(version)} for name, version in self.skills],
            [{"skill": skill, "path": path} for skill, path in counts.reads],
        )


_BURST_COLUMNS = """ids, external_ids, bodies, received_ats, expects_replies, agent_ids,
    agent_id, system_prompt, model_provider, model_name, catalog_revision,
    history_directions, history_bodies, route_kind, route_address, channel_status,
    waha_base_url, access_token, waha_api_key, waha_server_vouched"""


@dataclass(frozen=True)
class BurstRead:
    """One read of the open messages: the burst (empty: nothing waits that wants a reply),
    its agent, and for a burst to answer, the org's catalog revision and the history."""

    open: OpenBurst
    catalog_revision: int | None = None
    history: list[tuple[str, str]] | None = None
    # The number the burst's last message came to, what its read mark goes with (None: none).
    number: ReadNumber | None = None


def _quoted(body: str) -> tuple[str, str | None]:
    """(body, quote) of a burst row: skillet_read_burst leads a quoting message's body with
    QUOTE_MARK quote QUOTE_MARK (a stored body never holds the mark)."""
    if not body.startswith(QUOTE_MARK):
        return body, None
    quote, _, text = body[1:].partition(QUOTE_MARK)
    return text, quote


def _burst(row: Any) -> BurstRead:
    ids = row["ids"] or []
    rows = [
        InboundRow(id_, external_id, text, received_at, None, expects_reply, agent_id, quote)
        for id_, external_id, (text, quote), received_at, expects_reply, agent_id in zip(
            ids,
            row["external_ids"] or [],
            map(_quoted, row["bodies"] or []),
            row["received_ats"] or [],
            row["expects_replies"] or [],
            row["agent_ids"] or [],
            strict=True,
        )
    ]
    agent = AnsweringAgent(
        row["agent_id"], row["system_prompt"], row["model_provider"], row["model_name"]
    )
    if not rows:
        return BurstRead(OpenBurst([], agent))
    history = list(zip(row["history_directions"], row["history_bodies"], strict=True))
    return BurstRead(
        OpenBurst(rows, agent), int(row["catalog_revision"]), history, read_number(row)
    )


TAKE_CONVERSATION = f"""
select channel, contact_id, undelivered, contact_name, {_BURST_COLUMNS}
from skillet_take_conversation($1, $2, $3, $4, $5, $6, $7)
"""


@dataclass(frozen=True)
class TakenConversation:
    channel: str
    contact_id: str
    undelivered: bool  # a committed reply waits to be handed to its channel (no burst read)
    burst: BurstRead
    contact_name: str | None = None  # the customer's WhatsApp profile name, if known


async def take_conversation(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    token: uuid.UUID,
    *,
    ttl_s: float,
    limit: int,
    history_limit: int,
) -> TakenConversation | None:
    """The lease under `token` and the first burst; None: someone else holds it."""
    row = await conn.fetchrow(
        TAKE_CONVERSATION,
        organization_id,
        org_proof(conn, organization_id),
        conversation_id,
        token,
        ttl_s,
        limit,
        history_limit,
    )
    if row is None:
        return None
    return TakenConversation(
        row["channel"], row["contact_id"], row["undelivered"], _burst(row), row["contact_name"]
    )


CONTINUE_CONVERSATION = f"""
select sent, held, released, {_BURST_COLUMNS}
from skillet_continue_conversation($1, $2, $3, $4, $5, $6, $7, $8)
"""


@dataclass(frozen=True)
class Continued:
    sent: bool  # the outbox row given was pending and is now sent
    held: bool  # False: the lease is someone else's now (stop)
    released: bool  # nothing waited: the conversation is free
    burst: BurstRead  # what waits, when held and not released


async def continue_conversation(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    token: uuid.UUID,
    *,
    sent: tuple[uuid.UUID, tuple[str, ...]] | None,
    limit: int,
    history_limit: int,
) -> Continued:
    """Mark `sent` (outbox id, provider message ids) sent, then release if nothing waits,
    else read the next burst."""
    outbox_id, provider_ids = sent if sent is not None else (None, ())
    row = await conn.fetchrow(
        CONTINUE_CONVERSATION,
        organization_id,
        org_proof(conn, organization_id),
        conversation_id,
        token,
        outbox_id,
        list(provider_ids),
        limit,
        history_limit,
    )
    assert row is not None  # the function always returns its one row
    return Continued(row["sent"], row["held"], row["released"], _burst(row))


COMMIT_TURN = """
select outcome, outbox_id, reply_id, deliverable,
       reply_to_external_id, last_inbound_at, route_kind, route_address, file_outbox_ids
from skillet_commit_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                         $16, $17, $18, $19, $20, $21)
"""


@dataclass(frozen=True)
class CommittedTurn:
    reply: CommittedReply
    claim: DeliveryClaim | None  # what the sender needs; None: not committed
    # The reply's parts after its text (its files, then its choices: outbox rows, pending
    # and unclaimed), in order.
    file_ids: tuple[uuid.UUID, ...] = ()


async def commit_turn(conn: asyncpg.Connection, commit: ReplyCommit) -> CommittedTurn:
    """The fenced reply commit (refused as lease_lost, taken_over, overtaken or answered) and
    its outbox row's delivery claim, in one statement."""
    org, *rest = commit.args()
    proof = org_proof(conn, org)
    row = await conn.fetchrow(COMMIT_TURN, org, proof, *rest, commit.parts(), commit.read)
    assert row is not None  # the function always returns its one row
    return committed_turn(row)


def committed_turn(row: Any) -> CommittedTurn:
    """A commit's row (skillet_commit_turn's columns) as its outcome and delivery claim."""
    reply = CommittedReply(CommitOutcome(row["outcome"]), row["outbox_id"], row["reply_id"])
    file_ids = tuple(row.get("file_outbox_ids") or ())  # skillet_commit_away has none
    if reply.outcome is not CommitOutcome.REPLIED or not row["deliverable"]:
        return CommittedTurn(reply, None, file_ids)
    claim = DeliveryClaim(
        row["reply_to_external_id"],
        row["last_inbound_at"],
        row["route_kind"],
        row["route_address"],
    )
    return CommittedTurn(reply, claim, file_ids)
