"""The two kinds of WhatsApp connection a number can have; stored in `channels.kind`."""

from __future__ import annotations

from enum import StrEnum


class ChannelKind(StrEnum):
    """Stored in `channels.kind`; also the `kind` of a delivery.contract.Route."""

    CLOUD_API = "cloud_api"  # Meta WhatsApp Cloud API; address = phone_number_id
    WAHA = "waha"  # self-hosted WhatsApp HTTP API; address = session name
