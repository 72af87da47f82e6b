"""What the agent says around a handoff, and how people's messages read in its history.

Pure: values in, values out. The texts are the agent's settings (agents.handoff_ack,
agents.handoff_wait_notice); these are the pt-BR defaults used when a setting is null.

A person's (or the owner's phone's) message reaches the model as an assistant turn, since
it was the business speaking, prefixed with PERSON_MARK so the model tells it apart from its
own words: it must neither repeat what the person said nor contradict it, and the mark must
not leak into its replies (the prefix is in brackets, like a speaker label in a transcript).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HANDOFF_ACK_DEFAULT = (
    "Certo! Vou chamar uma pessoa da nossa equipe para continuar o atendimento. "
    "Já já alguém te responde por aqui."
)
HANDOFF_WAIT_NOTICE_DEFAULT = (
    "Ainda estamos chamando alguém da equipe para falar com você. "
    "Obrigado pela paciência, já já te respondemos por aqui."
)
# A customer's request for a person, as the conversation's recorded reason.
CUSTOMER_REASON = "o cliente pediu para falar com uma pessoa"

PERSON_MARK = "[atendente]"
PHONE_MARK = "[atendente, pelo celular da empresa]"


@dataclass(frozen=True)
class HistoryTurn:
    role: Literal["user", "assistant"]
    content: str


def history_turn(direction: str, body: str) -> HistoryTurn:
    """One history row (skillet_read_burst's direction: 'inbound', 'outbound' for the agent,
    'person' or 'phone') as the model reads it."""
    if direction == "inbound":
        return HistoryTurn("user", body)
    if direction == "person":
        return HistoryTurn("assistant", f"{PERSON_MARK} {body}")
    if direction == "phone":
        return HistoryTurn("assistant", f"{PHONE_MARK} {body}")
    return HistoryTurn("assistant", body)
