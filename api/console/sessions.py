"""Console sessions and CSRF tokens as values: minting, hashing, deriving, comparing. Pure.

A session is 32 random bytes (base64url, 43 characters) in an HttpOnly cookie; the database
keeps only their sha256, so a leaked table opens no session (the same reasoning as API keys:
256 random bits need no slow hash). The CSRF token of a session is HMAC-SHA256 of a fixed
label keyed by the session secret: only a page of this origin, which the server renders with
the cookie in hand, can know it, and nothing more has to be stored. The sign-in form has no
session yet: its token is a random value sent both as a short-lived cookie and as a form
field (double submit), which a page of another origin can neither read nor set.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

SECRET_BYTES = 32
SESSION_TTL_S = 12 * 60 * 60  # a working day; signing in again takes one paste
SIGN_IN_TTL_S = 30 * 60  # the sign-in form's token
SESSION_COOKIE = "skillet_sessao"
SIGN_IN_COOKIE = "skillet_entrada"
CSRF_FIELD = "csrf"
_SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")
_CSRF_LABEL = b"skillet console csrf v1"


def mint_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def well_formed(secret: str | None) -> bool:
    return secret is not None and _SECRET_RE.match(secret) is not None


def hash_secret(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("ascii")).digest()


def csrf_token(secret: str) -> str:
    return hmac.new(secret.encode("ascii"), _CSRF_LABEL, hashlib.sha256).hexdigest()


def tokens_match(expected: str, given: str | None) -> bool:
    """Constant-time comparison; an absent or empty token never matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))
