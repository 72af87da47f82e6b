"""GET /v1/insights: the Painel's series for a period of the org's days (at most 90).

`from` and `to` are the org's dates (its business-hours time zone), both included; unset, the
30 days ending today. The reads run in one read-only snapshot (api.insight_queries), the
series are built by api.insight_series.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

import asyncpg
from aiohttp import web

from api.errors import ApiError
from api.insight_queries import (
    MAX_TOKEN_ROWS,
    list_conversation_days,
    list_handoff_counts,
    list_quarter_counts,
    list_reply_buckets,
    list_token_days,
    list_top_skills,
    list_top_unanswered,
)
from api.insight_series import InsightRows, insights_json
from api.routing import Principal, Reply, deps_of, org_db
from hours.change import business_hours
from hours.errors import TimezoneUnknown
from hours.queries import DEFAULT_TIMEZONE, fetch_business_hours
from hours.schedule import load_zone
from inbox.insight_queries import fold_insight_counts

MAX_DAYS = 90
DEFAULT_DAYS = 30
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits only


def _date(query: Mapping[str, str], name: str) -> date | None:
    text = query.get(name)
    if text is None:
        return None
    try:
        if _DATE_RE.fullmatch(text) is None:
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise ApiError(
            422,
            "invalid_date",
            f"`{name}` deve ser uma data AAAA-MM-DD (por exemplo 2026-12-01).",
            {"field": name},
        ) from None


def parse_period(query: Mapping[str, str], today: date) -> tuple[date, date]:
    """`?from=&to=`: the first and last day (422 invalid_date, from_after_to, range_too_long)."""
    first, last = _date(query, "from"), _date(query, "to")
    span = timedelta(days=DEFAULT_DAYS - 1)
    if first is None and last is None:
        last = today
    if last is None:
        assert first is not None
        last = max(first, min(first + span, today))
    if first is None:
        first = last - span
    if first > last:
        raise ApiError(
            422, "from_after_to", "`from` deve ser anterior ou igual a `to`.", {"field": "from"}
        )
    if (last - first).days + 1 > MAX_DAYS:
        raise ApiError(
            422,
            "range_too_long",
            f"O período vai de 1 a {MAX_DAYS} dias (`from` e `to` incluídos).",
            {"field": "from"},
        )
    return first, last


def org_today(now: datetime, timezone: str) -> date:
    try:
        return now.astimezone(load_zone(timezone)).date()
    except TimezoneUnknown:
        return now.astimezone(load_zone(DEFAULT_TIMEZONE)).date()


async def read_rows(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> InsightRows:
    tokens = await list_token_days(conn, org, first, last, MAX_TOKEN_ROWS + 1)
    return InsightRows(
        conversations=await list_conversation_days(conn, org, first, last),
        quarters=await list_quarter_counts(conn, org, first, last),
        handoffs=await list_handoff_counts(conn, org, first, last),
        replies=await list_reply_buckets(conn, org, first, last),
        tokens=tokens[:MAX_TOKEN_ROWS],
        top_skills=await list_top_skills(conn, org, first, last),
        top_unanswered=await list_top_unanswered(conn, org, first, last),
        tokens_truncated=len(tokens) > MAX_TOKEN_ROWS,
    )


async def insights_of(request: web.Request, principal: Principal) -> dict[str, Any]:
    deps = deps_of(request)
    org = principal.organization_id
    async with org_db(request, principal) as conn:
        # The counts stored so far, folded first: the reads below see them (read-only).
        await fold_insight_counts(conn, org)
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            stored = await fetch_business_hours(conn, org)
            today = org_today(deps.clock(), stored.timezone)
            first, last = parse_period(request.query, today)
            rows = await read_rows(conn, org, first, last)
    try:
        hours = business_hours(stored)
    except TimezoneUnknown:
        hours = None
    answer = insights_json(
        first, last, rows, prices=deps.model_prices, hours=hours, timezone=stored.timezone
    )
    return {**answer, "today": today.isoformat()}


async def get_insights_route(request: web.Request, principal: Principal) -> Reply:
    """The period's series, one value per day (`days`), and its top skills."""
    return await insights_of(request, principal)
