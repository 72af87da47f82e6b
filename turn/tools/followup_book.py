"""What `schedule_followup` asks of the conversation it runs in: a narrow port the agent turn
owns and the conversation implements (conversation.followups), so the agent turn never
reaches into the conversation's tables. The tool checks what it can alone (the time); the
book checks the rest under the conversation's lock and answers a refusal the model reads."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class FollowupRequest:
    organization_id: uuid.UUID  # the job row's, never the model's
    conversation_id: uuid.UUID
    at: datetime
    template: str
    params: tuple[str, ...]
    language: str | None
    max_followups: int  # scheduled and not yet sent, per conversation


@dataclass(frozen=True)
class FollowupRefused:
    code: str  # e.g. contact_opted_out, template_not_found, followup_cap_reached
    message: str  # pt-BR, says what to do


class FollowupBook(Protocol):
    async def schedule(self, request: FollowupRequest) -> FollowupRefused | str:
        """Store the follow-up and answer the confirmation for the model, or refuse."""
        ...
