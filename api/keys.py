"""API keys as values: minting, reading a bearer header, hashing, and the role ladder. Pure.

A key reads `skt_<8 chars>_<secret>`: the first 12 characters are its prefix, shown in
listings and written as the actor of audit rows; the secret is 32 random bytes (base64url,
43 characters). Only sha256 of the whole key is stored. A password hash (bcrypt, scrypt)
is slow on purpose so that guessing a low-entropy password from a leaked hash is costly;
guessing 256 random bits is out of reach at any speed, and every request checks its key,
so a slow hash would only spend CPU (about 100 ms a request at bcrypt's usual cost).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import string
from dataclasses import dataclass
from enum import StrEnum

PREFIX_TAG = "skt_"
PREFIX_RANDOM_CHARS = 8
SECRET_BYTES = 32
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
_KEY_RE = re.compile(r"^(skt_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$")
_BEARER_RE = re.compile(r"^Bearer +(\S+) *$", re.IGNORECASE)


class Role(StrEnum):
    """Stored in `api_keys.role`; each role may do what the ones below it may."""

    VIEWER = "viewer"  # reads
    EDITOR = "editor"  # + install, uninstall, upload, pin, restore, decide drafts
    ADMIN = "admin"  # + keys, agents, numbers, settings, dead-letter requeue


_RANK = {Role.VIEWER: 0, Role.EDITOR: 1, Role.ADMIN: 2}


def role_allows(have: Role, need: Role) -> bool:
    return _RANK[have] >= _RANK[need]


@dataclass(frozen=True)
class MintedKey:
    key: str  # shown once, never stored
    prefix: str
    key_hash: bytes

    def __repr__(self) -> str:  # the key never reaches a log through repr
        return f"MintedKey(prefix={self.prefix!r})"


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode("ascii")).digest()


def mint_key() -> MintedKey:
    prefix = PREFIX_TAG + "".join(
        secrets.choice(_PREFIX_ALPHABET) for _ in range(PREFIX_RANDOM_CHARS)
    )
    key = f"{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
    return MintedKey(key=key, prefix=prefix, key_hash=hash_key(key))


def parse_key(text: str) -> tuple[str, bytes] | None:
    """(prefix, sha256) of a well-formed key; None for anything else."""
    match = _KEY_RE.match(text)
    if match is None:
        return None
    return match.group(1), hash_key(text)


def parse_bearer(header: str | None) -> tuple[str, bytes] | None:
    """(prefix, sha256) from an `Authorization: Bearer KEY` header; None if absent/malformed."""
    if not header:
        return None
    match = _BEARER_RE.match(header)
    return None if match is None else parse_key(match.group(1))
