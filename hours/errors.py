"""Refusals of an org's business hours (messages in pt-BR: a business person reads them).

SkilletError (core.errors)
└── HoursError                 business_hours_invalid: the weekly schedule does not parse
    ├── TimezoneUnknown        timezone_unknown: not an IANA time zone name
    ├── ClosedDatesInvalid     closed_dates_invalid: not a list of YYYY-MM-DD dates
    └── AfterHoursInvalid      after_hours_invalid: neither `answer` nor `away`
"""

from __future__ import annotations

from core.errors import SkilletError


class HoursError(SkilletError):
    code = "business_hours_invalid"


class TimezoneUnknown(HoursError):
    code = "timezone_unknown"


class ClosedDatesInvalid(HoursError):
    code = "closed_dates_invalid"


class AfterHoursInvalid(HoursError):
    code = "after_hours_invalid"
