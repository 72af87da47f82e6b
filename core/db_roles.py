"""The database roles each process runs as and a check of its login.

Each process's pool switches to its group role (skillet_worker, skillet_webhook, skillet_api;
cross-org work: skillet_system) after login, so the statements it runs
have exactly that role's privileges. Row-level security holds against the process's own
SQL only when the login itself is unprivileged: a session may always RESET ROLE back to its
login user, and a superuser or the schema owner (a member of `skillet_system`) sees every
org. Production logs in as the users `skillet migrate` creates (worker/db_logins.py); a
development setup logging in as the owner is told so at startup.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import structlog

log = structlog.get_logger(__name__)

WORKER_ROLE = "skillet_worker"
WEBHOOK_ROLE = "skillet_webhook"
API_ROLE = "skillet_api"

# session_user: the login, whatever SET ROLE the pool's init ran since.
FETCH_LOGIN_PRIVILEGE = """
select r.rolname as login,
       case when r.rolsuper then 'superuser'
            when not exists (select 1 from pg_roles s where s.rolname = 'skillet_system')
                then null  -- not migrated yet
            when pg_has_role(r.oid, 'skillet_system', 'USAGE') then 'sees every org'
       end as privilege
from pg_roles r where r.rolname = session_user
"""


LOOPBACK_HOSTS = frozenset({"", "localhost", "127.0.0.1", "::1"})


def is_local_database(database_url: str) -> bool:
    """A server on this host (loopback or a Unix socket): a development setup's."""
    host = urlsplit(database_url).hostname or ""
    return host in LOOPBACK_HOSTS or host.startswith("/")


async def warn_if_privileged_login(pool: Any, group_role: str, database_url: str) -> str | None:
    """Log `db.privileged_login` when the pool's login could see every org (a warning, or
    only info for a server on this host: `skillet dev up`, the demo); the privilege."""
    async with pool.acquire() as conn:
        row = await conn.fetchrow(FETCH_LOGIN_PRIVILEGE)
    privilege: str | None = None if row is None else row["privilege"]
    if privilege is not None:
        emit = log.info if is_local_database(database_url) else log.warning
        emit(
            "db.privileged_login",
            login=row["login"] if row is not None else None,
            privilege=privilege,
            advice=f"log in as a member of {group_role} (docs/operations.md: database roles)",
        )
    return privilege
