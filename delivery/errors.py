"""How a send fails: the errors every sender raises and the outbox reads.

SkilletError (core.errors)
└── SendError             the outbound channel failed; the outbox row stays pending (retryable)
    └── SendParked        the channel cannot send until a person acts (a new access token):
                          the row stays pending and unclaimed, no retry, no dead letter
"""

from __future__ import annotations

from core.errors import SkilletError


class SendError(SkilletError):
    code = "send_failed"
    retryable = True


class SendParked(SendError):
    """Nothing went out and nothing will until the channel is mended (its token replaced):
    the caller releases the claim and leaves the row pending, for the channel's resume."""

    code = "channel_needs_token"
    retryable = False
