"""The queue's public contract: job names and payload models (the webhook imports these)."""

from __future__ import annotations

import hashlib
import uuid
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from turn.holder import ConversationWakeup, InboundMessage

HANDLE_INBOUND_MESSAGE = "handle_inbound_message"


class ConversationPayload(BaseModel):
    """A job of `handle_inbound_message` since messages are stored before their job: ids
    only. (A payload of the older shape, `InboundMessagePayload`, is still accepted for one
    release: the job stores the message first.)"""

    model_config = ConfigDict(extra="forbid", frozen=True)

    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    inbound_id: uuid.UUID | None = None  # the message that woke it (None: a sweep)
    message_id: str | None = Field(default=None, max_length=256)

    def to_wakeup(self) -> ConversationWakeup:
        return ConversationWakeup(
            self.organization_id, self.conversation_id, self.inbound_id, self.message_id
        )


# What the customer sent. Everything but "text" reaches the model as a short description in
# `text` (e.g. "[imagem] legenda"): interactive/button replies carry the tapped option's title.
MessageKind = Literal[
    "text",
    "interactive",
    "button",
    "image",
    "audio",
    "video",
    "document",
    "sticker",
    "location",
    "contacts",
    "reaction",
    "unsupported",
]


class InboundMessagePayload(BaseModel):
    """One inbound WhatsApp message, as enqueued by the webhook (JSON, never pickle)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    organization_id: uuid.UUID
    channel: Literal["whatsapp"] = "whatsapp"
    contact_id: str = Field(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z@._:+-]+$")
    message_id: str = Field(min_length=1, max_length=256)
    text: str = Field(min_length=1, max_length=65_536)
    sent_at: AwareDatetime
    kind: MessageKind = "text"
    # False: store it in the conversation (context for the next turn) without answering it.
    expects_reply: bool = True
    # The agent that answers the receiving number (None: the org's first agent).
    agent_id: uuid.UUID | None = None

    @field_validator("text", "message_id", mode="before")
    @classmethod
    def _without_nul(cls, value: object) -> object:
        # Postgres text cannot hold U+0000: a customer's NUL would fail every retry.
        return value.replace("\x00", "") if isinstance(value, str) else value

    def to_message(self) -> InboundMessage:
        return InboundMessage(
            organization_id=self.organization_id,
            channel=self.channel,
            contact_id=self.contact_id,
            message_id=self.message_id,
            text=self.text,
            sent_at=self.sent_at,
            kind=self.kind,
            expects_reply=self.expects_reply,
            agent_id=self.agent_id,
        )

    @property
    def job_id(self) -> str:
        """Same message -> same arq job id, so a redelivery while queued or running is a no-op."""
        digest = hashlib.sha256(self.message_id.encode("utf-8")).hexdigest()[:32]
        return f"inbound:{self.organization_id}:{self.channel}:{digest}"
