"""The events webhook's refusals.

SkilletError (core.errors)
└── EventsError
    └── EventsSecretInvalid   events_secret_invalid / events_secret_missing: the signing key
                              is too short or too long, or a URL is set without one
"""

from __future__ import annotations

from core.errors import SkilletError


class EventsError(SkilletError):
    code = "events_error"


class EventsSecretInvalid(EventsError):
    code = "events_secret_invalid"
