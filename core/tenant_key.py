"""The secret behind a tenant binding: what makes an org binding unforgeable
(skillet_org_proof_valid checks it).

A session sees an org's rows only when `skillet.organization_proof` holds the hex
HMAC-SHA256 of the org id under the tenant secret, which Postgres keeps where no login role
can read it. A statement injected into a process's connection can set the org setting, but
cannot compute another org's proof: only the processes hold the secret.

Where the secret comes from: SKILLET_TENANT_SECRET (the same value for `skillet migrate`,
which stores it, and for every process); unset, a process whose login may read the stored
secret (the owner's login of development, tests and the demo) takes it from the database.
An unprivileged login without it, or with another one, stops the process at startup.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid

import asyncpg

from core.errors import SkilletError

MIN_SECRET_CHARS = 32
# Proofs kept per key (a worker binds the same orgs turn after turn): one HMAC per org, not
# one per statement; past this many orgs the memo starts over.
MAX_REMEMBERED_PROOFS = 4096
# Any org id works for the startup check; a fixed one keeps it one statement.
PROBE_ORG = uuid.UUID(int=0)

FETCH_STORED_SECRET = "select secret from skillet_private.tenant_binding_secret"
FETCH_PROOF_VALID = "select skillet_org_proof_valid($1, $2)"
STORE_SECRET = """
update skillet_private.tenant_binding_secret set secret = $1, updated_at = now()
where secret is distinct from $1
returning 1
"""


class TenantSecretError(SkilletError):
    code = "tenant_secret_invalid"


class TenantSecretMissing(TenantSecretError):
    code = "tenant_secret_missing"


class TenantSecretMismatch(TenantSecretError):
    code = "tenant_secret_mismatch"


class TenantKey:
    """The secret, kept out of reprs; computes each org's proof."""

    __slots__ = ("_proofs", "_secret")

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._proofs: dict[str, str] = {}

    @classmethod
    def from_setting(cls, secret: str) -> TenantKey:
        if len(secret) < MIN_SECRET_CHARS:
            raise TenantSecretError(
                f"SKILLET_TENANT_SECRET: pelo menos {MIN_SECRET_CHARS} caracteres "
                "(gere um com `openssl rand -hex 32`)"
            )
        return cls(secret.encode("utf-8"))

    def proof(self, organization_id: uuid.UUID | str) -> str:
        org = str(organization_id)
        known = self._proofs.get(org)
        if known is None:
            known = hmac.new(self._secret, org.encode(), hashlib.sha256).hexdigest()
            if len(self._proofs) >= MAX_REMEMBERED_PROOFS:
                self._proofs.clear()
            self._proofs[org] = known
        return known

    def __repr__(self) -> str:
        return "TenantKey(***)"


async def resolve_tenant_key(conn: asyncpg.Connection, secret: str | None) -> TenantKey:
    """The key a process binds with, checked against the database's; raises
    TenantSecretMissing / TenantSecretMismatch with what to fix. `conn` is the process's own
    login, before any SET ROLE."""
    if secret is None:
        try:
            stored: bytes | None = await conn.fetchval(FETCH_STORED_SECRET)
        except asyncpg.InsufficientPrivilegeError:
            raise TenantSecretMissing(
                "SKILLET_TENANT_SECRET não definido: com um login sem privilégios (skillet_*_login)"
                " o processo precisa do mesmo segredo que `skillet migrate` gravou no banco"
            ) from None
        except asyncpg.UndefinedTableError:
            raise _not_migrated() from None
        if stored is None:
            raise TenantSecretMissing(
                "o banco não tem segredo de tenant: rode `skillet migrate` de novo"
            )
        return TenantKey(bytes(stored))
    key = TenantKey.from_setting(secret)
    try:
        valid = await conn.fetchval(FETCH_PROOF_VALID, str(PROBE_ORG), key.proof(PROBE_ORG))
    except asyncpg.UndefinedFunctionError:
        raise _not_migrated() from None
    if not valid:
        raise TenantSecretMismatch(
            "SKILLET_TENANT_SECRET difere do segredo gravado no banco: use o mesmo valor nos"
            " processos e em `skillet migrate` (que o grava)"
        )
    return key


def _not_migrated() -> TenantSecretError:
    return TenantSecretError("o banco não tem a migração 0025: rode `skillet migrate`")


async def store_tenant_secret(conn: asyncpg.Connection, secret: str) -> bool:
    """`skillet migrate`: make SKILLET_TENANT_SECRET the database's (as the owner); whether
    it changed. Processes still holding the previous secret stop binding: restart them."""
    TenantKey.from_setting(secret)  # refuses a short one
    return await conn.fetchval(STORE_SECRET, secret.encode("utf-8")) is not None
