"""The events webhook's signature: `X-Skillet-Signature: sha256=<hex HMAC-SHA256 of the raw
body under the org's events secret>`; the receiver recomputes it over the bytes it got."""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Skillet-Signature"
EVENT_HEADER = "X-Skillet-Event"
EVENT_ID_HEADER = "X-Skillet-Event-Id"
PREFIX = "sha256="


def sign(secret: str, body: bytes) -> str:
    """The header's value for `body`."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return PREFIX + digest


def signature_valid(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of `body` (constant-time; what a receiver runs)."""
    if header is None:
        return False
    return hmac.compare_digest(sign(secret, body).encode(), header.strip().encode())
