"""The queue's public contract: job names, the payload model and job ids (ids only).

Below what uses it (the webhook, the CLI, the API, the jobs): it imports no engine.
"""

from __future__ import annotations

import hashlib
import uuid

from pydantic import BaseModel, ConfigDict, Field

from inbox.message import CHANNEL, MAX_MESSAGE_ID_CHARS

HANDLE_INBOUND_MESSAGE = "handle_inbound_message"
HANDLE_MESSAGE_ECHO = "handle_message_echo"


class ConversationPayload(BaseModel):
    """A job of `handle_inbound_message`: the message is stored before its job, which names
    its conversation (and the message that woke it) only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    inbound_id: uuid.UUID | None = None  # the message that woke it (None: a sweep)
    message_id: str | None = Field(default=None, max_length=MAX_MESSAGE_ID_CHARS)


def inbound_job_id(organization_id: uuid.UUID, message_id: str, channel: str = CHANNEL) -> str:
    """Same message -> same arq job id, so a redelivery while queued or running is a no-op."""
    digest = hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:32]
    return f"inbound:{organization_id}:{channel}:{digest}"


class EchoPayload(BaseModel):
    """A job of `handle_message_echo`: an echo of a message the business's number sent, stored
    (pending) before its job, to be settled as ours or the phone's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    organization_id: uuid.UUID
    echo_id: uuid.UUID


def echo_job_id(organization_id: uuid.UUID, external_id: str) -> str:
    """Same echo -> same arq job id, so a redelivery while it waits is a no-op."""
    digest = hashlib.sha256(external_id.encode("utf-8")).hexdigest()[:32]
    return f"echo:{organization_id}:{digest}"
