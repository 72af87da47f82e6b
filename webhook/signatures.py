"""Webhook signatures: HMAC of the raw body, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac


def hmac_hex(key: str, body: bytes, algorithm: str) -> str:
    return hmac.new(key.encode("utf-8"), body, getattr(hashlib, algorithm)).hexdigest()


def cloud_api_signature_ok(app_secret: str, body: bytes, header: str | None) -> bool:
    """Meta: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`."""
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac_hex(app_secret, body, "sha256")
    return hmac.compare_digest(expected.encode(), header[len("sha256=") :].strip().lower().encode())


def waha_signature_ok(
    hmac_key: str, body: bytes, header: str | None, algorithm_header: str | None
) -> bool:
    """WAHA: `X-Webhook-Hmac: <hex HMAC-SHA512(key, raw body)>`, algorithm header `sha512`."""
    if not header or (algorithm_header and algorithm_header.strip().lower() != "sha512"):
        return False
    expected = hmac_hex(hmac_key, body, "sha512")
    return hmac.compare_digest(expected.encode(), header.strip().lower().encode())
