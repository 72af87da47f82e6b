"""People's passwords: argon2id hashes (argon2-cffi), computed off the event loop, a few at once.

A hash costs memory (64 MiB at argon2-cffi's default parameters) and CPU (tens of ms), so at
most `MAX_CONCURRENT_HASHES` run at once in the process; the rest wait their turn. A sign-in
for an e-mail nobody has verifies the password against a dummy hash, so an unknown e-mail costs
what a wrong password costs. A password is 10 to 256 characters; it is never stored, logged or
audited: only its hash leaves this module.
"""

from __future__ import annotations

import asyncio
import functools

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 256
MAX_CONCURRENT_HASHES = 2

_HASHER = PasswordHasher()  # argon2id, the library's recommended parameters
_SLOTS = asyncio.Semaphore(MAX_CONCURRENT_HASHES)


def password_problem(password: str) -> str | None:
    """The pt-BR reason a new password is refused, or None."""
    if len(password) < MIN_PASSWORD_CHARS or len(password) > MAX_PASSWORD_CHARS:
        return f"A senha precisa ter de {MIN_PASSWORD_CHARS} a {MAX_PASSWORD_CHARS} caracteres."
    if "\x00" in password:
        return "A senha não pode ter o caractere nulo."
    try:
        password.encode("utf-8")
    except UnicodeError:
        return "A senha tem um caractere que não pode ser lido; digite-a de novo."
    return None


@functools.cache
def _dummy_hash() -> str:
    # Made once, with the same parameters as every real hash.
    return _HASHER.hash("skillet dummy password, never anyone's")


def _verify(encoded: str, password: str) -> bool:
    try:
        return _HASHER.verify(encoded, password)
    except (VerificationError, InvalidHashError, UnicodeError):
        return False


async def hash_password(password: str) -> str:
    async with _SLOTS:
        return await asyncio.to_thread(_HASHER.hash, password)


async def verify_password(encoded: str | None, password: str) -> bool:
    """Whether `password` matches `encoded`; with no hash (unknown e-mail, no password set
    yet) the dummy is checked instead, at the same cost, and the answer is False."""
    # Bounded before the hash: a megabyte "password" costs no more than a long one.
    candidate = password[:MAX_PASSWORD_CHARS]
    async with _SLOTS:
        if encoded is None:
            await asyncio.to_thread(_verify, _dummy_hash(), candidate)
            return False
        return await asyncio.to_thread(_verify, encoded, candidate)


def hashes_running() -> int:
    """How many hashes run now (tests and metrics)."""
    return MAX_CONCURRENT_HASHES - _SLOTS._value
