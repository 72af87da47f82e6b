"""GET /v1/satisfaction: the customers' answers to the satisfaction question in a date range
of the org's days, and the score per person (whoever held the conversation) and per week."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web

from api.errors import invalid
from api.routing import Principal, Reply, deps_of, org_db
from conversation.satisfaction_queries import Answer, ScoreGroup, list_answers, list_score_groups
from hours.queries import fetch_business_hours

DEFAULT_DAYS = 30
MAX_DAYS = 90  # as the Painel's range
MAX_ANSWERS = 1000  # listed; the scores count every answer of the range


def _day(query: Mapping[str, str], name: str) -> date | None:
    text = query.get(name)
    if text is None:
        return None
    try:
        if len(text) != 10:
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise invalid(f"invalid_{name}", f"`{name}` deve ser uma data AAAA-MM-DD.") from None


def date_range(query: Mapping[str, str], today: date) -> tuple[date, date]:
    """`from` and `to`, both included (default: the last 30 days up to today); 422 when `to`
    is before `from` or the range is longer than MAX_DAYS."""
    end = _day(query, "to") or today
    start = _day(query, "from") or end - timedelta(days=DEFAULT_DAYS - 1)
    if end < start or (end - start).days + 1 > MAX_DAYS:
        raise invalid(
            "invalid_range", f"`from` deve vir antes de `to`, num intervalo de até {MAX_DAYS} dias."
        )
    return start, end


def _person(held_by: str, name: str | None) -> dict[str, Any] | None:
    if not held_by.startswith("person:"):
        return None
    return {"id": held_by.removeprefix("person:"), "name": name}


def _answer(a: Answer) -> dict[str, Any]:
    person = None if a.person_id is None else {"id": str(a.person_id), "name": a.person_name}
    return {
        "conversation_id": str(a.conversation_id),
        "held_by": a.held_by,
        "person": person,
        "score": a.score,
        "answer": a.answer,
        "comment": a.comment,
        "asked_at": a.asked_at.isoformat(),
        "answered_at": a.answered_at.isoformat(),
    }


def _group(g: ScoreGroup) -> dict[str, Any]:
    return {
        "answers": g.answers,
        "good": g.good,
        "ok": g.ok,
        "bad": g.bad,
        "score": g.score,
    }


async def list_satisfaction_route(request: web.Request, principal: Principal) -> Reply:
    org = principal.organization_id
    async with (
        org_db(request, principal) as conn,
        conn.transaction(isolation="repeatable_read", readonly=True),
    ):
        zone_name = (await fetch_business_hours(conn, org)).timezone
        zone = ZoneInfo(zone_name)
        today = deps_of(request).clock().astimezone(zone).date()
        start_day, end_day = date_range(request.query, today)
        start = datetime.combine(start_day, time(), zone)
        end = datetime.combine(end_day + timedelta(days=1), time(), zone)
        answers = await list_answers(conn, org, start, end, MAX_ANSWERS + 1)
        people, weeks = await list_score_groups(conn, org, start, end, zone_name)
    return {
        "from": start_day.isoformat(),
        "to": end_day.isoformat(),
        "timezone": zone_name,
        "items": [_answer(a) for a in answers[:MAX_ANSWERS]],
        "truncated": len(answers) > MAX_ANSWERS,
        "per_person": [
            {"held_by": g.key, "person": _person(g.key, g.person_name), **_group(g)} for g in people
        ],
        "per_week": [{"week": g.key, **_group(g)} for g in weeks],
    }
