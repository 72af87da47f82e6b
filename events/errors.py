"""The events webhook's refusals.

SkilletError (core.errors)
└── EventsError
    ├── EventsUrlRefused      events_url_refused: not https, or a host that is (or resolves
    │                         to) a private, loopback, link-local, multicast or otherwise
    │                         non-global address (unless SKILLET_EVENTS_ALLOW_PRIVATE_URLS)
    └── EventsSecretInvalid   events_secret_invalid / events_secret_missing: the signing key
                              is too short or too long, or a URL is set without one
"""

from __future__ import annotations

from core.errors import SkilletError


class EventsError(SkilletError):
    code = "events_error"


class EventsUrlRefused(EventsError):
    code = "events_url_refused"


class EventsSecretInvalid(EventsError):
    code = "events_secret_invalid"
