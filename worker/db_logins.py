"""The login users the processes connect as: created or updated by `skillet migrate`.

Each is `skillet_<process>_login`, a member of its group role (core.db_roles) and nothing
else: it owns nothing, creates nothing, and sees an org's rows only under a binding that
carries the org's proof, an HMAC under the tenant secret (core.tenant_key),
which no login can read: SQL written or injected in its session can set any org, but opens
none it cannot prove, and the turn's binding functions refuse such an org. What the login
can still do across orgs is what its group's narrow SECURITY DEFINER functions do (the
worker's sweeps, telemetry, dead letters and curator pass).

The password never reaches the server in clear text (statement logs, pg_stat_activity): its
SCRAM-SHA-256 verifier is computed here, as `psql`'s \\password does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Mapping

import asyncpg
from pydantic import SecretStr

from core.db_roles import API_ROLE, WEBHOOK_ROLE, WORKER_ROLE
from core.errors import SkilletError

GROUP_ROLES = {"worker": WORKER_ROLE, "webhook": WEBHOOK_ROLE, "api": API_ROLE}
SCRAM_ITERATIONS = 4096  # Postgres' default scram_iterations
SCRAM_SALT_BYTES = 16
MIN_PASSWORD_CHARS = 16


class LoginPasswordRejected(SkilletError):
    code = "login_password_rejected"


def login_name(process: str) -> str:
    return f"skillet_{process}_login"


def scram_sha256_verifier(
    password: str, *, salt: bytes | None = None, iterations: int = SCRAM_ITERATIONS
) -> str:
    """What Postgres stores for `password` (RFC 5802/7677): `SCRAM-SHA-256$i:salt$stored:server`.

    ASCII only: Postgres prepares other passwords with SASLprep, which this does not
    reproduce (`check_passwords` refuses them first).
    """
    salt = os.urandom(SCRAM_SALT_BYTES) if salt is None else salt
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.digest(salted, b"Server Key", "sha256")

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def check_passwords(passwords: Mapping[str, SecretStr]) -> None:
    """Raise LoginPasswordRejected for the first unusable one (before anything changes)."""
    for process, password in passwords.items():
        if process not in GROUP_ROLES:
            raise LoginPasswordRejected(f"no process named {process!r}")
        _check_password(process, password.get_secret_value())


def _check_password(process: str, password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise LoginPasswordRejected(
            f"SKILLET_{process.upper()}_DB_PASSWORD: at least {MIN_PASSWORD_CHARS} characters"
        )
    if not (password.isascii() and password.isprintable()):
        raise LoginPasswordRejected(
            f"SKILLET_{process.upper()}_DB_PASSWORD: printable ASCII only "
            "(hex from `openssl rand -hex 24` needs no escaping in a URL)"
        )


# format(): identifiers and literals quoted by the server (CREATE/ALTER ROLE take no parameters).
BUILD_CREATE_LOGIN = """
select format('create role %I login inherit nosuperuser nocreatedb nocreaterole
               noreplication nobypassrls password %L', $1::text, $2::text)
"""
BUILD_ALTER_LOGIN = """
select format('alter role %I login inherit nosuperuser nocreatedb nocreaterole
               noreplication nobypassrls password %L', $1::text, $2::text)
"""
BUILD_GRANT_GROUP = "select format('grant %I to %I', $1::text, $2::text)"
FETCH_ROLE_EXISTS = "select exists (select 1 from pg_roles where rolname = $1)"


async def sync_login_users(
    conn: asyncpg.Connection, passwords: Mapping[str, SecretStr]
) -> list[str]:
    """Create or update the login user of each process given a password (process ->
    password); their names. Every password is checked before any role changes."""
    check_passwords(passwords)
    names = []
    async with conn.transaction():
        for process, password in passwords.items():
            name = login_name(process)
            verifier = scram_sha256_verifier(password.get_secret_value())
            exists = await conn.fetchval(FETCH_ROLE_EXISTS, name)
            build = BUILD_ALTER_LOGIN if exists else BUILD_CREATE_LOGIN
            await conn.execute(await conn.fetchval(build, name, verifier))
            await conn.execute(await conn.fetchval(BUILD_GRANT_GROUP, GROUP_ROLES[process], name))
            names.append(name)
    return names
