"""Every time the console shows, in the org's time zone (its business hours' zone), said as
a person scanning a list says it: "há 3 min", "hoje às 14:05", "ontem às 14:05",
"amanhã às 09:00", "28/11 às 09:30", "28/11/2025 às 09:30" (pure: the instant is a value).

The API keeps ISO 8601 in UTC; only the console turns it into words, through `Clock`, built
once per page or poll from the org's zone (api.console.org_clock) and handed to every
template (the `when` filter) and to the Atendimento views.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hours.queries import DEFAULT_TIMEZONE

RELATIVE_MINUTES = 60  # under an hour ago: "há N min"; after that, the clock time


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Clock:
    """The instant a page is drawn and the org's zone: what every time on it is said from."""

    now: datetime = field(default_factory=_now)
    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo(DEFAULT_TIMEZONE))

    def local(self, value: datetime) -> datetime:
        return value.astimezone(self.zone)

    def moment(self, value: str | datetime | None) -> str:
        """`value` (ISO text or an aware datetime) as a person reads it from `now`."""
        if value is None or value == "":
            return "—"
        at = datetime.fromisoformat(value) if isinstance(value, str) else value
        if at.tzinfo is None:  # the API's times are UTC
            at = at.replace(tzinfo=UTC)
        minutes = (self.now - at).total_seconds() / 60
        if 0 <= minutes < 1:
            return "agora há pouco"
        if 1 <= minutes < RELATIVE_MINUTES:
            return f"há {int(minutes)} min"
        return self.day_and_time(at)

    def day_and_time(self, at: datetime) -> str:
        """ "hoje às 14:05", "ontem às ...", "amanhã às ...", or the date (its year when it
        is not this year's) and the time."""
        local, today = self.local(at), self.local(self.now).date()
        clock = local.strftime("%H:%M")
        named = {today: "hoje", today - timedelta(days=1): "ontem"}
        named[today + timedelta(days=1)] = "amanhã"
        if local.date() in named:
            return f"{named[local.date()]} às {clock}"
        return f"{self.date_text(local.date())} às {clock}"

    def date_text(self, day: date) -> str:
        this_year = self.local(self.now).year
        return day.strftime("%d/%m" if day.year == this_year else "%d/%m/%Y")

    def time_of_day(self) -> str:
        """The clock's own time in the org's zone, for "Atualizado às 14:05:09"."""
        return self.local(self.now).strftime("%H:%M:%S")
