"""SQL of the Painel: an org's daily rollups over a period of days, nothing else.

Every read names the org and a day range of at most 90 days and reads a rollup keyed by
(organization_id, day, ...): insight_daily holds the org's days (written by the triggers
skillet_insight_message and skillet_insight_conversation: at most 8 slot rows a day, summed
here); token_usage_daily and skill_activation_daily hold UTC days. Token rows, one per model a
day, stop at MAX_TOKEN_ROWS as api.usage_queries does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date
from typing import Any

import asyncpg

MAX_TOKEN_ROWS = 5_000  # 90 days x 55 models; past it the answer says `truncated`
TOP_SKILLS = 10


@dataclass(frozen=True)
class ConversationDay:
    day: date
    conversations: int
    with_person: int


@dataclass(frozen=True)
class QuarterCount:
    day: date
    quarter: int  # of the day, 0-95: 00:00-00:14 is 0
    messages: int


@dataclass(frozen=True)
class HandoffCount:
    day: date
    cause: str  # tool, customer, console, phone ('' when none was recorded)
    handoffs: int


@dataclass(frozen=True)
class ReplyBucket:
    day: date
    who: str  # agent | person
    bucket: int  # api.insight_series.bucket_of
    replies: int


@dataclass(frozen=True)
class TokenDay:
    day: date  # UTC
    provider: str
    model: str
    input_tokens: int  # cached ones included
    cache_read_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class SkillCount:
    name: str
    count: int


# $1 org, $2 first day, $3 last day (both included).
_PERIOD = "organization_id = $1 and day between $2::date and $3::date"

LIST_INSIGHT_DAYS = f"""
select day, conversations, with_person, handoffs_customer, handoffs_tool, handoffs_console,
       handoffs_phone, handoffs_other, customer_messages, agent_replies, person_first_replies
from insight_daily where {_PERIOD}
"""
CAUSES = ("customer", "tool", "console", "phone", "other")


@dataclass(frozen=True)
class DayCounts:
    """The org's counts of its days, its slots summed, as the series read them."""

    conversations: list[ConversationDay]
    quarters: list[QuarterCount]
    handoffs: list[HandoffCount]
    replies: list[ReplyBucket]


def _add(sums: dict[Any, int], key: Any, value: int) -> None:
    if value:
        sums[key] = sums.get(key, 0) + value


async def list_day_counts(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> DayCounts:
    rows = await conn.fetch(LIST_INSIGHT_DAYS, org, first, last)
    people: dict[date, tuple[int, int]] = {}
    quarters: dict[tuple[date, int], int] = {}
    handoffs: dict[tuple[date, str], int] = {}
    replies: dict[tuple[date, str, int], int] = {}
    for r in rows:
        day = r["day"]
        total, person = people.get(day, (0, 0))
        people[day] = (total + r["conversations"], person + r["with_person"])
        for cause in CAUSES:
            _add(handoffs, (day, "" if cause == "other" else cause), r[f"handoffs_{cause}"])
        for quarter, count in enumerate(r["customer_messages"]):
            _add(quarters, (day, quarter), count)
        for who, column in (("agent", "agent_replies"), ("person", "person_first_replies")):
            for bucket, count in enumerate(r[column]):
                _add(replies, (day, who, bucket), count)
    return DayCounts(
        [ConversationDay(d, t, p) for d, (t, p) in people.items()],
        [QuarterCount(d, q, n) for (d, q), n in quarters.items()],
        [HandoffCount(d, c, n) for (d, c), n in handoffs.items()],
        [ReplyBucket(d, w, b, n) for (d, w, b), n in replies.items()],
    )


LIST_TOKEN_DAYS = f"""
select day, provider, model, sum(input_tokens)::bigint as input_tokens,
       sum(cache_read_tokens)::bigint as cache_read_tokens,
       sum(output_tokens)::bigint as output_tokens
from token_usage_daily where {_PERIOD}
group by day, provider, model
order by day, provider, model
limit $4
"""

# Uses: what the turn injected (hard keyword and the classifier); searches without an answer:
# probe demand no skill served (the Skills page's "procura sem resposta").
LIST_TOP_SKILLS = f"""
select skill_name as name, sum(hard_count + intent_count)::bigint as count
from skill_activation_daily where {_PERIOD}
group by skill_name having sum(hard_count + intent_count) > 0
order by count desc, skill_name
limit $4
"""

LIST_TOP_UNANSWERED = f"""
select skill_name as name, sum(probe_count)::bigint as count
from skill_activation_daily where {_PERIOD}
group by skill_name having sum(probe_count) > 0
order by count desc, skill_name
limit $4
"""


async def list_token_days(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date, limit: int
) -> list[TokenDay]:
    rows = await conn.fetch(LIST_TOKEN_DAYS, org, first, last, limit)
    return [
        TokenDay(
            r["day"],
            r["provider"],
            r["model"],
            r["input_tokens"],
            r["cache_read_tokens"],
            r["output_tokens"],
        )
        for r in rows
    ]


async def list_top_skills(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> list[SkillCount]:
    rows = await conn.fetch(LIST_TOP_SKILLS, org, first, last, TOP_SKILLS)
    return [SkillCount(r["name"], r["count"]) for r in rows]


async def list_top_unanswered(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> list[SkillCount]:
    rows = await conn.fetch(LIST_TOP_UNANSWERED, org, first, last, TOP_SKILLS)
    return [SkillCount(r["name"], r["count"]) for r in rows]
