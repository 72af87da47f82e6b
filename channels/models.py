"""What a channel is: one connected WhatsApp number (Cloud API phone number or WAHA session)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from core.channel_kind import ChannelKind


class ChannelStatus(StrEnum):
    """Stored in `channels.status`."""

    ACTIVE = "active"
    NEEDS_TOKEN = "needs_token"  # Meta refused its token (code 190): sends wait for a new one


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
    waba_id: str | None = None  # the number's WhatsApp Business Account (Cloud API)
    waha_base_url: str | None = None  # its own WAHA server (None: the shared one)
    status: ChannelStatus = ChannelStatus.ACTIVE
    # The last four characters of its own token / WAHA API key (None: it uses the global one):
    # all any listing shows of them.
    access_token_last4: str | None = None
    waha_api_key_last4: str | None = None

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
            "waba_id": self.waba_id,
            "waha_base_url": self.waha_base_url,
            "status": self.status.value,
            "access_token": masked(self.access_token_last4),
            "waha_api_key": masked(self.waha_api_key_last4),
        }


def masked(last4: str | None) -> str | None:
    """How a listing shows a secret of the channel's own: its last four characters only."""
    return None if last4 is None else f"****{last4}"


def last4(secret: str) -> str:
    """What is kept of a secret in the channel's row (a short one shows nothing of itself)."""
    return secret[-4:] if len(secret) >= 16 else ""
