"""A reply's parts after its text: its files (send_skill_file), then its choices
(send_choices), sent within the same turn."""

from __future__ import annotations

from collections.abc import Sequence

from conversation.context import Conversation
from conversation.deps import TurnDeps
from conversation.outbox import SentReply, deliver_in_order
from conversation.queries import CommittedTurn
from core.tenancy import org_connection
from delivery.contract import Recipient
from delivery.outbound_choices import OutboundChoices
from delivery.outbound_file import OutboundFile
from delivery.outbox_queries import OutboxRow, update_outbox_sent


async def send_file_parts(
    deps: TurnDeps,
    conversation: Conversation,
    committed: CommittedTurn,
    files: Sequence[OutboundFile],
    sent: SentReply | None,
    choices: OutboundChoices | None = None,
) -> None:
    """The reply's file parts, then its choices, after its text (marked sent first, so a
    crash in between never leaves it claimed and unmarked): each claimed, sent and marked in
    order, at most once (conversation.outbox.deliver_in_order), each judged on its own by the
    channel (the text failed for good outside the window: so do they). A text left pending
    (parked for the number's new token) keeps them all pending behind it (the claim refuses a
    row while an earlier one of its conversation waits: skillet_claim_outbox): they go after
    it, with the channel's resume.
    A retryable failure is raised (the job is retried): the rest stay pending, and the next
    holder sends them first, in order."""
    organization_id = conversation.organization_id
    reply = committed.reply
    assert reply.reply_id is not None and reply.outbox_id is not None
    if sent is not None:
        async with org_connection(deps.pool, organization_id) as conn:
            await update_outbox_sent(conn, *sent)
    parts: list[tuple[str, OutboundFile | None, OutboundChoices | None]] = [
        (file.caption or "", file, None) for file in files
    ]
    if choices is not None:
        parts.append((choices.text, None, choices))
    rows = [
        OutboxRow.pending(
            organization_id,
            conversation.conversation_id,
            outbox_id,
            reply.reply_id,
            body,
            file=file,
            choices=offered,
        )
        for outbox_id, (body, file, offered) in zip(committed.file_ids, parts, strict=True)
    ]
    recipient = Recipient(conversation.channel, conversation.contact_id)
    await deliver_in_order(deps.pool, deps.sender, rows, recipient)
