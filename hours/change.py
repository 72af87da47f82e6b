"""Change an org's business hours: checked (pure), then written and audited (the caller's
transaction). Shared by `skillet orgs set`, `PATCH /v1/settings/hours` and the console.

`check_change` parses everything given before a connection is taken, so an unparseable
schedule, an unknown zone or a bad date writes nothing; `apply_change` writes one row and one
audit row per setting that changed (`settings.business_hours`, `settings.timezone`,
`settings.closed_dates`, `settings.after_hours`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

import asyncpg

from core.audit import AuditEntry, insert_audit
from hours.errors import AfterHoursInvalid
from hours.opening import AfterHours, BusinessHours, is_open, next_opening
from hours.queries import StoredHours, fetch_business_hours, upsert_business_hours
from hours.schedule import load_zone, parse_closed_dates, parse_schedule, render_schedule


@dataclass(frozen=True)
class HoursChange:
    """What to set; None leaves a setting as it is, "" clears the schedule or closed days."""

    schedule: str | None = None
    timezone: str | None = None
    closed_dates: str | None = None
    after_hours: str | None = None

    @property
    def empty(self) -> bool:
        return all(
            v is None for v in (self.schedule, self.timezone, self.closed_dates, self.after_hours)
        )


@dataclass(frozen=True)
class CheckedChange:
    """A change as it will be written (canonical schedule text, sorted dates)."""

    schedule: tuple[str | None] | None = None  # (None,): clear it
    timezone: str | None = None
    closed_dates: tuple[date, ...] | None = None
    after_hours: AfterHours | None = None


@dataclass(frozen=True)
class HoursChanged:
    hours: StoredHours
    previous: StoredHours
    changed: list[str] = field(default_factory=list)  # human lines, as the CLI prints them


def check_change(change: HoursChange) -> CheckedChange:
    """The change as it will be written, or an HoursError saying what to fix."""
    schedule: tuple[str | None] | None = None
    if change.schedule is not None:
        text = change.schedule.strip()
        schedule = (render_schedule(parse_schedule(text)) if text else None,)
    zone = None if change.timezone is None else load_zone(change.timezone).key
    closed = None if change.closed_dates is None else parse_closed_dates(change.closed_dates)
    after: AfterHours | None = None
    if change.after_hours is not None:
        try:
            after = AfterHours(change.after_hours.strip())
        except ValueError:
            raise AfterHoursInvalid(
                "fora do horário, o agente pode responder normalmente (answer) ou mandar um "
                "aviso de ausência (away)"
            ) from None
    return CheckedChange(schedule, zone, closed, after)


def _lines(before: StoredHours, after: StoredHours) -> list[tuple[str, Any, Any]]:
    pairs = [
        ("business_hours", before.schedule, after.schedule),
        ("timezone", before.timezone, after.timezone),
        ("closed_dates", _dates(before.closed_dates), _dates(after.closed_dates)),
        ("after_hours", before.after_hours, after.after_hours),
    ]
    return [(name, old, new) for name, old, new in pairs if old != new]


def _dates(dates: tuple[date, ...]) -> list[str]:
    return [d.isoformat() for d in dates]


async def apply_change(
    conn: asyncpg.Connection, organization_id: uuid.UUID, change: CheckedChange, actor: str
) -> HoursChanged:
    """Write a checked change and its audit rows, in the caller's transaction."""
    previous = await fetch_business_hours(conn, organization_id)
    wanted = replace(
        previous,
        schedule=previous.schedule if change.schedule is None else change.schedule[0],
        timezone=change.timezone or previous.timezone,
        closed_dates=previous.closed_dates if change.closed_dates is None else change.closed_dates,
        after_hours=previous.after_hours if change.after_hours is None else change.after_hours,
    )
    differences = _lines(previous, wanted)
    if not differences:
        return HoursChanged(previous, previous)
    stored = await upsert_business_hours(conn, organization_id, wanted)
    changed = []
    for name, old, new in differences:
        detail = {"from": old, "to": new}
        await insert_audit(
            conn, AuditEntry(organization_id, actor, f"settings.{name}", detail=detail)
        )
        shown = (",".join(v) or "-" if isinstance(v, list) else v or "-" for v in (old, new))
        changed.append(f"{name}: {' -> '.join(shown)}")
    return HoursChanged(stored, previous, changed)


def business_hours(stored: StoredHours) -> BusinessHours | None:
    """The value hours.opening decides with; None when no schedule is set (always open).
    A stored row was checked when written, so it parses."""
    if stored.schedule is None:
        return None
    return BusinessHours(
        parse_schedule(stored.schedule),
        load_zone(stored.timezone),
        frozenset(stored.closed_dates),
        AfterHours(stored.after_hours),
    )


def hours_json(stored: StoredHours, now: datetime) -> dict[str, Any]:
    """As the API and the CLI show them, with whether the org is open at `now`."""
    value = business_hours(stored)
    opened = value is None or is_open(value, now)
    opening = None if value is None or opened else next_opening(value, now)
    return {
        "business_hours": stored.schedule,
        "timezone": stored.timezone,
        "closed_dates": _dates(stored.closed_dates),
        "after_hours": stored.after_hours,
        "open_now": opened,
        "next_opening": None if opening is None else opening.isoformat(),
    }
