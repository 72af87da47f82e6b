"""The database roles each process runs as (migration 0020) and a check of its login.

Each process's pool switches to its group role after login, so the statements it runs
have exactly that role's privileges. Row-level security holds against the process's own
SQL only when the login itself is unprivileged: a session may always RESET ROLE back to its
login user, and a superuser or the schema owner (a member of `skillet_system`) sees every
org. Production logs in as the users `skillet migrate` creates (worker/db_logins.py); a
development setup logging in as the owner is told so at startup.
"""

from __future__ import annotations

from typing import Any

import structlog

log = structlog.get_logger(__name__)

WORKER_ROLE = "skillet_worker"
WEBHOOK_ROLE = "skillet_webhook"
API_ROLE = "skillet_api"
SYSTEM_ROLE = "skillet_system"

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


async def warn_if_privileged_login(pool: Any, group_role: str) -> str | None:
    """Log `db.privileged_login` when the pool's login could see every org; the privilege."""
    async with pool.acquire() as conn:
        row = await conn.fetchrow(FETCH_LOGIN_PRIVILEGE)
    privilege: str | None = None if row is None else row["privilege"]
    if privilege is not None:
        log.warning(
            "db.privileged_login",
            login=row["login"] if row is not None else None,
            privilege=privilege,
            advice=f"log in as a member of {group_role} (README: database roles)",
        )
    return privilege
