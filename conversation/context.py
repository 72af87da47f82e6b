"""The conversation a burst is answered in: its org, customer, agent and model, and the
holder's lease token the reply commit checks."""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class Conversation:
    organization_id: uuid.UUID
    channel: str
    contact_id: str
    conversation_id: uuid.UUID
    persona: str
    # The org's agent and its model (provider None: the worker's default model).
    agent_id: uuid.UUID | None = None
    model_provider: str | None = None
    model_name: str | None = None
    lease_token: uuid.UUID | None = None  # the holder's: the reply commit checks it
    # The customer's WhatsApp profile name (inbox.profile_names): their own data, given to
    # the model beside their messages, never as an instruction.
    contact_name: str | None = None
