"""The route of what the org's model calls cost: tokens per UTC day, agent and model, and
totals per model over the window (api.usage_queries reads the daily rollup)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, timedelta

from aiohttp import web

from api.errors import invalid, not_found
from api.routing import Principal, Reply, deps_of, org_db
from api.usage_queries import (
    MAX_DAY_ROWS,
    MAX_MODEL_ROWS,
    fetch_agent_exists,
    list_model_totals,
    list_usage_days,
)

DEFAULT_DAYS = 30
MAX_DAYS = 90
_DAYS_RE = re.compile(r"[0-9]{1,3}")  # ASCII digits only: str.isdigit() also takes "²"


def parse_days(query: Mapping[str, str]) -> int:
    """`?days=`: how many UTC days, today included (1 to 90, default 30); 422 otherwise."""
    text = query.get("days")
    if text is None:
        return DEFAULT_DAYS
    if _DAYS_RE.fullmatch(text) is None or not 1 <= int(text) <= MAX_DAYS:
        raise invalid("invalid_days", f"`days` deve ser um número inteiro de 1 a {MAX_DAYS}.")
    return int(text)


def parse_agent_id(query: Mapping[str, str]) -> uuid.UUID | None:
    """`?agent_id=`: one agent's rows only (the id `GET /v1/agents` lists); 422 if not a UUID."""
    text = query.get("agent_id")
    if text is None:
        return None
    try:
        return uuid.UUID(text)
    except ValueError:
        raise invalid(
            "invalid_agent_id", "`agent_id` deve ser o id de um agente (um UUID)."
        ) from None


async def list_token_usage_route(request: web.Request, principal: Principal) -> Reply:
    """Rows newest day first; `truncated` when a read stopped at its row limit. Both reads
    run in one snapshot, so the totals are the sums of the rows (unless truncated)."""
    days = parse_days(request.query)
    agent_id = parse_agent_id(request.query)
    today = deps_of(request).clock().astimezone(UTC).date()
    org = principal.organization_id
    async with (
        org_db(request, principal) as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        if agent_id is not None and not await fetch_agent_exists(conn, org, agent_id):
            raise not_found("agent_not_found", "Esse agente não existe nesta organização.")
        rows = await list_usage_days(
            conn, org, today=today, days=days, agent_id=agent_id, limit=MAX_DAY_ROWS + 1
        )
        totals = await list_model_totals(
            conn, org, today=today, days=days, agent_id=agent_id, limit=MAX_MODEL_ROWS + 1
        )
    return {
        "today": today.isoformat(),
        "from": (today - timedelta(days=days - 1)).isoformat(),
        "days": days,
        "agent_id": None if agent_id is None else str(agent_id),
        "totals": [t.to_json() for t in totals[:MAX_MODEL_ROWS]],
        "items": [r.to_json() for r in rows[:MAX_DAY_ROWS]],
        "truncated": len(rows) > MAX_DAY_ROWS or len(totals) > MAX_MODEL_ROWS,
    }
