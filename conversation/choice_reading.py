"""A customer's reply read as a choice: on WAHA the choices go as a numbered text, so a reply
of just the number (or the exact title) is that choice while the choices are the business's
last message; it reaches the model as a tap does, `[escolheu: «Sexta 14h» (id: s1)]`.

What was offered is read from the history the turn already has (the message that carried the
choices keeps them in its stored body: delivery.outbound_choices.history_note), so reading
costs no statement (pure).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from conversation.queries import InboundRow
from delivery.outbound_choices import OutboundChoices, chosen_marker, offered_in, read_choice


def last_offered(history: Sequence[tuple[str, str]]) -> OutboundChoices | None:
    """The choices of the business's last message (history oldest first), if it offered any."""
    for direction, body in reversed(history):
        if direction != "inbound":
            return offered_in(body)
    return None


def read_choices(
    batch: Sequence[InboundRow], history: Sequence[tuple[str, str]]
) -> Sequence[InboundRow]:
    """`batch` with each reply that names one of the offered choices written as the tap (the
    stored message keeps the customer's words)."""
    offered = last_offered(history)
    if offered is None:
        return batch
    read: list[InboundRow] = []
    for row in batch:
        choice = read_choice(row.body, offered)
        read.append(
            row
            if choice is None
            else dataclasses.replace(row, body=chosen_marker(choice.title, choice.id))
        )
    return read
