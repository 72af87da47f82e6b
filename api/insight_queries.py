"""SQL of the Painel: an org's daily rollups over a period of days, nothing else.

Every read names the org and a day range of at most 90 days and reads a rollup keyed by
(organization_id, day, ...): conversation_daily, customer_message_daily, handoff_daily and
reply_time_daily hold the org's days (written by the triggers skillet_insight_message and
skillet_insight_conversation, a message's counts through insight_pending, folded by the
reader first: inbox.insight_queries); token_usage_daily and skill_activation_daily hold UTC
days. Each answer has at most a fixed number of rows per day (8 slots are summed here),
except the token rows, one per model a day, stopped at MAX_TOKEN_ROWS as api.usage_queries
does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date

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

LIST_CONVERSATION_DAYS = f"""
select day, sum(conversations)::bigint as conversations, sum(with_person)::bigint as with_person
from conversation_daily where {_PERIOD}
group by day
"""

LIST_QUARTER_COUNTS = f"""
select day, quarter, sum(messages)::bigint as messages
from customer_message_daily where {_PERIOD}
group by day, quarter
"""

LIST_HANDOFF_COUNTS = f"""
select day, cause, sum(handoffs)::bigint as handoffs
from handoff_daily where {_PERIOD}
group by day, cause
"""

LIST_REPLY_BUCKETS = f"""
select day, who, bucket, sum(replies)::bigint as replies
from reply_time_daily where {_PERIOD}
group by day, who, bucket
"""

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


async def list_conversation_days(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> list[ConversationDay]:
    rows = await conn.fetch(LIST_CONVERSATION_DAYS, org, first, last)
    return [ConversationDay(r["day"], r["conversations"], r["with_person"]) for r in rows]


async def list_quarter_counts(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> list[QuarterCount]:
    rows = await conn.fetch(LIST_QUARTER_COUNTS, org, first, last)
    return [QuarterCount(r["day"], r["quarter"], r["messages"]) for r in rows]


async def list_handoff_counts(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> list[HandoffCount]:
    rows = await conn.fetch(LIST_HANDOFF_COUNTS, org, first, last)
    return [HandoffCount(r["day"], r["cause"], r["handoffs"]) for r in rows]


async def list_reply_buckets(
    conn: asyncpg.Connection, org: uuid.UUID, first: date, last: date
) -> list[ReplyBucket]:
    rows = await conn.fetch(LIST_REPLY_BUCKETS, org, first, last)
    return [ReplyBucket(r["day"], r["who"], r["bucket"], r["replies"]) for r in rows]


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
