"""What the customer reads after hours (pt-BR), with the next opening filled in.

Pure. `when` is hours.opening.opening_phrase ("amanhã às 09:00", "segunda-feira às 09:00").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hours.opening import AfterHours, BusinessHours, is_open, next_opening, opening_phrase


def after_hours_ack(when: str) -> str:
    """A handoff's acknowledgement while the org is closed (instead of the agent's own)."""
    return (
        "Certo! Vou passar sua conversa para a nossa equipe. Estamos fora do horário de "
        f"atendimento agora: uma pessoa te responde {when}."
    )


def away_message(when: str) -> str:
    """The one message a conversation gets per closed period when the org chose `away`."""
    return (
        "Olá! Estamos fora do horário de atendimento agora. Voltamos "
        f"{when}; sua mensagem fica registrada aqui e seguimos a conversa a partir daí."
    )


@dataclass(frozen=True)
class ClosedNow:
    """The org is closed at the instant asked: until when, and how to say it."""

    opening: datetime | None  # the next opening (UTC): also the closed period's name
    when: str  # opening_phrase of it
    away: bool  # the org chose after-hours `away`


def closed_now(hours: BusinessHours | None, at: datetime) -> ClosedNow | None:
    """None when open (or no hours set: always open)."""
    if hours is None or is_open(hours, at):
        return None
    opening = next_opening(hours, at)
    return ClosedNow(
        opening, opening_phrase(opening, at, hours.zone), hours.after_hours is AfterHours.AWAY
    )
