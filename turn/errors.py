"""Errors of a turn.

SkilletError (core.errors)
├── UnknownOrganization   a message names an org that does not exist (not retryable;
│                         inbox.errors, re-exported here)
├── ModelError            the model provider failed: unreachable, 429/5xx after the retries
│   │                     of one call (retryable: the job runs again later)
│   ├── ModelNotConfigured    an agent names a provider without credentials, an unknown
│   │                         provider or no model name (not retryable; says what to set)
│   ├── ModelRequestRejected  the provider refused the request: 4xx other than 408/409/429,
│   │                         401/403 as `model_unauthorized` (not retryable)
│   └── ModelResponseInvalid  a 2xx answer that is not the provider's wire format, or a
│                             stream over its byte/event caps (not retryable)
"""

from __future__ import annotations

from core.errors import SkilletError
from inbox.errors import UnknownOrganization

__all__ = [
    "ModelError",
    "ModelNotConfigured",
    "ModelRequestRejected",
    "ModelResponseInvalid",
    "UnknownOrganization",
]


class ModelError(SkilletError):
    code = "model_unavailable"
    retryable = True


class ModelNotConfigured(ModelError):
    code = "model_not_configured"
    retryable = False


class ModelRequestRejected(ModelError):
    code = "model_request_rejected"
    retryable = False


class ModelResponseInvalid(ModelError):
    code = "model_response_invalid"
    retryable = False
