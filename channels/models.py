"""What a channel is: one connected WhatsApp number (Cloud API phone number or WAHA session)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ChannelKind(StrEnum):
    """Stored in `channels.kind`; also the `kind` of a turn.outbox.Route."""

    CLOUD_API = "cloud_api"  # Meta WhatsApp Cloud API; address = phone_number_id
    WAHA = "waha"  # self-hosted WhatsApp HTTP API; address = session name


@dataclass(frozen=True)
class Channel:
    id: uuid.UUID
    organization_id: uuid.UUID
    agent_id: uuid.UUID | None
    kind: ChannelKind
    address: str
    display_phone: str | None
    created_at: datetime
    # Answer images, audios, locations, ... (typed texts are always answered).
    reply_to_non_text: bool = False

    def as_json(self) -> dict[str, str | bool | None]:
        return {
            "id": str(self.id),
            "organization_id": str(self.organization_id),
            "agent_id": None if self.agent_id is None else str(self.agent_id),
            "kind": self.kind.value,
            "address": self.address,
            "display_phone": self.display_phone,
            "created_at": self.created_at.isoformat(),
            "reply_to_non_text": self.reply_to_non_text,
        }
