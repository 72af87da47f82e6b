"""Customer messages grouped into bursts as the turn answered them (pure).

The turn answers the open messages of a conversation together, in one reply, and marks each
with that reply (`answered_by`): messages with the same `answered_by` are one burst. Messages
no reply marked (a person's conversation, or still open) are grouped by conversation, each run
of them with no answered message of that conversation between. A burst is matched as the turn
matches it (turn.model_input.burst_text), and named by its newest message. Bursts come out
newest first.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from rehearsal.replay import Burst
from turn.model_input import burst_text


@dataclass(frozen=True)
class CustomerMessage:
    id: uuid.UUID
    conversation_id: uuid.UUID
    answered_by: uuid.UUID | None
    body: str
    at: datetime


def group_bursts(messages: Sequence[CustomerMessage]) -> list[Burst]:
    """`messages`, ordered by conversation then arrival (as rehearsal.queries reads them), as
    bursts, newest first (module docstring)."""
    groups: dict[object, list[CustomerMessage]] = {}
    run = 0
    previous: CustomerMessage | None = None
    for message in messages:
        if message.answered_by is not None:
            key: object = message.answered_by
        else:
            same_run = (
                previous is not None
                and previous.answered_by is None
                and previous.conversation_id == message.conversation_id
            )
            run += not same_run
            key = run
        group = groups.get(key)
        if group is None:
            groups[key] = [message]
        else:
            group.append(message)
        previous = message
    bursts = sorted(groups.values(), key=lambda g: g[-1].at, reverse=True)
    return [Burst(str(g[-1].id), burst_text([m.body for m in g])) for g in bursts]
