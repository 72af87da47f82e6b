"""The inbound message's one shape, by the door it comes in (pure: no I/O).

A message reaches its row by one of two doors, each in one shape and with no copy between:
- `InboundText`: what a webhook delivery holds once parsed, addressed to one of our numbers
  by a sender's WhatsApp ids. Its org, answering agent and contact are not the webhook's to
  choose: the database derives them from the channel and the contact aliases while storing
  it (inbox.store.receive_inbound).
- `InboundMessage`: a message whose org and contact an operator names (`skillet enqueue`,
  the demo, a requeued dead letter of the previous release, tests), validated at that edge
  (inbox.store.store_inbound).
Either way the job that follows carries ids only (jobs.payloads.ConversationPayload).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from core.channel_kind import ChannelKind
from inbox.contacts import ContactIds

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

MAX_TEXT_CHARS: Final = 65_536  # a message's stored text (a description included)
MAX_MESSAGE_ID_CHARS: Final = 256  # the provider's id (wamid / WAHA id), the dedup key
CONTACT_ID_PATTERN: Final = r"^[0-9A-Za-z@._:+-]+$"
MAX_CONTACT_ID_CHARS: Final = 64
# What the provider says a quoted message said is kept up to this (the model reads its first
# 200 characters: conversation.quotes); a longer one is cut at the door.
MAX_QUOTE_CHARS: Final = 1_024
# A reaction is one emoji: a flag or a family is a few code points, never more than this.
MAX_EMOJI_CODE_POINTS: Final = 16
# Marks a quote ahead of the body in a burst read (skillet_read_burst): never stored in a body.
QUOTE_MARK: Final = "\ue000"
CHANNEL: Final = "whatsapp"  # the conversations' channel column: every number is WhatsApp


# Media kinds the worker fetches (stickers and videos stay descriptions, never fetched).
FETCHED_MEDIA_KINDS: Final = frozenset({"audio", "image", "document"})


@dataclass(frozen=True)
class InboundMedia:
    """What identifies a customer's media, as the webhook found it (the bytes are the
    worker's to fetch, inside the turn): Cloud API gives an id, WAHA a URL. Declared values
    are the sender's word only; the worker sniffs the bytes."""

    media_id: str | None = None  # Cloud API: GET {graph}/{media_id} gives the download URL
    url: str | None = None  # WAHA: where the session keeps the file
    declared_type: str | None = None  # the MIME type the provider states
    sha256: str | None = None  # as the provider states it (Cloud API: base64 or hex)
    caption: str | None = None
    file_name: str | None = None  # already sanitized (inbox.file_names)
    voice: bool = False  # a push-to-talk voice note (not an audio file)

    def as_json(self) -> dict[str, object]:
        """The row's `media` column: only what is set."""
        fields = {
            "id": self.media_id,
            "url": self.url,
            "type": self.declared_type,
            "sha256": self.sha256,
            "caption": self.caption,
            "file_name": self.file_name,
        }
        shown: dict[str, object] = {k: v for k, v in fields.items() if v is not None}
        if self.voice:
            shown["voice"] = True
        return shown


@dataclass(frozen=True)
class QuotedMessage:
    """The message a customer's message quotes (swiped to reply to): the provider's id of it,
    and what the provider says it said (WAHA gives it, the Cloud API does not)."""

    external_id: str
    text: str | None = None  # at most MAX_QUOTE_CHARS


@dataclass(frozen=True)
class InboundReaction:
    """A customer's reaction to one message of the conversation (never a message itself):
    `emoji` "" takes their reaction back, as WhatsApp does."""

    kind: ChannelKind
    address: str  # the receiving number: Cloud API phone_number_id / WAHA session
    message_id: str  # the reaction's own id
    sender: ContactIds
    target_id: str  # the provider's id of the message reacted to
    emoji: str  # at most MAX_EMOJI_CODE_POINTS code points; "" = taken back
    sent_at: datetime


@dataclass(frozen=True)
class InboundText:
    """One customer message, addressed to one of our numbers: typed text, or the description
    of what they sent (webhook.non_text)."""

    kind: ChannelKind
    address: str  # the receiving number: Cloud API phone_number_id / WAHA session
    message_id: str  # the provider's message id (wamid / WAHA id): the dedup key
    sender: ContactIds
    text: str
    sent_at: datetime
    message_kind: MessageKind = "text"
    media: InboundMedia | None = None  # set for a media kind the worker fetches
    # The sender's WhatsApp profile name, as kept (inbox.profile_names); None: not carried.
    contact_name: str | None = None
    quoted: QuotedMessage | None = None  # the message it quotes, if any


def storable_body(text: str) -> str | None:
    """The text as stored (no surrounding blanks, no NUL), or None when the queue contract
    refuses it: empty, or over MAX_TEXT_CHARS."""
    body = text.replace("\x00", "").replace(QUOTE_MARK, "").strip()
    return body if 0 < len(body) <= MAX_TEXT_CHARS else None


class InboundMessage(BaseModel):
    """One inbound WhatsApp message of a named org and contact, as stored (JSON-safe)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    organization_id: uuid.UUID
    channel: Literal["whatsapp"] = CHANNEL
    contact_id: str = Field(
        min_length=1, max_length=MAX_CONTACT_ID_CHARS, pattern=CONTACT_ID_PATTERN
    )
    message_id: str = Field(min_length=1, max_length=MAX_MESSAGE_ID_CHARS)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    sent_at: AwareDatetime
    kind: MessageKind = "text"
    # False: store it in the conversation (context for the next turn) without answering it.
    expects_reply: bool = True
    # The agent that answers the receiving number (None: the org's first agent).
    agent_id: uuid.UUID | None = None

    @field_validator("text", "message_id", mode="before")
    @classmethod
    def _without_nul(cls, value: object) -> object:
        # Postgres text cannot hold U+0000: a customer's NUL would fail every retry. QUOTE_MARK
        # is the burst read's own separator.
        if not isinstance(value, str):
            return value
        return value.replace("\x00", "").replace(QUOTE_MARK, "")
