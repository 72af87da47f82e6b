"""Errors of a turn.

SkilletError (skills.errors)
├── UnknownOrganization   the job names an org that does not exist (not retryable)
├── ModelError            the model provider failed (retryable)
└── SendError             the outbound channel failed; the outbox row stays pending (retryable)
"""

from __future__ import annotations

from skills.errors import SkilletError


class UnknownOrganization(SkilletError):
    code = "unknown_organization"
    retryable = False


class ModelError(SkilletError):
    code = "model_unavailable"
    retryable = True


class SendError(SkilletError):
    code = "send_failed"
    retryable = True
