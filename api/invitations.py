"""Invitation links as values: minting a token, hashing it, the link's URL. Pure.

A token is 32 random bytes (base64url, 43 characters: 256 bits); the database keeps only its
sha256, so a leaked table opens no invitation, and a link is looked up by that hash and then
compared in constant time. The token is in this module's answers and the invited person's link
only: never logged or audited.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

TOKEN_BYTES = 32
INVITATION_TTL_S = 7 * 24 * 60 * 60
INVITATION_PATH = "/console/convite"
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")


def mint_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def well_formed_token(token: str) -> bool:
    return _TOKEN_RE.match(token) is not None


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode("ascii")).digest()


def same_hash(stored: bytes, token: str) -> bool:
    return hmac.compare_digest(stored, hash_token(token))


def invitation_url(token: str, public_url: str | None) -> str:
    path = f"{INVITATION_PATH}/{token}"
    return path if not public_url else public_url.rstrip("/") + path
