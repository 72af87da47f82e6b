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
from conversation.satisfaction import ID_PREFIX, score_of
from conversation.satisfaction_queries import record_comment, record_tap
from core.tenancy import org_connection
from delivery.outbound_choices import marker_choice

log = structlog.get_logger(__name__)


async def without_satisfaction_taps(
    pool: Any, conversation: Conversation, batch: Sequence[InboundRow]
) -> Sequence[InboundRow]:
    """`batch` without its satisfaction taps (recorded); the message after a tap (or the
    burst's first, whose tap came in an earlier burst) is offered as its comment."""
    kept: list[InboundRow] = []
    after_tap = True  # the burst's first message may follow a tap answered earlier
    async with org_connection(pool, conversation.organization_id) as conn:
        for row in batch:
            choice = marker_choice(row.body)
            score = None if choice is None else score_of(choice.id)
            if choice is not None and choice.id.startswith(ID_PREFIX):
                if score is not None and await record_tap(conn, row.id, score, choice.title):
                    log.info("satisfaction.answered", score=score)
                after_tap = True
                continue
            if after_tap and await record_comment(conn, row.id):
                log.info("satisfaction.commented")
            after_tap = False
            kept.append(row)
    return kept
