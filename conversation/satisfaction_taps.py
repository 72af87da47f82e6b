"""The customer's answer to the satisfaction question, inside the turn: a tap (a button, or
on WAHA its number, already read as the choice by conversation.choice_reading) is recorded on
the open survey with whoever held the conversation and kept as context, never answered by the
agent; the text right after it is kept as its comment and answered as usual."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from conversation.context import Conversation
from conversation.queries import InboundRow
from conversation.satisfaction import ID_PREFIX, QUESTION, score_of
from conversation.satisfaction_queries import record_comment, record_tap
from core.tenancy import org_connection
from delivery.outbound_choices import MAX_READ_CHARS, Choice, marker_choice

log = structlog.get_logger(__name__)


def _tap(body: str) -> Choice | None:
    choice = marker_choice(body)
    return choice if choice is not None and choice.id.startswith(ID_PREFIX) else None


def follows_a_tap(history: Sequence[tuple[str, str]]) -> bool:
    """Whether the conversation's last message may be a satisfaction tap (the database says
    for sure): a button's mark, or on WAHA a short reply right after the question. Keeps the
    comment's statement off every other burst."""
    if not history or history[-1][0] != "inbound":
        return False
    body = history[-1][1]
    if _tap(body) is not None:
        return True
    return len(body) <= MAX_READ_CHARS and len(history) >= 2 and history[-2][1].startswith(QUESTION)


async def without_satisfaction_taps(
    pool: Any,
    conversation: Conversation,
    batch: Sequence[InboundRow],
    history: Sequence[tuple[str, str]],
) -> Sequence[InboundRow]:
    """`batch` without its satisfaction taps (recorded); the message right after a tap (in
    this burst, or the burst's first after a tap kept earlier) is offered as its comment."""
    first_follows = follows_a_tap(history)
    if not first_follows and not any(_tap(row.body) for row in batch):
        return batch
    kept: list[InboundRow] = []
    after_tap = first_follows
    async with org_connection(pool, conversation.organization_id) as conn:
        for row in batch:
            choice = _tap(row.body)
            if choice is not None:
                score = score_of(choice.id)
                if score is not None and await record_tap(conn, row.id, score, choice.title):
                    log.info("satisfaction.answered", score=score)
                after_tap = True
                continue
            if after_tap and await record_comment(conn, row.id):
                log.info("satisfaction.commented")
            after_tap = False
            kept.append(row)
    return kept
