"""Why a reply could not be delivered: the `code` of the SendError that marks its row failed.

SkilletError (core.errors)
└── SendError (turn.errors)             retryable=True: the row stays pending for a later try
    └── raised here with retryable=False and one of the SendFailure codes below: the outbox
        row is marked failed and `last_error` keeps "<code>: <reason>"
    └── SendParked (send_parked): `channel_needs_token`, the row waits, pending and unclaimed,
        for the channel's new token (or fails as outside_service_window when its window closes)
"""

from __future__ import annotations

from enum import StrEnum

from delivery.errors import SendError, SendParked


class SendFailure(StrEnum):
    REJECTED = "send_rejected"  # the provider refused the message (4xx): a retry cannot help
    UNAUTHORIZED = "channel_unauthorized"  # token / API key refused (401, 403)
    NOT_CONFIGURED = "channel_not_configured"  # no token, key or sender for this channel kind
    NO_CHANNEL = "no_channel"  # the org has no channel the reply could leave from
    OUTSIDE_WINDOW = "outside_service_window"  # >24 h since the customer's last message
    NEEDS_TOKEN = "channel_needs_token"  # Meta refused the number's token (190): sends wait
    RETRIES_EXHAUSTED = "send_retries_exhausted"  # still 429/5xx/unreachable after the bound
    DELIVERY_UNKNOWN = "delivery_unknown"  # sent, but the answer was lost: not sent again


def send_failed(code: SendFailure, reason: str) -> SendError:
    """A permanent delivery failure: the caller marks the outbox row failed with it."""
    return SendError(reason, code=code.value, retryable=False)


def send_parked(reason: str) -> SendParked:
    """The channel's token was refused: the row waits for a new one (see SendParked)."""
    return SendParked(reason, code=SendFailure.NEEDS_TOKEN.value)
